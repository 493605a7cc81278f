#include "SerialisedSlots.h"

#include <utility>

namespace rtcp::ion {

SerialisedBytes::SerialisedBytes(std::vector<uint8_t> bytes)
    : data_(bytes.data()), size_(bytes.size()), owned_(std::move(bytes)) {}

SerialisedBytes::~SerialisedBytes() { release(); }

SerialisedBytes::SerialisedBytes(SerialisedBytes&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owned_(std::move(other.owned_)) {}

SerialisedBytes& SerialisedBytes::operator=(SerialisedBytes&& other) noexcept {
  if (this == &other) return *this;
  release();
  pool_ = std::exchange(other.pool_, nullptr);
  data_ = std::exchange(other.data_, nullptr);
  size_ = std::exchange(other.size_, 0);
  owned_ = std::move(other.owned_);
  return *this;
}

void SerialisedBytes::release() {
  if (pool_) pool_->giveBack(data_);
  pool_ = nullptr;
  data_ = nullptr;
  size_ = 0;
  owned_ = {};
}

SerialisedSlots::SerialisedSlots(size_t slotBytes, size_t nrSlots)
    : slotBytes_((slotBytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment),
      nrSlots_(nrSlots),
      memory_(AlignedBuffer<uint8_t>::unpopulated(slotBytes_ * nrSlots_)) {
  free_.reserve(nrSlots_);
}

SerialisedBytes SerialisedSlots::take(size_t size) {
  std::unique_lock lock(mutex_);
  if (size <= slotBytes_ && !free_.empty()) {
    uint8_t* slot = free_.back();
    free_.pop_back();
    ++reused_;
    return {this, slot, size};
  }
  if (size <= slotBytes_ && neverUsed_ < nrSlots_)
    return {this, memory_.data() + slotBytes_ * neverUsed_++, size};
  ++overflowed_;
  lock.unlock();  // the heap's allocation outside the lock
  return SerialisedBytes(std::vector<uint8_t>(size));
}

void SerialisedSlots::giveBack(uint8_t* slot) {
  std::lock_guard lock(mutex_);
  free_.push_back(slot);
}

uint64_t SerialisedSlots::reused() const {
  std::lock_guard lock(mutex_);
  return reused_;
}

uint64_t SerialisedSlots::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

}  // namespace rtcp::ion
