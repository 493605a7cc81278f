#pragma once
// Reads a MeasurementSet back into plain vectors for the tests.

#include <array>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

namespace rtcp::storage::test {

struct MsContents {
  size_t nrRows = 0;
  int nrChannels = 0;
  std::vector<std::complex<float>> data;                       // [row][channel][pol]
  std::vector<uint8_t> flag;                                   // [row][channel][pol]
  std::vector<float> weightSpectrum;                           // [row][channel][pol]
  std::vector<float> weight;                                   // [row][pol]
  std::vector<float> sigma;                                    // [row][pol]
  std::vector<uint8_t> flagRow;                                // [row]
  std::vector<double> time, timeCentroid, interval, exposure;  // [row]
  std::vector<int> antenna1, antenna2;                         // [row]
  /// FEED1, FEED2, DATA_DESC_ID, FIELD_ID, ARRAY_ID, OBSERVATION_ID, PROCESSOR_ID,
  /// SCAN_NUMBER, STATE_ID: [column][row]
  std::vector<std::vector<int>> ids;
  std::vector<std::array<double, 3>> uvw;       // [row]
  std::vector<std::array<double, 3>> uvwJ2000;  // [row], TaQL mscal.uvwj2000 (when asked)
  std::vector<std::string> antennaNames;
  std::vector<std::array<double, 3>> antennaPositions;
  std::vector<double> dishDiameters;
  std::vector<double> channelFrequencies, channelWidths;
  double refFrequency = 0, totalBandwidth = 0;
  std::vector<int> corrTypes;
  std::array<double, 2> phaseDirection{};
  std::string telescope;
  int64_t observationId = 0;
  size_t nrFeeds = 0, nrHistoryParams = 0;
  std::vector<std::string> historyParams;
};

MsContents readMeasurementSet(const std::string& path, bool withUvwJ2000 = false);

/// Runs a TaQL command (as the `taql` tool would) and returns the number of rows it selects.
size_t taqlCount(const std::string& command);

}  // namespace rtcp::storage::test
