#pragma once
/// \file ParallelFor.h
/// A loop over independent items (stations, TABs) on a step's OpenMP threads. An
/// exception must not leave an OpenMP region: the loop keeps one an item threw and
/// rethrows it once every item ran.

#include <omp.h>

#include <exception>

namespace rtcp::correlator {

/// Runs body(i, thread) for every i in [0, n) on `threads` threads, scheduled dynamically
/// (items of unequal cost); `thread` is omp_get_thread_num(), for per-thread scratch.
template <typename Body>
void parallelFor(int n, int threads, Body&& body) {
  std::exception_ptr error;
#pragma omp parallel for schedule(dynamic) num_threads(threads)
  for (int i = 0; i < n; ++i) {
    try {
      body(i, omp_get_thread_num());
    } catch (...) {
#pragma omp critical(rtcp_parallel_for_error)
      error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace rtcp::correlator
