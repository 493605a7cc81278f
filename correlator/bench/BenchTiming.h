#pragma once
// Timing helper of the correlator benchmarks.
#include <algorithm>
#include <chrono>

#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {

inline double steadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/// Best seconds per call of `run` over `repeats` rounds, each round long enough (at least
/// minSeconds) to hide timer noise; one warm-up call first. `seconds` is the clock: wall
/// time by default, or processCpuSeconds for CPU seconds per call (every thread's).
template <typename Function, typename Clock = double (*)()>
double bestSecondsPerCall(Function run, int repeats = 5, double minSeconds = 0.2,
                          Clock seconds = steadySeconds) {
  run();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    int calls = 0;
    const double start = seconds();
    double elapsed = 0;
    do {
      run();
      ++calls;
      elapsed = seconds() - start;
    } while (elapsed < minSeconds);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

}  // namespace rtcp::correlator::bench
