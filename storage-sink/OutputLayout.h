#pragma once
/// \file OutputLayout.h
/// What this storage-sink writes: the stations of the correlated output (after
/// superstation merging) and the MeasurementSets of the subbands stored on this host.

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"

namespace rtcp::storage {

/// A station as it appears in the correlated output and the MS's ANTENNA table.
struct OutputStation {
  std::string name;
  std::array<double, 3> position{};  ///< ITRF metres
};

/// The output stations, as the correlator orders them: the observation's stations in
/// order, except that the members of OLAP.tiedArrayStationNames (two or more) become one
/// superstation at the place of the first member listed there (list [A B C D], members
/// [C A] -> [B C+A D]), named after the members joined by '+', at the centroid of their
/// positions (where the coherent sum's phase centre lies).
std::vector<OutputStation> outputStations(const ObservationSettings& settings);

/// Stations the correlated output holds: nrStations - |tiedArray| + 1 (2+ members).
int nrOutputStations(const ObservationSettings& settings);

/// One MeasurementSet to write.
struct SubbandOutput {
  int subbandIndex = 0;   ///< index in settings.subbands
  int subbandNumber = 0;  ///< e.g. 150
  std::string path;       ///< DIR/filename (relative DIRs as given)
};

/// True for localhost, 127.0.0.1, ::1, this machine's host name (short or full) and "".
bool isLocalHost(const std::string& host);

/// Whether an output location's host is this sink's: exactly `locationHost` when given
/// (storage-sink --location-host: on a host of an observation across hosts, "localhost"
/// in the parset is the launching host, not this one), else any name of this host
/// (isLocalHost).
bool storedHere(const std::string& host, const std::string& locationHost);

/// The subbands whose output location lies on this host (every subband when all; with a
/// locationHost, those whose location names it); none without correlated output.
std::vector<SubbandOutput> localOutputs(const ObservationSettings& settings, bool all,
                                        const std::string& locationHost = "");

}  // namespace rtcp::storage

#include "MeasurementSetDescription.h"

namespace rtcp::storage {

/// The MS's antennas (the output stations) with the station fields behind each.
std::vector<MsAntenna> msAntennas(const ObservationSettings& settings);

/// LOFAR_ANTENNA_FIELD and LOFAR_STATION of the observation, from the shipped tables
/// (their warnings logged): computed once, shared by every MS.
std::shared_ptr<const LofarAntennaFields> describeAntennaFields(
    const ObservationSettings& settings);

/// What the MS of one subband (index in settings.subbands) records; antennaFields from
/// describeAntennaFields (computed here when null).
MeasurementSetDescription describeMeasurementSet(
    const ObservationSettings& settings, int subbandIndex,
    std::shared_ptr<const LofarAntennaFields> antennaFields = nullptr);

}  // namespace rtcp::storage
