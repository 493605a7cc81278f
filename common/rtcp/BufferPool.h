#pragma once
/// \file BufferPool.h
/// Byte buffers handed out by shared ownership and taken back, not freed, when the last
/// owner lets go: a process that receives the same shapes over and over (link calls,
/// integrations) reuses memory that is already faulted in. Fresh memory costs a page fault
/// per 4 KB, and in a paravirtualised guest those faults were 5-12 % of ionproc's CPU.
///
/// Buffers are kept by exact size (steady traffic repeats a few shapes), up to a bound on
/// the idle bytes; a return beyond it first frees idle buffers of other sizes, then itself.
/// Contents of a taken buffer are whatever its last user left: the taker fills it.

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "rtcp/AlignedBuffer.h"

namespace rtcp {

class BufferPool {
 public:
  explicit BufferPool(size_t maxIdleBytes = size_t(256) << 20);

  /// A buffer of exactly `bytes` bytes, idle one reused when there is one. It returns to
  /// the pool when its last shared_ptr goes, even after the pool itself is gone (then it
  /// is freed).
  std::shared_ptr<AlignedBuffer<uint8_t>> take(size_t bytes);

  struct Statistics {
    uint64_t taken = 0;
    uint64_t reused = 0;     ///< takes served by an idle buffer
    size_t idleBytes = 0;    ///< bytes kept for reuse now
    uint64_t discarded = 0;  ///< buffers freed to keep within the idle bound
  };
  Statistics statistics() const;

 private:
  struct Shelf;
  std::shared_ptr<Shelf> shelf_;
};

}  // namespace rtcp
