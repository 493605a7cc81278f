#pragma once
/// \file ObservationSettings.h
/// The observation, parsed once from a parset into typed fields. Every part of rtcp
/// uses this struct; no part reads parset keys of its own except through it.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rtcp/Parset.h"
#include "rtcp/StationTable.h"

namespace rtcp {

/// A J2000 direction in radians.
struct Direction {
  double ra = 0;   ///< Observation.Beam[i].angle1 / Sim.Source[i].angle1
  double dec = 0;  ///< Observation.Beam[i].angle2 / Sim.Source[i].angle2
  bool operator==(const Direction&) const = default;
};

struct StationSettings {
  std::string name;   ///< Observation.VirtualInstrument.stationList entry, e.g. CS001
  int id = 0;         ///< LOFAR numeric station ID (packet station field / 32)
  std::string field;  ///< antenna field, LBA or HBA (from Observation.antennaSet)
  std::array<double, 3>
      position{};  ///< ITRF metres: PIC.Core.<name><field>.phaseCenter, else the table
  std::vector<std::string> inputs;  ///< PIC.Core.<name><field>.RSP.ports stream descriptors
  double clockCorrection = 0;       ///< PIC.Core.<name><field>.clockCorrectionTime, seconds
  bool operator==(const StationSettings&) const = default;
};

struct SubbandSettings {
  int index = 0;         ///< position in the observation's list of all subbands (0-based)
  int number = 0;        ///< subband number, e.g. 150 (Observation.Beam[b].subbandList)
  int beam = 0;          ///< the beam whose subband list holds it
  double frequency = 0;  ///< centre frequency in Hz
  bool operator==(const SubbandSettings&) const = default;
};

struct SimSource {
  Direction direction;  ///< Sim.Source[i].angle1/angle2
  double flux = 1;      ///< Sim.Source[i].flux: Stokes I, half per polarisation
  bool operator==(const SimSource&) const = default;
};

/// Sky and faults that station-sim simulates (Sim.* keys, all optional).
struct SimSettings {
  std::vector<SimSource> sources;    ///< Sim.nrSources, Sim.Source[i].*
  double noisePower = 1.0;           ///< Sim.noisePower, per station and polarisation
  double toneFrequency = 0;          ///< Sim.tone.frequency (Hz, sky); 0 = no tone
  double toneAmplitude = 0;          ///< Sim.tone.amplitude
  double packetLossProbability = 0;  ///< Sim.packetLossProbability
  uint64_t seed = 1;                 ///< Sim.seed
  bool operator==(const SimSettings&) const = default;
};

struct CorrelatedOutputSettings {
  bool enabled = true;                   ///< Observation.DataProducts.Output_Correlated.enabled
  std::vector<std::string> filenames;    ///< one per subband (default L<obs>_SB<nnn>_uv.MS)
  std::vector<std::string> hosts;        ///< one per subband, from locations HOST:DIR
  std::vector<std::string> directories;  ///< one per subband, from locations HOST:DIR
  int storagePort = 4100;                ///< OLAP.Storage.port
  bool operator==(const CorrelatedOutputSettings&) const = default;
};

/// Who the observation is for (Observation.Campaign.*, all optional): what LOFAR writes
/// into the MS's OBSERVATION table.
struct CampaignSettings {
  std::string name;   ///< Observation.Campaign.name, e.g. LC4_001 (OBSERVATION.PROJECT)
  std::string title;  ///< Observation.Campaign.title
  std::string pi;     ///< Observation.Campaign.PI
  std::vector<std::string> coInvestigators;  ///< Observation.Campaign.CO_I
  std::string contact;                       ///< Observation.Campaign.contact
  bool operator==(const CampaignSettings&) const = default;
};

/// The stations' analog beam, where the HBA tiles point (Observation.AnaBeam[0]).
struct AnalogBeamSettings {
  std::string directionType = "J2000";  ///< Observation.AnaBeam[0].directionType (casacore name)
  double angle1 = 0;                    ///< Observation.AnaBeam[0].angle1, radians
  double angle2 = 0;                    ///< Observation.AnaBeam[0].angle2, radians
  bool operator==(const AnalogBeamSettings&) const = default;
};

/// A compute node (COBALT's term): one correlator rank on a host.
struct ComputeNode {
  std::string name;  ///< Cobalt.Nodes entry, e.g. cbt001_0
  std::string host;  ///< PIC.Core.Cobalt.<name>.host (default localhost)
  bool operator==(const ComputeNode&) const = default;
};

struct ObservationSettings {
  int64_t observationId = 0;  ///< Observation.ObsID
  double startTime = 0;       ///< Observation.startTime, Unix seconds UTC
  double stopTime = 0;        ///< Observation.stopTime, Unix seconds UTC
  int clockMHz = 200;         ///< Observation.sampleClock: 200 or 160
  int bitsPerSample = 16;     ///< Observation.nrBitsPerSample: 16, 8 or 4
  std::string antennaSet;     ///< Observation.antennaSet, e.g. LBA_OUTER
  std::string antennaField;   ///< LBA or HBA, derived from antennaSet
  std::string bandFilter;     ///< Observation.bandFilter
  int nyquistZone = 1;        ///< derived from bandFilter
  std::vector<StationSettings> stations;
  std::vector<Direction> beams;                       ///< Observation.Beam[i].angle1/2 (J2000)
  std::vector<std::vector<std::string>> beamTargets;  ///< Observation.Beam[i].target, per beam
  std::optional<AnalogBeamSettings> analogBeam;       ///< Observation.AnaBeam[0], when given
  CampaignSettings campaign;                          ///< Observation.Campaign.*
  std::vector<SubbandSettings> subbands;              ///< all beams' subbands, in order
  std::array<double, 3> referencePhaseCenter{};       ///< Observation.referencePhaseCenter (ITRF m)
  int channelsPerSubband = 64;                        ///< Observation.channelsPerSubband
  int spectraPerBlock = 3052;                         ///< OLAP.CNProc.integrationSteps
  int blocksPerIntegration = 1;                       ///< OLAP.IONProc.integrationSteps
  bool delayCompensation = true;                      ///< OLAP.delayCompensation
  bool correctBandPass = true;                        ///< OLAP.correctBandPass
  bool realTime = true;                               ///< OLAP.realTime
  double secondsOfBuffer = 2.5;                       ///< OLAP.nrSecondsOfBuffer
  std::vector<std::string> tiedArrayStationNames;     ///< OLAP.tiedArrayStationNames
  CorrelatedOutputSettings correlatedOutput;
  std::vector<ComputeNode> computeNodes;  ///< Cobalt.Nodes, rank i on node i; empty: not given
  SimSettings sim;
  std::string parsetText;                ///< the parset as read, for HISTORY
  std::vector<std::string> unknownKeys;  ///< keys that no setting took, with "file:line"

  double clockHz() const { return clockMHz * 1e6; }
  /// Complex sample rate of one subband (clockHz / 1024).
  double subbandWidth() const { return clockHz() / 1024.0; }
  double channelWidth() const { return subbandWidth() / channelsPerSubband; }
  /// Sky frequency of channel c of a subband (DC of the subband at channel C/2).
  double channelFrequency(int subbandIndex, int channel) const;
  /// Subband frequency for a subband number in this band.
  double subbandFrequency(int subbandNumber) const;
  int64_t samplesPerBlock() const { return int64_t(spectraPerBlock) * channelsPerSubband; }
  double blockDuration() const { return samplesPerBlock() / subbandWidth(); }
  double integrationDuration() const { return blockDuration() * blocksPerIntegration; }
  /// Absolute sample number of the first sample at or after startTime.
  int64_t startSample() const;
  /// Number of whole blocks between start and stop.
  int64_t nrBlocks() const;
  int64_t nrIntegrations() const { return nrBlocks() / blocksPerIntegration; }
  /// Absolute sample number of the first sample of block b.
  int64_t blockStartSample(int64_t block) const {
    return startSample() + block * samplesPerBlock();
  }
  /// Beamlets one RSP packet holds in this bit mode (61/122/244).
  int beamletsPerPacket() const;
  int nrStations() const { return int(stations.size()); }
  int nrSubbands() const { return int(subbands.size()); }
  int stationIndex(const std::string& name) const;  ///< -1 when absent

  /// Parses every known key; throws ParsetError on a missing or bad one.
  /// Unread keys end up in unknownKeys. Positions missing from the parset come from
  /// the station table.
  static ObservationSettings fromParset(const Parset& parset, const StationTable& table);
  static ObservationSettings fromParset(const Parset& parset);  ///< with the shipped table
  /// With the shipped table; path "-" reads standard input (a part started on another
  /// host gets its parset that way, see observe/README.md).
  static ObservationSettings fromFile(const std::string& path);
  /// A parset's text (name for messages); relative recordings lie in baseDirectory.
  static ObservationSettings fromText(const std::string& text, const std::string& name,
                                      const std::string& baseDirectory);

  /// Every setting written back as parset keys (positions as phaseCenter keys, one
  /// location per subband), so that fromParset(toParset()) reproduces these settings.
  Parset toParset() const;
  /// The default MeasurementSet name of a subband: L<obsId>_SB<nnn>_uv.MS.
  static std::string defaultFilename(int64_t obsId, int subbandNumber);
};

}  // namespace rtcp
