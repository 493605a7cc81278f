#pragma once
/// \file MeasurementSetDescription.h
/// Everything a subband's MeasurementSet records about the observation, in plain types:
/// the narrow boundary between storage-sink's ingest side and its casacore side.

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace rtcp::storage {

struct MsStation {
  std::string name;
  std::array<double, 3> position{};  ///< ITRF metres
  double dishDiameter = 0;           ///< metres
  std::string type;                  ///< CORE, REMOTE, INTERNATIONAL or SUPERSTATION
};

struct MeasurementSetDescription {
  int64_t observationId = 0;
  double gridStartUnix = 0;        ///< time of the observation's first sample (Unix s, UTC)
  double integrationSeconds = 1;   ///< integration i spans gridStart + [i, i + 1) * this
  double startTime = 0, stopTime = 0;  ///< Observation.startTime / stopTime (Unix s)
  std::vector<MsStation> stations;     ///< output stations, in correlator order
  std::array<double, 3> referencePosition{};  ///< array reference (ITRF metres)
  double ra = 0, dec = 0;              ///< phase centre (J2000, radians)
  int subbandNumber = 0;
  double subbandFrequency = 0;         ///< Hz
  std::vector<double> channelFrequencies;  ///< Hz, [channel]
  double channelWidth = 0;             ///< Hz
  std::string parsetText;              ///< for HISTORY

  int nrChannels() const { return int(channelFrequencies.size()); }
  int nrStations() const { return int(stations.size()); }
};

}  // namespace rtcp::storage
