#pragma once
/// \file Queue.h
/// A blocking FIFO between pipeline stages, and a Pool of preallocated buffers with a
/// free and a filled queue (COBALT style): producers take free buffers, fill them and
/// append them to filled; consumers return them to free. Queues count how long items
/// waited and how often a consumer found the queue empty.

#include <chrono>
#include <condition_variable>
#include <deque>
#include <iomanip>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace rtcp {

template <typename T>
class Queue {
 public:
  explicit Queue(std::string name = "queue", size_t capacity = SIZE_MAX)
      : name_(std::move(name)), capacity_(capacity) {}

  /// Appends an item, blocking while the queue is full. Returns false once closed.
  bool push(T item) {
    std::unique_lock lock(mutex_);
    notFull_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back({std::move(item), Clock::now()});
    notEmpty_.notify_one();
    return true;
  }
  /// Appends without blocking; false when full or closed.
  bool tryPush(T item) {
    std::lock_guard lock(mutex_);
    if (closed_ || items_.size() >= capacity_) return false;
    items_.push_back({std::move(item), Clock::now()});
    notEmpty_.notify_one();
    return true;
  }
  /// Removes the oldest item, blocking while empty; nullopt once closed and drained.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    if (items_.empty()) ++emptyPops_;
    notEmpty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    return takeFront();
  }
  /// As pop(), but gives up after a timeout.
  template <typename Rep, typename Period>
  std::optional<T> popFor(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock lock(mutex_);
    if (items_.empty()) ++emptyPops_;
    notEmpty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    return takeFront();
  }
  /// No more pushes; pop() drains what is left, then returns nullopt.
  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    notEmpty_.notify_all();
    notFull_.notify_all();
  }
  size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }
  const std::string& name() const { return name_; }
  /// Mean seconds an item spent in the queue, and how often pop() found it empty.
  double meanWaitSeconds() const {
    std::lock_guard lock(mutex_);
    return popped_ ? totalWait_.count() / popped_ : 0.0;
  }
  uint64_t emptyPops() const {
    std::lock_guard lock(mutex_);
    return emptyPops_;
  }
  /// Items taken out so far.
  uint64_t pops() const {
    std::lock_guard lock(mutex_);
    return popped_;
  }
  /// One line for a final report: "NAME: N items, mean wait W ms, found empty E times".
  std::string report() const {
    std::lock_guard lock(mutex_);
    std::ostringstream out;
    out << name_ << ": " << popped_ << " items, mean wait " << std::fixed << std::setprecision(3)
        << (popped_ ? 1e3 * totalWait_.count() / double(popped_) : 0.0) << " ms, found empty "
        << emptyPops_ << " times";
    return out.str();
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Item {
    T value;
    Clock::time_point enqueued;
  };
  std::optional<T> takeFront() {
    if (items_.empty()) return std::nullopt;
    Item item = std::move(items_.front());
    items_.pop_front();
    totalWait_ += Clock::now() - item.enqueued;
    ++popped_;
    notFull_.notify_one();
    return std::move(item.value);
  }

  std::string name_;
  size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable notEmpty_, notFull_;
  std::deque<Item> items_;
  bool closed_ = false;
  std::chrono::duration<double> totalWait_{0};
  uint64_t popped_ = 0;
  uint64_t emptyPops_ = 0;
};

/// Preallocated buffers handed over by ownership between a producer and a consumer. A
/// fixed set, not BufferPool's shelf: the number of buffers is the pipeline's depth (how
/// far the producer may run ahead), and a producer with none free waits for one.
template <typename Buffer>
class Pool {
 public:
  explicit Pool(std::string name) : free(name + ".free"), filled(name + ".filled") {}
  /// Adds a preallocated buffer to the free queue.
  void add(std::unique_ptr<Buffer> buffer) { free.push(std::move(buffer)); }
  void close() {
    free.close();
    filled.close();
  }
  /// Both queues' report lines, joined.
  std::string report() const { return filled.report() + "; " + free.report(); }

  Queue<std::unique_ptr<Buffer>> free;
  Queue<std::unique_ptr<Buffer>> filled;
};

}  // namespace rtcp
