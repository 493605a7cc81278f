#pragma once
/// \file SerialisedSlots.h
/// Memory for serialised integrations on their way to storage: fixed-size slots in one
/// mapping asked for 2 MB pages, taken and given back by ownership (SerialisedBytes).
///
/// Why a pool: a storage connection keeps every integration it sent until storage-sink
/// says it is on disk (an MS flush interval, 10 s by default), so for the first interval
/// of an observation each integration was serialised into fresh heap memory. Its 4 KB page
/// faults were 14 % of ionproc's CPU in 10-second capacity trials (`perf record` of
/// ionproc at 40 replayed subbands). Memory first touched costs this guest about 3 s per
/// GB even in 2 MB pages, and memory in 4 KB pages about 2 s per GB at each first access
/// after mapping (a throw-away program, 27 Nov 2026): the pool is faulted in once, at the
/// start (populate()), and reused. Fixed slots in one mapping rather than BufferPool's
/// buffers of exact sizes: one call faults the whole pool in before the observation, and
/// its bound is the memory storage may hold back.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "rtcp/AlignedBuffer.h"

namespace rtcp::ion {

class SerialisedSlots;

/// One serialised integration's bytes: a slot of a SerialisedSlots pool (given back when
/// destroyed) or, when the pool had none to spare, a heap buffer of its own. Move-only.
class SerialisedBytes {
 public:
  SerialisedBytes() = default;
  /// Bytes of its own (read back from the spool, or a pool without a free slot).
  explicit SerialisedBytes(std::vector<uint8_t> bytes);
  ~SerialisedBytes();
  SerialisedBytes(SerialisedBytes&& other) noexcept;
  SerialisedBytes& operator=(SerialisedBytes&& other) noexcept;
  SerialisedBytes(const SerialisedBytes&) = delete;
  SerialisedBytes& operator=(const SerialisedBytes&) = delete;

  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::span<uint8_t> span() { return {data_, size_}; }

 private:
  friend class SerialisedSlots;
  SerialisedBytes(SerialisedSlots* pool, uint8_t* slot, size_t size)
      : pool_(pool), data_(slot), size_(size) {}
  void release();

  SerialisedSlots* pool_ = nullptr;  ///< nullptr: owned_ holds the bytes
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  std::vector<uint8_t> owned_;
};

/// The pool. Thread-safe; it must outlive every SerialisedBytes taken from it.
class SerialisedSlots {
 public:
  /// nrSlots slots of slotBytes each (rounded up to 64 bytes).
  SerialisedSlots(size_t slotBytes, size_t nrSlots);

  /// `size` bytes (not zeroed): a slot given back before (warm), else a slot never used,
  /// else, with every slot taken or size beyond a slot, a heap buffer.
  SerialisedBytes take(size_t size);

  /// Faults every slot in now (one call; the kernel's zeroed pages), so that none is
  /// first touched while an observation runs.
  void populate() { memory_.populate(); }

  size_t slotBytes() const { return slotBytes_; }
  size_t nrSlots() const { return nrSlots_; }
  uint64_t reused() const;      ///< takes served by a slot given back before
  uint64_t overflowed() const;  ///< takes served from the heap

 private:
  friend class SerialisedBytes;
  void giveBack(uint8_t* slot);

  size_t slotBytes_, nrSlots_;
  AlignedBuffer<uint8_t> memory_;  ///< [slot][slotBytes_]
  mutable std::mutex mutex_;
  std::vector<uint8_t*> free_;  ///< given back, most recent last (the warmest)
  size_t neverUsed_ = 0;        ///< slots [neverUsed_, nrSlots_) were never handed out
  uint64_t reused_ = 0, overflowed_ = 0;
};

}  // namespace rtcp::ion
