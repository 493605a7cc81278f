#pragma once
/// \file StorageStatus.h
/// storage-sink's `--status FILE`: what it has done so far, rewritten atomically once a
/// second as `key=value` lines (the codec of StatusText.h), for `observe`'s progress line
/// and summary: the MeasurementSets made ready (created or reopened) before it listens,
/// then the integrations received, written and flagged, the backlog waiting to be written
/// and the bytes. Plain counters only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtcp::storage {

struct StorageStatus {
  double wallTime = 0;           ///< time: Unix seconds when written
  bool listening = false;        ///< listening: 1 once every MS is ready and blocks are taken
  bool finished = false;         ///< finished: 1 once every MS is closed
  uint64_t measurementSets = 0;  ///< measurementSets: the MSs this sink writes
  uint64_t measurementSetsCreated = 0;  ///< measurementSetsCreated: new ones made so far
  uint64_t measurementSetsReady = 0;    ///< measurementSetsReady: open for writing so far
  uint64_t measurementSetsClosed = 0;   ///< measurementSetsClosed: finished and closed so far
  uint64_t integrationsExpected = 0;    ///< integrations.expected: per MS times the MSs
  uint64_t blocksReceived = 0;          ///< blocks.received: headers read
  uint64_t blocksRejected = 0;          ///< blocks.rejected: all reasons (the log says which)
  uint64_t integrationsWritten = 0;     ///< integrations.written: into an MS
  /// integrations.flagged: grid slots written as flagged rows because their block never came
  /// (or came too late to be taken): gaps, and at the end the padding to the stop time.
  uint64_t integrationsFlagged = 0;
  uint64_t backlog = 0;        ///< backlog: blocks received and waiting to be written
  uint64_t backlogBytes = 0;   ///< backlogBytes: staging memory they hold
  uint64_t bytesReceived = 0;  ///< bytes.received: headers and payloads
  uint64_t bytesWritten = 0;   ///< bytes.written: DATA, FLAG and WEIGHT_SPECTRUM cells
  /// failed: 1 once writing failed (a full disk, an MS that could not be written): the sink
  /// stopped writing; the MSs hold what was written before, consistently.
  bool failed = false;
  /// integrations.lost: received and checked, but in no MS because writing had stopped.
  uint64_t integrationsLost = 0;
  /// error: why writing failed, naming the MS or the directory of the file system that
  /// filled up ("" when it did not). Written with spaces, '%' and line ends as %20, %25,
  /// %0A, so that it stays one word of the one-line form.
  std::string error;
  /// connections.refused: connections closed because they did not prove they belong to the
  /// observation (Handshake.h); the log names each peer.
  uint64_t connectionsRefused = 0;
  /// blocks.duplicated: blocks for an integration this sink had already written (the first
  /// kept); the log names the source and the integration. Blocks sent again after a
  /// restart, for integrations the MS held when this sink reopened it, are not counted.
  uint64_t blocksDuplicated = 0;
  /// Beam-formed files (DESIGN §2.4b, §2.7): beamformed.files written here,
  /// beamformed.blocksExpected (blocks per file times the files), beamformed.blocksWritten,
  /// beamformed.subbandBlocksLost (subbands of written blocks that never came, or came too
  /// late: zeros of weight 0), beamformed.bytesWritten, beamformed.received (blocks taken
  /// from the connections) and beamformed.rejected (bad header, checksum or not stored here).
  uint64_t beamFormedFiles = 0, beamFormedBlocksExpected = 0, beamFormedBlocksWritten = 0,
           beamFormedSubbandBlocksLost = 0, beamFormedBytesWritten = 0, beamFormedReceived = 0,
           beamFormedRejected = 0;
  /// Per beam-formed file written here, in the same order: beamformed.fileNames (the .h5's
  /// name, without its directory), beamformed.fileBlocks (blocks written) and
  /// beamformed.fileSubbandBlocksLost (as beamformed.subbandBlocksLost), ','-separated.
  std::vector<std::string> beamFormedFileNames;
  std::vector<uint64_t> beamFormedFileBlocks, beamFormedFileSubbandBlocksLost;

  /// The `key=value` text (keys as documented on each field).
  std::string format() const;
  /// Parses format()'s text; unknown keys are ignored. Throws std::runtime_error naming
  /// the line or key of a malformed entry.
  static StorageStatus parse(const std::string& text);
  /// Reads and parses a status file; throws std::runtime_error naming it.
  static StorageStatus read(const std::string& path);
  /// One line for standard output (`--status -`, forwarded by mpiexec from another host).
  std::string formatLine() const;
  /// The status of a formatLine() line; nullopt for other lines.
  static std::optional<StorageStatus> parseLine(const std::string& line);
  static constexpr std::string_view kLinePrefix = "rtcp-storage-status ";
  bool operator==(const StorageStatus&) const = default;
};

}  // namespace rtcp::storage
