#pragma once
/// \file MpiCheck.h
/// MPI calls' status turned into exceptions with MPI's own words.

#include <mpi.h>

#include <stdexcept>
#include <string>

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

}  // namespace rtcp::correlator
