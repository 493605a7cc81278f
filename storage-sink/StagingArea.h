#pragma once
/// \file StagingArea.h
/// Write-behind staging: a bounded set of preallocated block buffers between the
/// receiving threads and the writer threads, each of which writes the MeasurementSets of
/// a share of the outputs (output o belongs to writer o % nrWriters). Writers start when
/// the staged blocks reach a high watermark and write until they fall to a low watermark,
/// or write whatever is staged for them when their timer expires or writeAll() asks for
/// it. A writer is woken only when it has something to do (its first block staged, the
/// watermark, writeAll, close), not per block. When every buffer is taken the receivers
/// block (TCP back-pressure); nothing is dropped. A fixed set of buffers of one size, not
/// BufferPool's shelf: their count is the write-behind bound the receivers wait on.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/CorrelatedBlock.h"

namespace rtcp::storage {

/// One received, verified block.
struct StagedBlock {
  CorrelatedHeader header;
  int output = 0;   ///< the MS it goes to, as given to StagingArea::stage()
  int source = -1;  ///< the connection it came by (BlockReceiver::fromSource), for messages
  /// visibilities[baseline][channel][pol] (complex float32), then
  /// nrValidSamples[baseline][channel] (uint32), exactly as received.
  AlignedBuffer<uint8_t> payload;
};

struct StagingOptions {
  size_t capacityBytes = 256u << 20;  ///< bound on staged payload memory
  double highWatermark = 0.75;        ///< fraction of capacity that starts writing
  double lowWatermark = 0.25;         ///< fraction of capacity writing drains down to
  double flushIntervalSeconds = 1.0;  ///< staged blocks wait at most this long
};

class StagingArea {
 public:
  /// nrWriters 0: one writer per output.
  StagingArea(int nrOutputs, size_t blockBytes, StagingOptions options, int nrWriters = 0);

  /// Allocates (and so touches: a page fault per page here) up to count buffers before any
  /// receiver runs, so that receiving does not pay for fresh memory; at most the capacity.
  void preallocate(size_t count);
  /// A free buffer to receive into, blocking while all are taken; nullptr once closed.
  std::unique_ptr<StagedBlock> acquire();
  /// Returns a buffer that was not staged (e.g. its checksum was bad).
  void release(std::unique_ptr<StagedBlock> block);
  /// Queues a filled block for the writer of an output.
  void stage(int output, std::unique_ptr<StagedBlock> block);
  /// Writer side: waits until this writer should write and returns the blocks to write,
  /// of any of its outputs, each output's in the order staged (give each back with
  /// release() once written); empty once closed and drained.
  std::vector<std::unique_ptr<StagedBlock>> nextBatch(int writer);
  int nrWriters() const { return int(wake_.size()); }
  int writerOf(int output) const { return output % nrWriters(); }
  /// Blocks staged and not yet taken by a writer.
  size_t nrQueued() const;
  /// Nothing more is coming for now (e.g. the last connection closed): writers write
  /// what is staged without waiting for a watermark or the timer.
  void writeAll();
  /// No more blocks: writers drain what is staged, then nextBatch() returns empty.
  void close();

  size_t capacityBytes() const { return nrBuffers_ * blockBytes_; }
  size_t blockBytes() const { return blockBytes_; }
  /// Most bytes ever held at once (buffers being filled, staged or being written).
  size_t highWaterBytes() const;
  /// How often a receiver had to wait for a free buffer.
  uint64_t nrBlockedAcquires() const;

 private:
  using Clock = std::chrono::steady_clock;
  bool draining() const { return pressure_ > 0 || queued_ >= highCount_; }
  /// Enters drain mode when due, waking every writer once.
  void checkDrainMode();
  void wakeAll();

  const size_t blockBytes_;
  const size_t nrBuffers_;
  const size_t highCount_, lowCount_;
  const Clock::duration flushInterval_;

  mutable std::mutex mutex_;
  std::condition_variable freeAvailable_;
  std::vector<std::unique_ptr<std::condition_variable>> wake_;  // [writer]
  std::vector<std::unique_ptr<StagedBlock>> free_;
  size_t allocated_ = 0, inUse_ = 0, highWater_ = 0;
  std::vector<std::deque<std::unique_ptr<StagedBlock>>> queues_;  // [output]
  std::vector<Clock::time_point> lastFlush_;                      // [writer]
  std::vector<bool> writeAll_;                                    // [output]
  std::vector<size_t> queuedFor_;                                 // [writer]
  size_t queued_ = 0;  // staged blocks not yet taken by a writer
  int pressure_ = 0;   // receivers waiting for a buffer
  bool drainMode_ = false;
  bool closed_ = false;
  uint64_t blockedAcquires_ = 0;
};

}  // namespace rtcp::storage
