#include "rtcp/BufferPool.h"

#include <utility>

namespace rtcp {

/// The idle buffers; shared with every buffer out, so a late return finds it or frees.
struct BufferPool::Shelf {
  explicit Shelf(size_t maxIdle) : maxIdleBytes(maxIdle) {}

  void give(AlignedBuffer<uint8_t>&& buffer) {
    std::lock_guard lock(mutex);
    // Shapes change (another observation): idle buffers of other sizes make room first.
    for (auto it = idle.begin();
         statistics.idleBytes + buffer.size() > maxIdleBytes && it != idle.end();) {
      if (it->first == buffer.size() || it->second.empty()) {
        ++it;
        continue;
      }
      statistics.idleBytes -= it->first;
      it->second.pop_back();
      ++statistics.discarded;
    }
    if (statistics.idleBytes + buffer.size() > maxIdleBytes) {
      ++statistics.discarded;
      return;  // freed as `buffer` goes
    }
    statistics.idleBytes += buffer.size();
    idle[buffer.size()].push_back(std::move(buffer));
  }

  const size_t maxIdleBytes;
  mutable std::mutex mutex;
  std::map<size_t, std::vector<AlignedBuffer<uint8_t>>> idle;  ///< by size
  Statistics statistics;
};

BufferPool::BufferPool(size_t maxIdleBytes) : shelf_(std::make_shared<Shelf>(maxIdleBytes)) {}

std::shared_ptr<AlignedBuffer<uint8_t>> BufferPool::take(size_t bytes) {
  auto buffer = std::make_unique<AlignedBuffer<uint8_t>>();
  {
    std::lock_guard lock(shelf_->mutex);
    ++shelf_->statistics.taken;
    const auto it = shelf_->idle.find(bytes);
    if (it != shelf_->idle.end() && !it->second.empty()) {
      *buffer = std::move(it->second.back());
      it->second.pop_back();
      shelf_->statistics.idleBytes -= bytes;
      ++shelf_->statistics.reused;
    }
  }
  if (buffer->size() != bytes) *buffer = AlignedBuffer<uint8_t>::toBeFilled(bytes);
  std::weak_ptr<Shelf> shelf = shelf_;
  return {buffer.release(), [shelf](AlignedBuffer<uint8_t>* b) {
            std::unique_ptr<AlignedBuffer<uint8_t>> owned(b);
            if (auto s = shelf.lock(); s && b->size() > 0) s->give(std::move(*b));
          }};
}

BufferPool::Statistics BufferPool::statistics() const {
  std::lock_guard lock(shelf_->mutex);
  return shelf_->statistics;
}

}  // namespace rtcp
