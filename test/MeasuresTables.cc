#include "MeasuresTables.h"

#include <casacore/casa/Containers/Record.h>
#include <casacore/tables/Tables/ScaColDesc.h>
#include <casacore/tables/Tables/ScalarColumn.h>
#include <casacore/tables/Tables/SetupNewTab.h>
#include <casacore/tables/Tables/Table.h>
#include <casacore/tables/Tables/TableDesc.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "rtcp/MeasuresData.h"
#include "rtcp/SampleTime.h"

namespace rtcp::test {
namespace {

const char* kIersColumns[] = {"MJD", "x",  "y",     "dUT1", "LOD",   "dPsi", "dEps",
                              "Dx",  "Dy", "DdUT1", "DLOD", "DdPsi", "DdEps"};

/// casacore's VS_DATE format: 2025/07/07/00:00.
std::string versionDate(double mjd) {
  std::string text = formatUtc(mjdSecondsToUnix(mjd * 86400.0));  // YYYY-MM-DD HH:MM:SS
  text = text.substr(0, 16);
  text[4] = text[7] = text[10] = '/';
  return text;
}

void defineVersion(casacore::Table& table, double mjd, const std::string& type) {
  casacore::TableRecord& keywords = table.rwKeywordSet();
  keywords.define("VS_DATE", versionDate(mjd));
  keywords.define("VS_CREATE", versionDate(mjd));
  keywords.define("VS_VERSION", "0001.0001");
  keywords.define("VS_TYPE", type);
}

void writeIersTable(const std::string& path, const MeasuresTableDates& d) {
  casacore::TableDesc desc;
  for (const char* column : kIersColumns)
    desc.addColumn(casacore::ScalarColumnDesc<double>(column));
  casacore::SetupNewTable setup(path, desc, casacore::Table::New);
  const auto days = casacore::rownr_t(d.endMjd - d.firstMjd + 1);
  casacore::Table table(setup, days);
  casacore::ScalarColumn<double> mjd(table, "MJD");
  for (casacore::rownr_t i = 0; i < days; ++i) {
    mjd.put(i, d.firstMjd + double(i));
    for (size_t c = 1; c < std::size(kIersColumns); ++c)
      casacore::ScalarColumn<double>(table, kIersColumns[c]).put(i, 0.0);
  }
  defineVersion(table, d.endMjd, "IERS Earth orientation, all zero (rtcp test)");
  table.rwKeywordSet().define("MJD0", d.firstMjd - 1);
  table.rwKeywordSet().define("dMJD", 1.0);
  table.tableInfo().setType("IERS");
  table.tableInfo().setSubType("IERSeop97");
  table.flushTableInfo();
}

}  // namespace

double mjdNow() {
  const double unix =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return unixToMjdSeconds(unix) / 86400.0;
}

std::string writeMeasuresTables(const std::string& dir, const MeasuresTableDates& dates) {
  const std::string geodetic = dir + "/geodetic";
  std::filesystem::create_directories(geodetic);
  writeIersTable(geodetic + "/IERSeop97", dates);
  writeIersTable(geodetic + "/IERSpredict", dates);
  const MeasuresTable leap = findMeasuresTables().leapSeconds;
  if (!leap.found())
    throw std::runtime_error("no TAI_UTC table to copy (install casacore-data-tai-utc)");
  casacore::Table(leap.path).deepCopy(geodetic + "/TAI_UTC", casacore::Table::New);
  casacore::Table copy(geodetic + "/TAI_UTC", casacore::Table::Update);
  copy.rwKeywordSet().define("VS_DATE", versionDate(dates.leapVersionMjd));
  const std::string casarc = dir + "/casarc";
  std::ofstream(casarc) << "measures.directory: " << dir << "\n";
  return casarc;
}

int runWithCasarc(const std::string& casarc, const std::string& command) {
  const char* old = std::getenv("CASARCFILES");
  const std::string saved = old ? old : "";
  setenv("CASARCFILES", casarc.c_str(), 1);
  const int status = std::system(command.c_str());
  if (old)
    setenv("CASARCFILES", saved.c_str(), 1);
  else
    unsetenv("CASARCFILES");
  return status;
}

}  // namespace rtcp::test
