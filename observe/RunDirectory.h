#pragma once
/// \file RunDirectory.h
/// One observation per directory and per MeasurementSet: before anything starts, observe
/// refuses what an earlier run left where this one would write (its files in the
/// observation directory, the MSs this host would write), and it holds a lock on the
/// directory while it runs, so that two observations sharing it cannot overwrite each
/// other's logs and summaries.

#include <string>
#include <vector>

#include "ObservationPlan.h"

namespace rtcp::observe {

/// What an earlier run left where this one would write, one message each naming the
/// file or MS and what to do; empty when nothing. Also a directory other users may write
/// into (they could replace the observation's files).
std::vector<std::string> earlierRunProblems(const ObservationPlan& plan);

/// An exclusive flock on DIR/observe.lock (holding observe's process id), kept until
/// destroyed (or observe ends, however it ends).
class DirectoryLock {
 public:
  /// The directory must exist. Throws std::runtime_error naming the directory and the
  /// process holding it when another observation does.
  explicit DirectoryLock(const std::string& directory);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  static constexpr const char* kFileName = "observe.lock";

 private:
  int fd_ = -1;
};

}  // namespace rtcp::observe
