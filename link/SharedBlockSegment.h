#pragma once
/// \file SharedBlockSegment.h
/// The link's shared-memory path (FCNP's intent: the compute side takes station blocks
/// straight from the I/O node's buffers). ionproc serves each block into a slot of a POSIX
/// shared-memory segment and hands the rank a reference (the slot) and its lifetime (a
/// lease, held until the rank releases it or asks for that station's next block); the
/// rank maps the segment read-only and uses the block in place. Only ranks on ionproc's
/// host can map it; ranks elsewhere use the socket path (serveStationBlock).
///
/// Layout: one 2 MB page of SegmentHeader, then nrSlots slots of slotBytes each (2 MB
/// aligned), a slot holding one StationBlock laid out by StationBlock::over().

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "rtcp/SharedMemory.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {

/// What a rank needs to map a segment; travels in a forwarded call's answer.
struct SharedSegmentInfo {
  SharedMemoryName memory;  ///< name, size and nonce (which proves the same segment)
  uint64_t slotBytes = 0;
  uint64_t firstSlotOffset = 0;
  int32_t nrSlots = 0;
  int32_t reserved = 0;
};

/// Where a lent block lies in the segment.
struct SharedBlockLocation {
  int32_t slot = -1;
  int32_t reserved = 0;
  uint64_t offset = 0;  ///< of the slot, from the segment's start
};

/// ionproc's side: creates (and at its end unlinks) the segment and lends its slots.
class SharedBlockSegment {
 public:
  /// Slots for blocks of up to `slotBytes` bytes (StationBlock::bytesInOnePiece).
  SharedBlockSegment(int nrSlots, size_t slotBytes);
  ~SharedBlockSegment();
  SharedBlockSegment(const SharedBlockSegment&) = delete;
  SharedBlockSegment& operator=(const SharedBlockSegment&) = delete;

  const SharedSegmentInfo& info() const { return info_; }

  /// Leases a free slot to `holder` (e.g. rank and station), first returning the slot that
  /// holder held (it asks for its next block, so it is done with the last). Waits up to
  /// timeoutSeconds for a slot; std::runtime_error when none came free.
  SharedBlockLocation lease(uint64_t holder, double timeoutSeconds = 30);
  /// Returns every slot whose holder satisfies (holder & mask) == value.
  void release(uint64_t mask, uint64_t value);
  /// Called with each slot whose lease ends (before the slot can be lent again); set
  /// before the first lease.
  void onRelease(std::function<void(int slot)> callback) { onRelease_ = std::move(callback); }
  /// A block of the given shape over slot `slot` (whose lease the caller holds).
  StationBlock block(int slot, int nrSubbands, int nrSamples, int bitsPerSample);

  /// A block with its rows elsewhere (StationBlock::overRowTable) over slot `slot`.
  StationBlock rowTable(int slot, int nrSubbands, int nrSamples, int bitsPerSample);

  int leased() const;
  /// The raw bytes of slot `slot`.
  std::span<uint8_t> slotBytes(int slot);

 private:
  SharedSegmentInfo info_;
  SharedMemory memory_;
  uint8_t* base_ = nullptr;  ///< the segment's start
  mutable std::mutex mutex_;
  std::condition_variable freed_;
  std::vector<int> free_;
  std::vector<int64_t> holderOf_;  ///< [slot], -1: free
  std::function<void(int)> onRelease_;
  void freeSlot(size_t slot);  ///< with mutex_ held
};

/// A rank's side: the segment mapped read-only.
class SharedBlockMapping {
 public:
  /// Maps the segment; std::runtime_error when it cannot be opened or is not the one
  /// `info` describes (another host's, another run's).
  explicit SharedBlockMapping(const SharedSegmentInfo& info);
  ~SharedBlockMapping();
  SharedBlockMapping(const SharedBlockMapping&) = delete;
  SharedBlockMapping& operator=(const SharedBlockMapping&) = delete;

  /// The lent block at `location` with the shape of `header` (which it takes), in place:
  /// its buffers point into the read-only mapping and must only be read. A block whose
  /// rows were lent in ionproc's sample ring (header.rowsInRing) reads them from `ring`
  /// (that ring mapped; std::runtime_error without it, or for a row outside it).
  StationBlock block(const SharedBlockLocation& location, const StationBlockHeader& header,
                     const SharedMemory* ring = nullptr) const;
  /// The raw bytes of the slot at `location`.
  std::span<const uint8_t> slotBytes(const SharedBlockLocation& location) const;

 private:
  SharedSegmentInfo info_;
  SharedMemory memory_;
  const uint8_t* base_ = nullptr;  ///< the segment's start
};

}  // namespace rtcp::ion
