#include "StagingArea.h"

#include <algorithm>

namespace rtcp::storage {

StagingArea::StagingArea(int nrOutputs, size_t blockBytes, StagingOptions options)
    : blockBytes_(std::max<size_t>(blockBytes, 1)),
      nrBuffers_(std::max<size_t>(options.capacityBytes / blockBytes_, 1)),
      highCount_(std::clamp<size_t>(size_t(options.highWatermark * nrBuffers_), 1, nrBuffers_)),
      lowCount_(std::min(size_t(options.lowWatermark * nrBuffers_), highCount_ - 1)),
      flushInterval_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options.flushIntervalSeconds))),
      queues_(size_t(nrOutputs)),
      lastFlush_(size_t(nrOutputs), Clock::now()),
      writeAll_(size_t(nrOutputs), false) {}

std::unique_ptr<StagedBlock> StagingArea::acquire() {
  std::unique_lock lock(mutex_);
  if (inUse_ == nrBuffers_ && !closed_) {
    ++blockedAcquires_;
    ++pressure_;
    work_.notify_all();  // a full staging area must be written, whatever the watermark
    freeAvailable_.wait(lock, [&] { return closed_ || inUse_ < nrBuffers_; });
    --pressure_;
  }
  if (closed_) return nullptr;
  ++inUse_;
  highWater_ = std::max(highWater_, inUse_);
  if (!free_.empty()) {
    auto block = std::move(free_.back());
    free_.pop_back();
    return block;
  }
  ++allocated_;
  lock.unlock();  // buffers are allocated once each, on first use
  auto block = std::make_unique<StagedBlock>();
  block->payload = AlignedBuffer<uint8_t>(blockBytes_);
  return block;
}

void StagingArea::release(std::unique_ptr<StagedBlock> block) {
  std::lock_guard lock(mutex_);
  if (block) free_.push_back(std::move(block));
  --inUse_;
  freeAvailable_.notify_one();
}

void StagingArea::stage(int output, std::unique_ptr<StagedBlock> block) {
  std::lock_guard lock(mutex_);
  queues_.at(size_t(output)).push_back(std::move(block));
  ++queued_;
  if (draining()) drainMode_ = true;
  work_.notify_all();
}

std::vector<std::unique_ptr<StagedBlock>> StagingArea::nextBatch(int output) {
  std::unique_lock lock(mutex_);
  auto& queue = queues_.at(size_t(output));
  std::vector<std::unique_ptr<StagedBlock>> batch;
  auto take = [&] {
    batch.push_back(std::move(queue.front()));
    queue.pop_front();
    --queued_;
    if (queue.empty()) writeAll_[output] = false;
  };
  for (;;) {
    if (draining()) drainMode_ = true;
    if (!queue.empty()) {
      const auto now = Clock::now();
      if (closed_ || writeAll_[output] || now - lastFlush_[output] >= flushInterval_) {
        while (!queue.empty()) take();
        lastFlush_[output] = now;
        return batch;
      }
      if (drainMode_) {
        while (!queue.empty() && (queued_ > lowCount_ || pressure_ > 0)) take();
        if (queued_ <= lowCount_ && pressure_ == 0) drainMode_ = false;
        if (!batch.empty()) return batch;
      }
    } else if (closed_) {
      return batch;
    }
    if (queue.empty())
      work_.wait(lock);
    else
      work_.wait_until(lock, lastFlush_[output] + flushInterval_);
  }
}

void StagingArea::writeAll() {
  std::lock_guard lock(mutex_);
  for (size_t o = 0; o < queues_.size(); ++o) writeAll_[o] = !queues_[o].empty();
  work_.notify_all();
}

void StagingArea::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  work_.notify_all();
  freeAvailable_.notify_all();
}

size_t StagingArea::highWaterBytes() const {
  std::lock_guard lock(mutex_);
  return highWater_ * blockBytes_;
}

uint64_t StagingArea::nrBlockedAcquires() const {
  std::lock_guard lock(mutex_);
  return blockedAcquires_;
}

}  // namespace rtcp::storage
