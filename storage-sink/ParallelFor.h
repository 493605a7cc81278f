#pragma once
/// \file ParallelFor.h
/// Work on many MSs at once where it mostly waits for the file system (creating, closing).

#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace rtcp::storage {

/// Calls work(i) for every i in [0, n) on up to `threads` threads. The first exception
/// thrown stops the items not yet started and is rethrown once every thread has ended.
inline void forEachInParallel(size_t n, int threads, const std::function<void(size_t)>& work) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureMutex;
  auto run = [&] {
    for (size_t i = next++; i < n; i = next++) try {
        work(i);
      } catch (...) {
        std::lock_guard lock(failureMutex);
        if (!failure) failure = std::current_exception();
        next = n;
      }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::min<int>(threads, int(n)); ++t) pool.emplace_back(run);
  run();  // the calling thread is one of them
  for (std::thread& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace rtcp::storage
