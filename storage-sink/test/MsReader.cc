#include "MsReader.h"

#include <casacore/casa/Arrays/Cube.h>
#include <casacore/casa/Arrays/Matrix.h>
#include <casacore/ms/MeasurementSets/MSColumns.h>
#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/TaQL/TableParse.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/ScalarColumn.h>

namespace rtcp::storage::test {
namespace {

template <typename Out, typename In>
std::vector<Out> flatten(const casacore::Array<In>& array) {
  std::vector<Out> out;
  out.reserve(array.size());
  for (auto it = array.begin(); it != array.end(); ++it) out.push_back(Out(*it));
  return out;
}

std::vector<std::array<double, 3>> triples(const casacore::Matrix<double>& m) {
  std::vector<std::array<double, 3>> out(m.ncolumn());
  for (size_t i = 0; i < m.ncolumn(); ++i) out[i] = {m(0, i), m(1, i), m(2, i)};
  return out;
}

}  // namespace

MsContents readMeasurementSet(const std::string& path, bool withUvwJ2000) {
  casacore::MeasurementSet ms(path);
  casacore::MSMainColumns columns(ms);
  MsContents c;
  c.nrRows = ms.nrow();
  if (c.nrRows) {
    c.data = flatten<std::complex<float>>(
        casacore::ArrayColumn<casacore::Complex>(ms, "DATA").getColumn());
    c.flag = flatten<uint8_t>(columns.flag().getColumn());
    c.weightSpectrum = flatten<float>(columns.weightSpectrum().getColumn());
    c.weight = flatten<float>(columns.weight().getColumn());
    c.sigma = flatten<float>(columns.sigma().getColumn());
    c.flagRow = flatten<uint8_t>(columns.flagRow().getColumn());
    c.time = flatten<double>(columns.time().getColumn());
    c.timeCentroid = flatten<double>(columns.timeCentroid().getColumn());
    c.interval = flatten<double>(columns.interval().getColumn());
    c.exposure = flatten<double>(columns.exposure().getColumn());
    c.antenna1 = flatten<int>(columns.antenna1().getColumn());
    c.antenna2 = flatten<int>(columns.antenna2().getColumn());
    c.uvw = triples(columns.uvw().getColumn());
    for (const char* id : {"FEED1", "FEED2", "DATA_DESC_ID", "FIELD_ID", "ARRAY_ID",
                           "OBSERVATION_ID", "PROCESSOR_ID", "SCAN_NUMBER", "STATE_ID"})
      c.ids.push_back(flatten<int>(casacore::ScalarColumn<int>(ms, id).getColumn()));
    if (withUvwJ2000) {
      casacore::Table result =
          casacore::tableCommand("SELECT mscal.uvwj2000() AS U FROM $1", ms).table();
      c.uvwJ2000 = triples(casacore::ArrayColumn<double>(result, "U").getColumn());
    }
  }
  casacore::MSAntennaColumns antennas(ms.antenna());
  for (size_t i = 0; i < ms.antenna().nrow(); ++i) {
    c.antennaNames.push_back(antennas.name()(i));
    const casacore::Vector<double> p = antennas.position()(i);
    c.antennaPositions.push_back({p[0], p[1], p[2]});
    c.dishDiameters.push_back(antennas.dishDiameter()(i));
  }
  casacore::MSSpWindowColumns window(ms.spectralWindow());
  c.channelFrequencies = flatten<double>(window.chanFreq()(0));
  c.channelWidths = flatten<double>(window.chanWidth()(0));
  c.nrChannels = int(c.channelFrequencies.size());
  c.refFrequency = window.refFrequency()(0);
  c.totalBandwidth = window.totalBandwidth()(0);
  c.corrTypes = flatten<int>(casacore::MSPolarizationColumns(ms.polarization()).corrType()(0));
  const casacore::Matrix<double> direction = casacore::MSFieldColumns(ms.field()).phaseDir()(0);
  c.phaseDirection = {direction(0, 0), direction(1, 0)};
  c.telescope = casacore::MSObservationColumns(ms.observation()).telescopeName()(0);
  c.observationId = std::stoll(
      casacore::ScalarColumn<casacore::String>(ms.observation(), "LOFAR_OBSERVATION_ID")(0));
  c.nrFeeds = ms.feed().nrow();
  for (const casacore::String& line : casacore::MSHistoryColumns(ms.history()).appParams()(0))
    c.historyParams.push_back(line);
  return c;
}

size_t taqlCount(const std::string& command) {
  return casacore::tableCommand(command).table().nrow();
}

}  // namespace rtcp::storage::test
