#include "StagingArea.h"

#include <algorithm>

namespace rtcp::storage {

StagingArea::StagingArea(int nrOutputs, size_t blockBytes, StagingOptions options, int nrWriters)
    : blockBytes_(std::max<size_t>(blockBytes, 1)),
      nrBuffers_(std::max<size_t>(options.capacityBytes / blockBytes_, 1)),
      highCount_(std::clamp<size_t>(size_t(options.highWatermark * nrBuffers_), 1, nrBuffers_)),
      lowCount_(std::min(size_t(options.lowWatermark * nrBuffers_), highCount_ - 1)),
      flushInterval_(std::chrono::duration_cast<Clock::duration>(
          std::chrono::duration<double>(options.flushIntervalSeconds))),
      queues_(size_t(nrOutputs)),
      writeAll_(size_t(nrOutputs), false) {
  const int writers = std::max(1, nrWriters > 0 ? std::min(nrWriters, nrOutputs) : nrOutputs);
  for (int w = 0; w < writers; ++w) wake_.push_back(std::make_unique<std::condition_variable>());
  lastFlush_.assign(size_t(writers), Clock::now());
  queuedFor_.assign(size_t(writers), 0);
}

void StagingArea::wakeAll() {
  for (auto& wake : wake_) wake->notify_one();  // one thread waits per writer
}

void StagingArea::checkDrainMode() {
  if (!drainMode_ && draining()) {
    drainMode_ = true;
    wakeAll();
  }
}

std::unique_ptr<StagedBlock> StagingArea::acquire() {
  std::unique_lock lock(mutex_);
  if (inUse_ == nrBuffers_ && !closed_) {
    ++blockedAcquires_;
    ++pressure_;
    drainMode_ = true;
    wakeAll();  // a full staging area must be written, whatever the watermark
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

void StagingArea::preallocate(size_t count) {
  count = std::min(count, nrBuffers_);
  for (std::unique_lock lock(mutex_); allocated_ < count;) {
    ++allocated_;
    lock.unlock();
    auto block = std::make_unique<StagedBlock>();
    block->payload = AlignedBuffer<uint8_t>(blockBytes_);
    lock.lock();
    free_.push_back(std::move(block));
  }
}

void StagingArea::release(std::unique_ptr<StagedBlock> block) {
  std::lock_guard lock(mutex_);
  if (block) free_.push_back(std::move(block));
  --inUse_;
  if (pressure_ > 0) freeAvailable_.notify_one();
}

void StagingArea::stage(int output, std::unique_ptr<StagedBlock> block) {
  std::lock_guard lock(mutex_);
  block->output = output;
  queues_.at(size_t(output)).push_back(std::move(block));
  ++queued_;
  const int writer = writerOf(output);
  // A writer with nothing staged sleeps without a timeout: wake it to start its timer.
  if (queuedFor_[size_t(writer)]++ == 0) wake_[size_t(writer)]->notify_one();
  checkDrainMode();
}

std::vector<std::unique_ptr<StagedBlock>> StagingArea::nextBatch(int writer) {
  std::unique_lock lock(mutex_);
  const size_t w = size_t(writer);
  std::vector<std::unique_ptr<StagedBlock>> batch;
  // Takes blocks of output o while more(); returns whether it took any.
  auto take = [&](size_t o, auto more) {
    auto& queue = queues_[o];
    while (!queue.empty() && more()) {
      batch.push_back(std::move(queue.front()));
      queue.pop_front();
      --queued_;
      --queuedFor_[w];
    }
    if (queue.empty()) writeAll_[o] = false;
  };
  const auto always = [] { return true; };
  for (;;) {
    checkDrainMode();
    if (queuedFor_[w] > 0) {
      const auto now = Clock::now();
      const bool timerDue = now - lastFlush_[w] >= flushInterval_;
      for (size_t o = w; o < queues_.size(); o += wake_.size())
        if (closed_ || timerDue || writeAll_[o]) take(o, always);
      if (timerDue) lastFlush_[w] = now;
      if (drainMode_) {
        const auto aboveLow = [&] { return queued_ > lowCount_ || pressure_ > 0; };
        for (size_t o = w; o < queues_.size(); o += wake_.size()) take(o, aboveLow);
        if (queued_ <= lowCount_ && pressure_ == 0) drainMode_ = false;
      }
      if (!batch.empty()) return batch;
    } else if (closed_) {
      return batch;
    }
    if (queuedFor_[w] == 0)
      wake_[w]->wait(lock);
    else
      wake_[w]->wait_until(lock, lastFlush_[w] + flushInterval_);
  }
}

void StagingArea::writeAll() {
  std::lock_guard lock(mutex_);
  for (size_t o = 0; o < queues_.size(); ++o) writeAll_[o] = !queues_[o].empty();
  wakeAll();
}

void StagingArea::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
  wakeAll();
  freeAvailable_.notify_all();
}

size_t StagingArea::nrQueued() const {
  std::lock_guard lock(mutex_);
  return queued_;
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
