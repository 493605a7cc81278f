#pragma once
/// \file MeasurementSetDescription.h
/// Everything a subband's MeasurementSet records about the observation, in plain types:
/// the narrow boundary between storage-sink's ingest side and its casacore side.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "LofarAntennaFields.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::storage {

struct MsStation {
  std::string name;
  std::array<double, 3> position{};  ///< ITRF metres (also LOFAR_PHASE_REFERENCE)
  double dishDiameter = 0;           ///< metres
  std::string type;                  ///< CORE, REMOTE, INTERNATIONAL or SUPERSTATION
  int lofarStationId = 0;            ///< row of LOFAR_STATION
  bool operator==(const MsStation&) const = default;
};

/// The direction of the stations' analog (HBA tile) beam: LOFAR_TILE_BEAM_DIR.
struct TileBeam {
  std::string directionType = "J2000";  ///< a casacore direction type
  double angle1 = 0, angle2 = 0;        ///< radians
  bool operator==(const TileBeam&) const = default;
};

struct MeasurementSetDescription {
  int64_t observationId = 0;
  /// The run that writes the MS (ObservationSecret::runId): the main table's keyword
  /// RTCP_RUN_ID; a reopened MS of another run is refused ("": not checked).
  std::string runId;
  double gridStartUnix = 0;       ///< time of the observation's first sample (Unix s, UTC)
  double integrationSeconds = 1;  ///< integration i spans gridStart + [i, i + 1) * this
  /// A channel's samples in one integration when none is lost (spectra per block x blocks
  /// per integration): WEIGHT_SPECTRUM = valid samples / this, as LofarStMan's maxNrSample.
  int64_t samplesPerIntegration = 0;
  double startTime = 0, stopTime = 0;         ///< Observation.startTime / stopTime (Unix s)
  std::vector<MsStation> stations;            ///< output stations, in correlator order
  std::array<double, 3> referencePosition{};  ///< array reference (ITRF metres)
  double ra = 0, dec = 0;               ///< phase centre: Observation.Beam[b].angle1/2 (radians)
  std::string directionType = "J2000";  ///< its frame: J2000, AZELGEO, SUN, MOON, ...
  int beam = 0;                         ///< the beam (SAP) of this subband: FIELD NAME BEAM_<beam>
  TileBeam tileBeam;                    ///< Observation.AnaBeam[0], else the beam itself
  std::vector<std::string> targets;     ///< Observation.Beam[beam].target, else {BEAM_<beam>}
  int subbandIndex = 0;  ///< in the observation's subband list: SPECTRAL_WINDOW SB-<index>
  int subbandNumber = 0;
  double subbandFrequency = 0;             ///< Hz
  std::vector<double> channelFrequencies;  ///< Hz, [channel]
  double channelWidth = 0;                 ///< Hz
  std::string parsetText;                  ///< for HISTORY

  // The OBSERVATION table's LOFAR columns.
  CampaignSettings campaign;           ///< project, title, PI, co-investigators, contact
  std::string antennaSet, bandFilter;  ///< Observation.antennaSet / bandFilter
  int bitsPerSample = 16;
  double clockHz = 200e6;
  double minFrequency = 0, maxFrequency = 0;  ///< Hz, of the observation's subbands (COBALT's
                                              ///< rule: centres less half a subband when C > 1)
  /// LOFAR_ANTENNA_FIELD, LOFAR_STATION: one per observation, shared by its MSs.
  std::shared_ptr<const LofarAntennaFields> antennaFields;

  int nrChannels() const { return int(channelFrequencies.size()); }
  int nrStations() const { return int(stations.size()); }
  /// Every field equal (antennaFields: the same object). MeasurementSetTemplate.h copies an MS
  /// only to MSs whose descriptions are equal but for the values it rewrites.
  bool operator==(const MeasurementSetDescription&) const = default;
};

/// The FIELD table's NAME of a beam (SAP): BEAM_<beam>, as LOFAR writes it.
inline std::string beamFieldName(int beam) { return "BEAM_" + std::to_string(beam); }

}  // namespace rtcp::storage
