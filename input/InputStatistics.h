#pragma once
/// \file InputStatistics.h
/// Counters of the station input: per stream (updated by its receiver) and per station
/// (a snapshot for the progress line of the `observe` launcher).

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "rtcp/RspPacket.h"

namespace rtcp::ion {

/// Live counters of one input stream; its receiver is the only writer.
struct StreamCounters {
  std::atomic<uint64_t> received{0};  ///< datagrams or file records read
  std::atomic<uint64_t> accepted{0};  ///< valid packets stored (wholly or partly)
  /// Of those, stamped before the observation's start or from its stop on (the buffer's
  /// margins): the rest, accepted inside start..stop, is what losses are counted against.
  std::atomic<uint64_t> acceptedBeforeStart{0}, acceptedAfterStop{0};
  std::atomic<uint64_t> late{0};        ///< packets (partly) older than served or buffered
  std::atomic<uint64_t> duplicated{0};  ///< packets whose samples had all arrived
  std::array<std::atomic<uint64_t>, kNrRspRejects> rejected{};  ///< by RspReject
};

/// A snapshot of one station's input.
struct StationStatistics {
  std::string station;
  uint64_t packetsReceived = 0;
  uint64_t packetsAccepted = 0;  ///< stored: neither rejected nor wholly late or duplicated
  uint64_t late = 0;
  uint64_t duplicated = 0;
  std::array<uint64_t, kNrRspRejects> rejected{};  ///< by RspReject
  uint64_t blocksServed = 0;
  uint64_t samplesServed = 0;   ///< per subband, summed over served blocks
  uint64_t samplesFlagged = 0;  ///< of those, the ones that did not arrive
  /// Of samplesServed, the valid ones flagged by the view across subbands (whole subbands
  /// far above the bandpass: SubbandLevelFlagger.h), and the subband-blocks it flagged
  uint64_t samplesLevelFlagged = 0, subbandBlocksLevelFlagged = 0;
  uint64_t blocksGone = 0;  ///< served fully flagged: the ranks fell behind
  int64_t lastBlock = -1;   ///< newest block served
  double lastBlockFlaggedFraction = 0;
  std::vector<uint64_t> acceptedPerStream;  ///< [stream]: packets stored of each input
  /// [stream]: of those, the packets inside start..stop (their samples overlap it)
  std::vector<uint64_t> acceptedInWindowPerStream;
  uint64_t acceptedBeforeStart = 0, acceptedAfterStop = 0;  ///< stored, outside start..stop
  /// With a recording of the input (InputRecorder): packets written to it, and valid
  /// packets it could not take (no free buffer, over the bound, a failed write).
  uint64_t packetsRecorded = 0, packetsNotRecorded = 0;

  uint64_t rejectedTotal() const {
    uint64_t total = 0;
    for (uint64_t r : rejected) total += r;
    return total;
  }
  /// Valid packets stamped after the observation or ahead of the wall clock.
  uint64_t implausible() const {
    return rejected[size_t(RspReject::kAfterObservation)] +
           rejected[size_t(RspReject::kAheadOfClock)];
  }
  /// Valid packets stamped long before the start: a station sending early, no fault.
  uint64_t beforeStart() const { return rejected[size_t(RspReject::kBeforeObservation)]; }
};

}  // namespace rtcp::ion
