#include "rtcp/MeasuresData.h"

#include <casacore/casa/Logging/LogFilter.h>
#include <casacore/casa/Logging/LogSink.h>
#include <casacore/casa/Quanta/MVTime.h>
#include <casacore/measures/Measures/MeasIERS.h>
#include <casacore/tables/Tables/ScalarColumn.h>
#include <casacore/tables/Tables/Table.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <sstream>

#include "rtcp/SampleTime.h"

namespace rtcp {
namespace {

constexpr double kLeapSecondNoticeDays = 180;  // casacore's MeasTable::dUTC staleness rule

/// Holds casacore's log messages below SEVERE back while it searches for tables (it warns
/// about every table it cannot find; rtcp says so itself, in its own words).
class QuietCasacoreLog {
 public:
  QuietCasacoreLog() : old_(casacore::LogSink::globalSink().filter().clone()) {
    casacore::LogSink::globalSink().filter(casacore::LogFilter(casacore::LogMessage::SEVERE));
  }
  ~QuietCasacoreLog() { casacore::LogSink::globalSink().filter(*old_); }
  QuietCasacoreLog(const QuietCasacoreLog&) = delete;
  QuietCasacoreLog& operator=(const QuietCasacoreLog&) = delete;

 private:
  std::unique_ptr<casacore::LogFilterInterface> old_;
};

std::string formatMjd(double mjd) {
  return formatUtc(mjdSecondsToUnix(mjd * 86400.0)).substr(0, 10);
}

/// Reads one table as casacore would find it; the dates are those of its MJD column.
MeasuresTable readTable(const std::string& name, const std::string& resource) {
  MeasuresTable out;
  out.name = name;
  try {
    casacore::Table table;
    {
      QuietCasacoreLog quiet;
      if (!casacore::MeasIERS::findTab(table, nullptr, resource, "geodetic", name)) return out;
    }
    const casacore::Vector<double> mjd = casacore::ScalarColumn<double>(table, "MJD").getColumn();
    if (mjd.empty()) return out;
    out.path = table.tableName();
    out.firstMjd = mjd[0];
    out.endMjd = mjd[mjd.size() - 1];  // casacore uses a day only when the next one is there
    if (table.keywordSet().isDefined("VS_DATE"))
      out.versionDate = table.keywordSet().asString("VS_DATE");
  } catch (const std::exception&) {
    out.path.clear();  // unreadable: as good as absent
  }
  return out;
}

double versionMjd(const MeasuresTable& table) {
  casacore::Quantity date;
  if (!casacore::MVTime::read(date, table.versionDate)) return 0;
  return casacore::MVTime(date).day();
}

/// Where casacore looked for a table it did not find.
std::string searched(const MeasuresCoverage& all) {
  const std::string where =
      all.leapSeconds.found() ? std::filesystem::path(all.leapSeconds.path).parent_path().string() +
                                    " (where TAI_UTC is)"
                              : "its data directory";
  return "casacore looks in the measures.directory of ~/.casarc, then in " + where +
         "; Debian 12 packages no IERS tables";
}

std::string describe(const MeasuresTable& table) {
  return table.name + " (" + table.path + "): " + formatMjd(table.firstMjd) + " to " +
         formatMjd(table.endMjd);
}

std::string describeEarthOrientation(const MeasuresCoverage& c) {
  if (!c.measured.found() && !c.predicted.found())
    return "no IERS tables (IERSeop97, IERSpredict) found: " + searched(c);
  std::string text;
  for (const MeasuresTable* table : {&c.measured, &c.predicted})
    text += (text.empty() ? "" : "; ") +
            (table->found() ? describe(*table) : table->name + ": not found");
  return text;
}

}  // namespace

bool MeasuresCoverage::coversEarthOrientation(double startMjd, double stopMjd) const {
  for (double day = std::floor(startMjd); day <= std::floor(stopMjd); ++day)
    if (!measured.covers(day) && !predicted.covers(day)) return false;
  return true;
}

MeasuresCoverage findMeasuresTables() {
  MeasuresCoverage coverage;
  coverage.measured = readTable("IERSeop97", "measures.ierseop97.directory");
  coverage.predicted = readTable("IERSpredict", "measures.ierspredict.directory");
  coverage.leapSeconds = readTable("TAI_UTC", "measures.tai_utc.directory");
  if (coverage.leapSeconds.found())  // known leap seconds: up to the table's date + notice
    coverage.leapSeconds.endMjd = versionMjd(coverage.leapSeconds) + kLeapSecondNoticeDays;
  return coverage;
}

std::string measuresProblem(const MeasuresCoverage& c, double startUnix, double stopUnix) {
  const double start = unixToMjdSeconds(startUnix) / 86400.0;
  const double stop = unixToMjdSeconds(stopUnix) / 86400.0;
  const bool earth = c.coversEarthOrientation(start, stop);
  const bool leap = c.coversLeapSeconds(stop);
  if (earth && leap) return "";
  std::ostringstream text;
  text << "casacore's measures data do not cover the observation (" << formatUtc(startUnix)
       << " to " << formatUtc(stopUnix) << " UTC):";
  if (!earth)
    text << "\n  - Earth orientation: " << describeEarthOrientation(c)
         << ". For these dates casacore takes UT1-UTC and polar motion as 0, so delays and UVWs "
            "are computed for an Earth rotated up to 0.9 s (14 arcsec) away from where it was.";
  if (!leap)
    text << "\n  - Leap seconds: "
         << (c.leapSeconds.found() ? describe(c.leapSeconds) : "TAI_UTC not found: " + searched(c))
         << (c.leapSeconds.found() ? " (dated " + c.leapSeconds.versionDate + ", valid 180 days)"
                                   : "")
         << ". A leap second after its date would put every time 1 s off.";
  text << "\n  To fix: unpack ASTRON's ftp://ftp.astron.nl/outgoing/Measures/WSRT_Measures.ztar "
          "(updated daily; geodetic/IERSeop97, IERSpredict, TAI_UTC, ...) into a directory D and "
          "put the line 'measures.directory: D' into ~/.casarc; for the leap seconds alone, "
          "upgrade Debian's tzdata and run casacore-update-tai_utc (package "
          "casacore-data-tai-utc). See 'Measures data' in observe/README.md.";
  return text.str();
}

}  // namespace rtcp
