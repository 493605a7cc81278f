#pragma once
/// \file BufferPool.h
/// Memory handed out by shared ownership and taken back, not freed, when the last owner
/// lets go: a process that receives the same shapes over and over (link calls,
/// integrations, served station blocks) reuses memory that is already faulted in. Fresh
/// memory costs a page fault per 4 KB, and in a paravirtualised guest those faults were
/// 5-12 % of ionproc's CPU. Two shelves of the one mechanism (an idle shelf the last
/// owner's deleter returns to; freed instead once the pool is gone):
///
/// - BufferPool: byte buffers of any size, kept by exact size (steady traffic repeats a few
///   shapes), up to a bound on the idle bytes; a return beyond it first frees idle buffers
///   of other sizes, then itself. For traffic whose sizes are not known in advance.
/// - Recycler<T>: whole objects of one type, their own buffers with them (StationBlock),
///   unbounded: it keeps as many as were ever out at once.
///
/// Contents of a taken buffer or object are whatever its last user left: the taker fills
/// it. The fixed-slot pools are elsewhere, each for its reason: Pool (Queue.h), a fixed
/// set of buffers between two threads whose count is the pipeline's depth;
/// SerialisedSlots (output/), slots of one size in one mapping faulted in before the
/// observation; StagingArea (storage-sink/), buffers whose count is the write-behind bound.

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

template <typename T>
class Recycler {
 public:
  /// An idle object, else a new T(). It returns to the shelf when its last shared_ptr
  /// goes, even after the recycler itself is gone (then it is freed).
  std::shared_ptr<T> take() {
    std::unique_ptr<T> object;
    {
      std::lock_guard lock(shelf_->mutex);
      if (!shelf_->idle.empty()) {
        object = std::move(shelf_->idle.back());
        shelf_->idle.pop_back();
      }
    }
    if (!object) object = std::make_unique<T>();
    std::weak_ptr<Shelf> shelf = shelf_;
    return {object.release(), [shelf](T* returned) {
              std::unique_ptr<T> owned(returned);
              if (auto s = shelf.lock()) {
                std::lock_guard lock(s->mutex);
                s->idle.push_back(std::move(owned));
              }
            }};
  }

 private:
  struct Shelf {
    std::mutex mutex;
    std::vector<std::unique_ptr<T>> idle;
  };
  std::shared_ptr<Shelf> shelf_ = std::make_shared<Shelf>();
};

}  // namespace rtcp
