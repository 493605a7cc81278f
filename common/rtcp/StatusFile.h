#pragma once
/// \file StatusFile.h
/// ionproc's `--status FILE`: a snapshot of the station input, the integrator and the
/// storage writer, rewritten atomically once a second as `key=value` lines, for the
/// `observe` launcher's progress line and summary (the codec of StatusText.h). Plain
/// counters only, so that readers need none of ionproc's classes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtcp::ion {

struct IonStatus {
  /// One station's input (InputStatistics.h, StationStatistics).
  struct Station {
    std::string name;              ///< station[i].name
    uint64_t packetsReceived = 0;  ///< station[i].packetsReceived: datagrams or file records read
    uint64_t packetsAccepted = 0;  ///< station[i].packetsAccepted: valid, into the buffer
    uint64_t late = 0;             ///< station[i].late: wholly or partly older than served
    uint64_t duplicated = 0;       ///< station[i].duplicated: samples had arrived (first kept)
    uint64_t rejected = 0;         ///< station[i].rejected: all reasons, including these two:
    uint64_t implausible =
        0;  ///< station[i].implausible: after the observation, ahead of the clock
    uint64_t beforeStart = 0;     ///< station[i].beforeStart: long before the start (not a fault)
    uint64_t blocksServed = 0;    ///< station[i].blocksServed
    uint64_t samplesServed = 0;   ///< station[i].samplesServed (per subband)
    uint64_t samplesFlagged = 0;  ///< station[i].samplesFlagged: of those, missing
    uint64_t blocksGone = 0;      ///< station[i].blocksGone: served flagged, ranks behind
    int64_t lastBlock = -1;       ///< station[i].lastBlock: newest block served
    /// station[i].ports, station[i].port[k].accepted: valid packets per input stream,
    /// inside start..stop (what losses are counted against)
    std::vector<uint64_t> portsAccepted;
    /// station[i].acceptedBeforeStart, station[i].acceptedAfterStop: of packetsAccepted,
    /// stamped outside start..stop (the buffer's margins)
    uint64_t acceptedBeforeStart = 0, acceptedAfterStop = 0;
    /// station[i].packetsRecorded, station[i].packetsNotRecorded: with a recording of the
    /// input (ionproc --record-input), valid packets written to it and those it could not
    /// take (no free buffer, over the bound on disk use, a failed write)
    uint64_t packetsRecorded = 0, packetsNotRecorded = 0;
    /// station[i].samplesLevelFlagged, station[i].subbandBlocksLevelFlagged: of
    /// samplesServed, valid samples in subbands flagged whole as far above the bandpass
    /// (input/SubbandLevelFlagger.h), and those subband-blocks
    uint64_t samplesLevelFlagged = 0, subbandBlocksLevelFlagged = 0;
    bool operator==(const Station&) const = default;
  };

  double wallTime = 0;       ///< time: Unix seconds when written
  bool finished = false;     ///< finished: 1 once ionproc has finished
  int64_t nrBlocks = 0;      ///< blocks: in the observation
  double blockDuration = 0;  ///< blockDuration: seconds
  int64_t newestBlock = -1;  ///< newestBlock: newest block served to any rank
  /// newestBlockLag: wall clock minus the (replay-shifted) end time of newestBlock, s.
  double newestBlockLag = 0;
  std::vector<Station> stations;
  uint64_t blocksIntegrated = 0;        ///< integrator.blocks
  uint64_t integrations = 0;            ///< integrator.integrations: sent on
  uint64_t incompleteIntegrations = 0;  ///< integrator.incomplete
  uint64_t storageQueued = 0;           ///< storage.queued
  uint64_t storageSent = 0;             ///< storage.sent: acknowledged by storage-sink
  uint64_t storageDropped = 0;          ///< storage.dropped
  uint64_t storageConnections = 0;      ///< storage.connections: made to storage-sinks so far
  /// Beam-formed blocks (DESIGN §2.4b) for the storage-sinks of their files: queued
  /// (beamformed.queued), acknowledged by a storage-sink (beamformed.sent), dropped
  /// (beamformed.dropped: queue and spool full in real time, or not sent by the end),
  /// through the spool (beamformed.spooled), sent again after a connection broke
  /// (beamformed.resent), forgotten before the sink said they were in its files, beyond
  /// --retain-mb or the pool's share (rtcp/BeamFormedSendPool.h) (beamformed.unprotected: a
  /// sink dying then loses them).
  uint64_t beamFormedQueued = 0, beamFormedSent = 0, beamFormedDropped = 0;
  uint64_t beamFormedSpooled = 0, beamFormedResent = 0, beamFormedUnprotected = 0;
  /// link.connectionsRefused: connections to the link closed because they did not prove
  /// they belong to the observation (Handshake.h); the log names each peer.
  uint64_t linkConnectionsRefused = 0;
  /// trigger: HOST:PORT of ionproc's trigger port (TriggerProtocol.h); absent: none
  std::string trigger;

  /// The `key=value` text (keys as documented on each field).
  std::string format() const;
  /// Parses format()'s text; unknown keys are ignored. Throws std::runtime_error naming
  /// the line of a malformed entry.
  static IonStatus parse(const std::string& text);
  /// Reads and parses a status file; throws std::runtime_error when it cannot be read.
  static IonStatus read(const std::string& path);
  /// The status as one line on a stream (`ionproc --status -`, which mpiexec forwards from
  /// another host): kLinePrefix, then format()'s entries separated by spaces.
  std::string formatLine() const;
  /// The status in a line of formatLine() (nullopt when the line does not start with
  /// kLinePrefix); throws std::runtime_error like parse().
  static std::optional<IonStatus> parseLine(const std::string& line);
  static constexpr std::string_view kLinePrefix = "rtcp-status ";
  bool operator==(const IonStatus&) const = default;
};

}  // namespace rtcp::ion
