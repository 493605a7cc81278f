#pragma once
// Timing helper of the correlator benchmarks.
#include <algorithm>
#include <chrono>

namespace rtcp::correlator::bench {

/// Best seconds per call of `run` over `repeats` rounds, each round long enough (at least
/// minSeconds) to hide timer noise; one warm-up call first.
template <typename Function>
double bestSecondsPerCall(Function run, int repeats = 5, double minSeconds = 0.2) {
  using Clock = std::chrono::steady_clock;
  run();
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    int calls = 0;
    const auto start = Clock::now();
    double elapsed = 0;
    do {
      run();
      ++calls;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < minSeconds);
    best = std::min(best, elapsed / calls);
  }
  return best;
}

}  // namespace rtcp::correlator::bench
