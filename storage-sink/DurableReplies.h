#pragma once
/// \file DurableReplies.h
/// What storage-sink has on disk, told back to the sender (DurableReply, DESIGN §2.4): a
/// sender keeps what it sent until the sink says it is in its MS on disk, or in its
/// beam-formed files, and sends it again to a restarted sink should this one die before
/// (output/StorageSender.h).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "rtcp/CorrelatedBlock.h"

namespace rtcp::storage {

class BeamFormedWriter;

/// Per output (MS): the newest integration written into it before its last successful
/// flush (-1: none yet). Blocks of one MS reach its writer in the order they were
/// received, so every block received before that one was written (or refused) by then.
class DurableMarks {
 public:
  explicit DurableMarks(int nrOutputs);
  /// A writer thread: integration was written into output's MS.
  void written(int output, int64_t integration);
  /// A writer thread, after output's MS was flushed: what it had written is on disk.
  void flushed(int output);
  int64_t durable(int output) const { return durable_[size_t(output)].load(); }

 private:
  std::unique_ptr<std::atomic<int64_t>[]> written_, durable_;  // [output]
};

/// The replies of one connection: for each subband it sent, and each TAB's subband of its
/// beam-formed blocks, the newest durable mark, sent when it advanced. Never blocks:
/// replies the sender does not read wait in a small buffer and are dropped when it is full
/// (a later reply says more).
class DurableReplies {
 public:
  /// beamFormed: this host's beam-formed files (nullptr: none).
  DurableReplies(const DurableMarks& marks, int socket,
                 const BeamFormedWriter* beamFormed = nullptr)
      : marks_(marks), socket_(socket), beamFormed_(beamFormed) {}
  /// A block of output (subband index subband) was staged: sends the replies due (at
  /// most every kInterval).
  void staged(int output, uint32_t subband);
  /// A beam-formed block of `stream` was taken into its files' blocks: likewise.
  void stagedBeamFormed(const DurableStream& stream);

  static constexpr std::chrono::milliseconds kInterval{100};

 private:
  /// Queues the replies whose marks advanced and sends what it can (at most every kInterval).
  void replyDue();
  void add(const DurableStream& stream, int64_t mark);
  void sendPending();

  struct Sent {
    uint32_t subband = 0;
    int64_t durable = -1;  ///< last mark sent
  };
  const DurableMarks& marks_;
  int socket_;
  const BeamFormedWriter* beamFormed_;
  std::map<int, Sent> outputs_;                      ///< [output] this connection carries
  std::map<DurableStream, int64_t> beamFormedSent_;  ///< [stream it carries]: last mark sent
  std::vector<uint8_t> pending_;
  std::chrono::steady_clock::time_point nextCheck_{};
};

}  // namespace rtcp::storage
