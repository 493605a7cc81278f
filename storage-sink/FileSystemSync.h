#pragma once
/// \file FileSystemSync.h
/// One syncfs for many files: flushing each table of hundreds of MeasurementSets with fsync
/// costs tens of fsyncs per MS (seconds over an observation); syncing their file systems
/// once at the end gives the same durability.

#include <string>
#include <vector>

namespace rtcp::storage {

/// Flushes everything written to the file systems that hold paths (files or directories;
/// each file system once) to the disk. Throws std::runtime_error naming the path whose
/// file system reported an error (e.g. a write-back that failed).
void syncFileSystems(const std::vector<std::string>& paths);

}  // namespace rtcp::storage
