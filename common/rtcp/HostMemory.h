#pragma once
/// \file HostMemory.h
/// What this host has for an observation's parts: observe plans every part's memory
/// against it (observe/MemoryPlan.h), ionproc checks its station buffers against it
/// before it allocates them, so that a buffer too large is a clear error naming
/// OLAP.nrSecondsOfBuffer, not an out-of-memory kill.

#include <optional>
#include <string>

namespace rtcp {

/// MemAvailable, bounded by the cgroup's memory.max minus memory.current (cgroup v2).
struct HostMemory {
  double bytes = 0;
  std::string source;  ///< "MemAvailable" or "the memory.max of cgroup /x"
};
/// nullopt when /proc/meminfo cannot be read.
std::optional<HostMemory> hostMemory();

}  // namespace rtcp
