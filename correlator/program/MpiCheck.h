#pragma once
/// \file MpiCheck.h
/// MPI calls' status turned into exceptions with MPI's own words, and waiting for a
/// request without spinning.

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>

namespace rtcp::correlator {

/// Throws std::runtime_error "what: MPI's error string" unless status is MPI_SUCCESS.
inline void checkMpi(int status, const char* what) {
  if (status != MPI_SUCCESS) {
    char message[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(status, message, &length);
    throw std::runtime_error(std::string(what) + ": " + std::string(message, size_t(length)));
  }
}

/// Waits for request with sleeps that back off from 20 us to 2 ms (MPICH busy-polls in
/// blocking waits: a partner that is a whole block late costs no CPU); returns the
/// seconds waited.
inline double waitSleeping(MPI_Request& request) {
  const auto start = std::chrono::steady_clock::now();
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    checkMpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) break;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(2000));
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace rtcp::correlator
