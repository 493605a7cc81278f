#pragma once
/// \file ObservationSummary.h
/// The end of an observation as users and the nightly runner see it: observe prints it and
/// writes DIR/summary.txt and DIR/summary.json (keys as documented in observe/README.md);
/// nightly reads summary.json back. One definition for both sides of the contract.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace rtcp {

/// One input stream (RSP.ports entry) of a station.
struct PortSummary {
  uint64_t packetsReceived = 0;  ///< valid packets ionproc took in
  uint64_t packetsExpected = 0;  ///< packets covering start..stop; 0 when it carries no subband
  uint64_t packetsLost = 0;      ///< expected - received (never negative)
};

struct StationSummary {
  std::string name;              ///< the antenna field, e.g. CS001HBA0
  uint64_t packetsReceived = 0;  ///< packets stored: valid, in time, not duplicates
  uint64_t packetsExpected = 0;  ///< packets covering start..stop on the inputs that carry subbands
  uint64_t packetsLost = 0;      ///< expected - received on those (never negative)
  double lossFraction = 0;       ///< lost / expected
  std::vector<PortSummary> ports;  ///< per RSP.ports entry
  // What arrived but is not in packetsReceived, by cause:
  uint64_t packetsLate = 0;         ///< older than what was already served or buffered
  uint64_t packetsDuplicated = 0;   ///< samples that had arrived already (the first kept)
  uint64_t packetsRejected = 0;     ///< malformed or not this station's (RSP header checks)
  uint64_t packetsImplausible = 0;  ///< stamped after the observation or ahead of the clock
  uint64_t packetsBeforeStart = 0;  ///< stamped long before the start (a station sending early)
  double flaggedFraction = 0;       ///< input samples served to the ranks that were flagged
  /// Valid packets stored but stamped before the start or from the stop on (the buffer's
  /// margins): not in packetsReceived, which counts the observation's window only.
  uint64_t packetsBeforeWindow = 0;
  uint64_t packetsAfterWindow = 0;
  /// With the input recorded (observe --record-input): valid packets written to the
  /// recordings, and those that could not be (no free buffer, over the bound, a failed write).
  uint64_t packetsRecorded = 0;
  uint64_t packetsNotRecorded = 0;
  /// Online RFI flagging (DESIGN §2.3), added up from the flaggers' final reports
  /// (observe/FlaggingReport.h): of its samples that arrived, the fraction the
  /// pre-correlation flagger flagged (every rank; broken subband-blocks included); of its
  /// cross-correlation visibilities, the fraction AOFlagger flagged after correlation;
  /// subband-blocks flagged whole as broken before correlation, and subband-integrations
  /// flagged whole after it because its cross-correlations had no sky.
  double preCorrelationFlagged = 0;
  double postCorrelationFlagged = 0;
  uint64_t brokenSubbandBlocks = 0;
  uint64_t incoherentIntegrations = 0;
  /// The view across subbands in ionproc's input (input/SubbandLevelFlagger.h): of its
  /// samples that arrived, the fraction in subbands flagged whole as far above the
  /// bandpass, and how many subband-blocks that was.
  double subbandLevelFlagged = 0;
  uint64_t subbandLevelFlaggedBlocks = 0;
};

/// One beam-formed file (.h5, its samples in the .raw beside it), as its storage-sink
/// reported it after closing it.
struct BeamFormedFileSummary {
  std::string path;               ///< "HOST:PATH" when written on another host, like MSs
  uint64_t bytes = 0;             ///< samples and weights written
  int nrSubbands = 0;             ///< subbands the file holds
  int64_t blocksExpected = 0;     ///< blocks the file holds when nothing is lost
  int64_t blocksWritten = 0;      ///< blocks written (a lost subband in one: zeros of weight 0)
  int64_t subbandBlocksLost = 0;  ///< subband-blocks written as zeros of weight 0 (never came,
                                  ///< came too late, or their block never began)
  bool operator==(const BeamFormedFileSummary&) const = default;
};

/// ionproc's beam-formed blocks on their way to storage, as its final status counts them
/// (rtcp/StatusFile.h, `beamformed.*`; a block counted once per storage host it goes to).
struct BeamFormedSendSummary {
  uint64_t queued = 0;       ///< taken for storage
  uint64_t sent = 0;         ///< acknowledged by a storage-sink's TCP stack
  uint64_t dropped = 0;      ///< queue and spool full, or not sent by the end: lost
  uint64_t spooled = 0;      ///< went through the spool on disk (the queue was full)
  uint64_t resent = 0;       ///< sent again after a connection broke
  uint64_t unprotected = 0;  ///< not kept to send again before the sink said they were on disk
  /// "Q blocks queued, S sent, D dropped, P spooled, R resent, U not kept to resend"
  std::string line() const;
  bool operator==(const BeamFormedSendSummary&) const = default;
};

/// Station data kept (DESIGN §2.4): the recording of the live input (observe
/// --record-input) or a triggered dump (rtcp-trigger), as observe found it at the end.
struct StationDataSummary {
  std::string directory;  ///< the recordings (FIELD-K.rsp) and the parset that replays them
  std::string parset;     ///< that parset: DIR/replay.parset, DIR/dump.parset
  /// "complete"; "partial": packets not recorded, or (a dump) part of the window missing
  /// or an ionproc that did not answer; "unknown": a dump without rtcp-trigger's answer
  std::string status;
  std::string from, to;               ///< UTC: the window its parset replays
  std::vector<std::string> stations;  ///< antenna fields recorded
  int nrSubbands = 0;                 ///< subbands its parset replays
  uint64_t bytes = 0;                 ///< the recordings on disk
  uint64_t packets = 0;               ///< packets written
  uint64_t packetsNotRecorded = 0;    ///< valid packets that could not be written
  /// What a dump lacks, a part of a stream a line ("CS001LBA stream 0 FROM .. TO UTC:
  /// gone from the buffer" or "... not received"), and an ionproc that did not answer.
  std::vector<std::string> missing;
  /// "DIR: STATUS, BYTES bytes, FROM .. TO UTC, N station(s) (A, B), M subband(s); P packets
  /// recorded, Q not recorded[; K part(s) missing]"
  std::string line() const;
  bool operator==(const StationDataSummary&) const = default;
};

/// The status of an observation: ok; degraded (its data are usable, but more than
/// kDegradedFraction of them were flagged or dropped, or packets were implausible or
/// duplicated: ObservationSummary::degradations says why); failed.
enum class ObservationStatus { kOk, kDegraded, kFailed };
const char* toString(ObservationStatus status);
/// Above this fraction flagged or dropped, an observation is degraded.
constexpr double kDegradedFraction = 0.01;

struct ObservationSummary {
  int64_t observationId = 0;
  std::string parset;  ///< the effective parset
  bool ok = false;     ///< not failed: "status" is "ok" or "degraded"
  std::string reason;  ///< why it failed, or what went wrong but did not fail it
  /// What degraded the data ("status": "degraded" when ok and not empty); assess() finds them.
  std::vector<std::string> degradations;
  std::string start, stop;     ///< UTC
  double durationSeconds = 0;  ///< stop - start
  double wallSeconds = 0;      ///< from starting the parts to the end
  double realTimeFactor = 0;   ///< observed seconds per wall second (replays: > 1 is faster)
  uint64_t bytesWritten = 0;   ///< bytes of the MeasurementSets on disk
  std::vector<std::string> measurementSets;  ///< written (an observation that failed lists none)
  std::vector<std::string> partialMeasurementSets;  ///< on disk after a failure: incomplete
  /// Every beam-formed file the parset names, in its order (one no storage-sink reported:
  /// nothing written, and a warning).
  std::vector<BeamFormedFileSummary> beamFormedFiles;
  BeamFormedSendSummary beamFormedBlocks;  ///< ionproc's (the first one's: it sends them)
  std::vector<StationSummary> stations;
  uint64_t blocksDropped = 0;  ///< blocks served flagged because the ranks fell behind
  /// What the MSs hold once closed, as each storage-sink reported after its final flush or
  /// (a sink that did not finish) as observe read them back: integrations with data, and
  /// integrations written as flagged gaps.
  uint64_t integrationsStored = 0;
  uint64_t integrationsFlagged = 0;
  uint64_t integrationsDropped = 0;      ///< expected - stored: not in the MSs with data
  uint64_t integrationsExpected = 0;     ///< integrations × subbands of the observation
  std::map<std::string, int> exitCodes;  ///< per part; -1: not started or killed by observe
  std::map<std::string, double>
      cpuSeconds;                  ///< per part: user + system CPU (mpirun: with its ranks)
  std::vector<std::string> plots;  ///< PNGs made by tools/rtcp-inspect
  /// observe --record-input: the recordings (directory empty without)
  StationDataSummary recording;
  std::vector<StationDataSummary> dumps;  ///< rtcp-trigger's dumps in DIR/dumps, by directory
  /// Online RFI flagging, as the parts reported it at their end: per rank the fraction
  /// flagged per station before correlation and the stations flagged whole (broken), and
  /// the post-correlation flagger's count (DESIGN §2.3); empty when flagging was off.
  std::vector<std::string> flagging;
  std::vector<std::string> warnings;

  ObservationStatus status() const {
    return !ok                    ? ObservationStatus::kFailed
           : degradations.empty() ? ObservationStatus::kOk
                                  : ObservationStatus::kDegraded;
  }
  /// Fills `degradations` from the counters: per station, packets lost or samples flagged
  /// beyond kDegradedFraction (naming what was late, rejected or missing), implausible or
  /// duplicated packets at all; blocks dropped because the ranks fell behind; integrations
  /// that did not reach storage beyond kDegradedFraction; beam-formed subband-blocks lost
  /// beyond it.
  void assess();

  std::string toJson() const;
  std::string toText() const;
  /// Writes summary.txt and summary.json into the directory; throws std::runtime_error.
  void write(const std::string& directory) const;

  /// Parses toJson()'s text (absent keys keep their defaults; a number may be null).
  /// Throws std::runtime_error naming `name` (and the line of a syntax error), or the
  /// problem, for text that is not such a summary.
  static ObservationSummary fromJson(const std::string& text, const std::string& name);
  /// Reads a summary.json; throws std::runtime_error naming the file.
  static ObservationSummary fromFile(const std::string& path);
};

/// A string as a JSON string literal.
std::string jsonString(const std::string& text);

/// An entry of measurementSets or plots split into its host and the path there:
/// "st1:/data/L1_SAP000_SB000_uv.MS" gives {"st1", "/data/..."}; a path on the host
/// that wrote the summary gives {"", path}.
std::pair<std::string, std::string> splitHostPath(const std::string& entry);

}  // namespace rtcp
