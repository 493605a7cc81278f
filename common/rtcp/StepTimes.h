#pragma once
/// \file StepTimes.h
/// Time spent per step of a processing chain, reported at the end of a run as COBALT's
/// performance counters and DP3's step timers do. A step is timed with one steady_clock
/// pair per call (per block, never per sample); the sums are relaxed atomics, so threads
/// may share one instance.
///
///   StepTimes times({"input conversion", "filter bank"});
///   auto t = StepTimes::Clock::now();
///   convert(...);  t = times.lap(0, t);
///   filter(...);   t = times.lap(1, t);
///   log(times.report());  // "input conversion 0.84 s (1200 x 0.70 ms), filter bank ..."

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace rtcp {

class StepTimes {
 public:
  using Clock = std::chrono::steady_clock;

  explicit StepTimes(std::vector<std::string> names = {});
  /// Copies are snapshots of the sums.
  StepTimes(const StepTimes& other);
  StepTimes& operator=(const StepTimes& other);

  /// Adds the time from `since` to now to `step`, counts one call, and returns now (the
  /// start of the next step).
  Clock::time_point lap(size_t step, Clock::time_point since) {
    const Clock::time_point now = Clock::now();
    add(step, now - since);
    return now;
  }
  void add(size_t step, Clock::duration duration) {
    nanoseconds_[step].fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count(),
        std::memory_order_relaxed);
    calls_[step].fetch_add(1, std::memory_order_relaxed);
  }

  size_t size() const { return names_.size(); }
  const std::string& name(size_t step) const { return names_.at(step); }
  double seconds(size_t step) const;
  uint64_t calls(size_t step) const;
  double totalSeconds() const;

  /// One line: each step's seconds, calls and mean per call, in step order.
  std::string report() const;

 private:
  std::vector<std::string> names_;
  std::unique_ptr<std::atomic<int64_t>[]> nanoseconds_;
  std::unique_ptr<std::atomic<uint64_t>[]> calls_;
};

}  // namespace rtcp
