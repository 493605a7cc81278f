#pragma once
/// \file ObservationSettings.h
/// The observation, parsed once from a parset into typed fields. Every part of rtcp
/// uses this struct; no part reads parset keys of its own except through it.
///
/// Both generations of LOFAR's correlator keys are understood: COBALT's `Cobalt.*` and
/// BG/P's `OLAP.*` / `Observation.channelsPerSubband`. COBALT's keys win, as in COBALT; a
/// BG/P key that disagrees is a warning naming both (ProcessingKeys.cc). Every problem
/// of a parset is reported at once: fromParset() throws ParsetErrors listing them all.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rtcp/BeamFormedSettings.h"
#include "rtcp/Direction.h"
#include "rtcp/FlaggingSettings.h"
#include "rtcp/Parset.h"
#include "rtcp/StationTable.h"
#include "rtcp/UnknownKeys.h"

namespace rtcp {

/// Where a subband travels in a station's packets: input stream (index in RSP.ports) and
/// beamlet within that stream's packets.
struct BeamletSlot {
  int stream = 0;
  int beamlet = 0;
  bool operator==(const BeamletSlot&) const = default;
};

/// One antenna field: a station of the correlation (LOFAR forms them from the station
/// list and the antenna set: HBA_DUAL splits a core station into HBA0 and HBA1).
struct StationSettings {
  std::string name;     ///< antenna field, e.g. CS001HBA0, RS106HBA, CS002LBA: the MS antenna name
  std::string station;  ///< LOFAR station, e.g. CS001
  std::string field;    ///< LBA, HBA, HBA0 or HBA1
  int id = 0;           ///< LOFAR numeric station ID (packet station field / 32)
  std::array<double, 3> position{};  ///< ITRF metres: PIC.Core.<name>.phaseCenter, else the table
  std::vector<std::string> inputs;   ///< PIC.Core.<name>.RSP.ports stream descriptors
  /// [subband index]: the stream and beamlet carrying it (Observation.Dataslots.<name>.*,
  /// Observation.Beam[b].beamletList, else in order across the streams).
  std::vector<BeamletSlot> beamlets;
  double clockCorrection = 0;      ///< PIC.Core.<name>.clockCorrectionTime, seconds
  std::array<double, 2> delay{};   ///< PIC.Core.<name>.<antennaSet>.<bandFilter>.delay.X/Y, s
  std::array<double, 2> phase0{};  ///< PIC.Core.<name>.<antennaSet>.<bandFilter>.phase0.X/Y, rad
  bool operator==(const StationSettings&) const = default;
};

struct SubbandSettings {
  int index = 0;         ///< position in the observation's list of all subbands (0-based)
  int number = 0;        ///< subband number, e.g. 150 (Observation.Beam[b].subbandList)
  int beam = 0;          ///< the beam (SAP) whose subband list holds it
  double frequency = 0;  ///< centre frequency in Hz
  bool operator==(const SubbandSettings&) const = default;
};

/// A simulated source's pulses (Sim.Source[i].pulsar.*): a Gaussian power envelope of the
/// source's signal, dispersed by cold plasma (DESIGN §2.2).
struct SimPulsar {
  double period = 0;             ///< .period, seconds; 0: a steady source
  double width = 0;              ///< .width, seconds: FWHM of the pulse's power
  double epochMjd = 0;           ///< .epoch: a pulse's peak at infinite frequency (MJD, UTC)
  double dispersionMeasure = 0;  ///< .dispersionMeasure, pc cm^-3
  bool operator==(const SimPulsar&) const = default;
};

struct SimSource {
  Direction direction;  ///< Sim.Source[i].angle1/angle2/directionType
  double flux = 1;      ///< Sim.Source[i].flux: Stokes I (a pulsar's at the pulse peak)
  /// Sim.Source[i].Q/U/V: fractions of Stokes I (q^2 + u^2 + v^2 <= 1), DESIGN §2.2.
  double q = 0, u = 0, v = 0;
  SimPulsar pulsar;
  bool operator==(const SimSource&) const = default;
};

/// What a simulated station's signal path adds per polarisation (X, Y), as the
/// corrections of PIC.Core.<field>.* undo it.
struct SimSignalPath {
  std::array<double, 2> delay{};   ///< seconds; the signal arrives this much earlier
  std::array<double, 2> phase0{};  ///< radians, added to the phase
  bool operator==(const SimSignalPath&) const = default;
};

/// Interference station-sim adds at chosen antenna fields (Sim.rfi.*, all optional): made
/// at the station, so without geometric delay and not common to the stations; for testing
/// the online flaggers (FlaggingSettings.h).
struct SimRfi {
  double toneFrequency = 0;         ///< Sim.rfi.tone.frequency: sky Hz; 0 = none
  double toneAmplitude = 0;         ///< Sim.rfi.tone.amplitude (as Sim.tone.amplitude)
  std::vector<int> toneStations;    ///< Sim.rfi.tone.stations: fields (indices); empty: all
  double burstPeriod = 0;           ///< Sim.rfi.burst.period: seconds between bursts; 0 = none
  double burstDuration = 0;         ///< Sim.rfi.burst.duration: seconds (from each period's start)
  double burstPower = 0;            ///< Sim.rfi.burst.power: per polarisation, white noise
  std::vector<int> burstStations;   ///< Sim.rfi.burst.stations: fields; empty: all
  std::vector<int> silentStations;  ///< Sim.rfi.silentStations: fields sending zeros (a dead
                                    ///< receiver; with the tone: only the tone)
  /// A drifting narrow-band signal (Sim.rfi.drift.*): at sky frequency
  /// `driftFrequency + driftRate × τ`, τ the time since the start of the current period of
  /// `driftPeriod` seconds on the sample clock (a sweep that starts again every period).
  double driftFrequency = 0;       ///< Sim.rfi.drift.frequency: sky Hz at τ = 0; 0 = none
  double driftRate = 0;            ///< Sim.rfi.drift.rate: Hz per second
  double driftPeriod = 0;          ///< Sim.rfi.drift.period: seconds (> 0 with a drift)
  double driftAmplitude = 0;       ///< Sim.rfi.drift.amplitude (as Sim.tone.amplitude)
  std::vector<int> driftStations;  ///< Sim.rfi.drift.stations: fields; empty: all
  /// Sim.rfi.noiseOnlyStations: fields that send receiver noise alone, of the power their
  /// sky and noise would have (no sky signal: uncorrelated with every other station)
  std::vector<int> noiseOnlyStations;
  bool operator==(const SimRfi&) const = default;
};

/// Sky and faults that station-sim simulates (Sim.* keys, all optional).
struct SimSettings {
  std::vector<SimSource> sources;    ///< Sim.nrSources, Sim.Source[i].*
  double noisePower = 1.0;           ///< Sim.noisePower, per station and polarisation
  double toneFrequency = 0;          ///< Sim.tone.frequency (Hz, sky); 0 = no tone
  double toneAmplitude = 0;          ///< Sim.tone.amplitude
  double packetLossProbability = 0;  ///< Sim.packetLossProbability
  double stationBeamWidth = 0;       ///< Sim.stationBeamWidth: radians (FWHM); 0 = none
  uint64_t seed = 1;                 ///< Sim.seed
  /// [station]: Sim.<field>.delay.X/Y and Sim.<field>.phase0.X/Y; by default the
  /// station's corrections in the parset (clockCorrectionTime, delay.X/Y, phase0.X/Y).
  std::vector<SimSignalPath> signalPaths;
  SimRfi rfi;  ///< Sim.rfi.*
  bool operator==(const SimSettings&) const = default;
};

struct CorrelatedOutputSettings {
  bool enabled = true;                   ///< Observation.DataProducts.Output_Correlated.enabled
  std::vector<std::string> filenames;    ///< one per subband (default L<obs>_SAP<b>_SB<i>_uv.MS)
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

/// A remark on a parset that does not stop the observation (two keys that disagree, a
/// value rounded), worded as a ParsetError ("FILE:LINE: key 'K': ...").
struct ParsetWarning {
  std::string key;
  int line = 0;
  std::string message;
};

/// The most seconds of station buffer (OLAP.nrSecondsOfBuffer) a parset may ask for: a
/// bound on nonsense (1e9 s); what a host can hold is checked against its memory
/// (observe's MemoryPlan, ionproc at start-up), e.g. 120 s for a few stations' triggers.
constexpr double kMaxSecondsOfBuffer = 600;
/// The most seconds OLAP.maxNetworkDelay may say (the buffers grow by it as well).
constexpr double kMaxNetworkDelay = 15;

struct ObservationSettings {
  int64_t observationId = 0;              ///< Observation.ObsID, else Observation.otdbID
  double startTime = 0;                   ///< Observation.startTime, Unix seconds UTC
  double stopTime = 0;                    ///< Observation.stopTime, Unix seconds UTC
  int clockMHz = 200;                     ///< Observation.sampleClock: 200 or 160
  int bitsPerSample = 16;                 ///< Observation.nrBitsPerSample: 16, 8 or 4
  std::string antennaSet;                 ///< Observation.antennaSet, e.g. LBA_OUTER, HBA_DUAL
  std::string antennaField;               ///< LBA or HBA, derived from antennaSet
  std::string bandFilter;                 ///< Observation.bandFilter
  int nyquistZone = 1;                    ///< derived from bandFilter
  std::vector<StationSettings> stations;  ///< antenna fields, in station-list order
  std::vector<Direction> beams;           ///< Observation.Beam[i].angle1/2/directionType (SAPs)
  std::vector<std::vector<std::string>> beamTargets;  ///< Observation.Beam[i].target, per beam
  std::optional<AnalogBeamSettings> analogBeam;       ///< Observation.AnaBeam[0], when given
  CampaignSettings campaign;                          ///< Observation.Campaign.*
  std::vector<SubbandSettings> subbands;              ///< all beams' subbands, in order
  std::array<double, 3> referencePhaseCenter{};       ///< Observation.referencePhaseCenter (ITRF m)
  /// Cobalt.Correlator.nrChannelsPerSubband, else Observation.channelsPerSubband
  int channelsPerSubband = 64;
  /// Cobalt.blockSize / channels / Cobalt.Correlator.nrIntegrationsPerBlock, else
  /// OLAP.CNProc.integrationSteps
  int spectraPerBlock = 3072;
  /// Cobalt.Correlator.nrBlocksPerIntegration, else OLAP.IONProc.integrationSteps
  int blocksPerIntegration = 1;
  bool delayCompensation = true;  ///< Cobalt.delayCompensation, else OLAP.delayCompensation
  bool correctBandPass = true;    ///< Cobalt.correctBandPass, else OLAP.correctBandPass
  bool correctClocks = true;      ///< Cobalt.correctClocks, else OLAP.correctClocks
  bool realTime = true;           ///< Cobalt.realTime, else OLAP.realTime
  double secondsOfBuffer = 2.5;   ///< OLAP.nrSecondsOfBuffer, at most kMaxSecondsOfBuffer
  /// OLAP.maxNetworkDelay: in real time, how long past its end a block waits for late
  /// packets before it is served (LOFAR's default, 0.25 s); the buffers hold that much more
  double maxNetworkDelay = 0.25;
  std::vector<std::string> tiedArrayStationNames;  ///< OLAP.tiedArrayStationNames (field names)
  CorrelatedOutputSettings correlatedOutput;
  BeamFormedSettings beamFormed;  ///< tied-array beams and their files (BeamFormedSettings.h)
  FlaggingSettings flagging;      ///< online RFI flagging (FlaggingSettings.h)
  std::vector<ComputeNode> computeNodes;  ///< Cobalt.Nodes, rank i on node i; empty: not given
  SimSettings sim;
  std::string parsetText;               ///< the parset as read, for HISTORY
  UnknownKeys unknownKeys;              ///< keys that no setting took, summarised
  std::vector<ParsetWarning> warnings;  ///< disagreeing keys, rounded values (also logged)

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
  /// Index of a station by field name (CS001HBA0), or by station name (CS001) when that
  /// station has one field in the observation; -1 when absent or ambiguous.
  int stationIndex(const std::string& name) const;
  /// What the observation does, in one line: fields, beams, subbands, channels, block
  /// and integration.
  std::string summaryLine() const;
  /// Logs what the observation does (fields, beams, channels, block and integration),
  /// the warnings and the unknown keys, as `component`.
  void logReport(const std::string& component) const;
  /// Subband indices of a beam, in order.
  std::vector<int> subbandsOfBeam(int beam) const;

  /// The delay (seconds) added to station s's geometric delay for both polarisations:
  /// with Cobalt.correctClocks, clockCorrectionTime plus the mean of delay.X and delay.Y
  /// (0 without clock correction).
  double instrumentalDelay(int station) const;
  /// The per-polarisation rest of the corrections with Cobalt.correctClocks: delay.P minus
  /// the mean of delay.X and delay.Y (seconds), and phase0.P (radians); 0 without.
  double polarisationDelay(int station, int pol) const;
  double polarisationPhase(int station, int pol) const;

  /// Parses every known key; throws ParsetErrors listing every missing or bad one.
  /// Unread keys end up in unknownKeys. Positions missing from the parset come from
  /// the station table.
  static ObservationSettings fromParset(const Parset& parset, const StationTable& table);
  /// With the shipped table.
  static ObservationSettings fromParset(const Parset& parset);
  /// Reads every key it can, for checks that go on past a bad key (observe's
  /// ParsetChecker): the settings as far as the parset allows, and every missing or bad
  /// key in `errors` (empty: the settings are the ones fromParset returns).
  static ObservationSettings readAll(const Parset& parset, const StationTable& table,
                                     std::vector<ParsetError>& errors);
  /// With the shipped table; path "-" reads standard input (a part started on another
  /// host gets its parset that way, see observe/README.md).
  static ObservationSettings fromFile(const std::string& path);
  /// A parset's text (name for messages); relative recordings lie in baseDirectory.
  static ObservationSettings fromText(const std::string& text, const std::string& name,
                                      const std::string& baseDirectory);

  /// Every setting written back as parset keys (COBALT's generation; positions as
  /// phaseCenter keys, one location per subband), so that fromParset(toParset())
  /// reproduces these settings.
  Parset toParset() const;
  /// The processing keys of both generations with the values rtcp uses (for the
  /// effective parset): Cobalt.* and the OLAP.* / Observation.channelsPerSubband keys.
  std::vector<std::pair<std::string, std::string>> effectiveProcessingKeys() const;
  /// LOFAR's default MeasurementSet name: L<obsId>_SAP<beam>_SB<index>_uv.MS (index: the
  /// subband's position in the observation's whole subband list).
  static std::string defaultFilename(int64_t obsId, int beam, int subbandIndex);
};

}  // namespace rtcp
