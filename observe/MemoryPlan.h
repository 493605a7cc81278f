#pragma once
/// \file MemoryPlan.h
/// What an observation's parts on this host will hold in memory, from the settings, and
/// what this host has (MemAvailable, and the limit of observe's cgroup when there is one):
/// an observation that does not fit is refused before anything starts, naming the keys
/// that set the size, rather than started for the kernel's out-of-memory killer.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rtcp/HostMemory.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::observe {

/// One part's planned memory and what sets it.
struct MemoryItem {
  std::string part;  ///< "ionproc's station buffers", ...
  double bytes = 0;
  std::string keys;  ///< how the size follows from the parset, naming its keys
};

/// The parts on this host: which of them run here, and how many ranks.
struct LocalParts {
  int ionprocStations = 0;  ///< stations whose ionproc runs here
  int ranks = 0;            ///< correlator ranks here (0: all on other hosts)
  bool storageSink = false;
  int storageSubbands = 0;  ///< MSs the storage-sink here writes
};

std::vector<MemoryItem> planMemory(const ObservationSettings& s, const LocalParts& local);

// HostMemory, hostMemory(): rtcp/HostMemory.h (ionproc checks its buffers with it too).

/// The refusal ("planned memory ... exceeds ...") when the plan does not fit into
/// available (less a reserve for the rest of the host), else "".
std::string memoryRefusal(const std::vector<MemoryItem>& plan, const HostMemory& available);

/// An out-of-memory kill as the kernel logs it (/dev/kmsg record "6,SEQ,USEC,-;Out of
/// memory: Killed process PID (PROGRAM) ..." or "Memory cgroup out of memory: ...").
struct OomKill {
  int pid = 0;
  std::string program;     ///< the process's name (at most 15 characters)
  double bootSeconds = 0;  ///< when, in seconds since boot (CLOCK_MONOTONIC)
};
std::optional<OomKill> parseOomKill(const std::string& record);

/// Whether the kernel log (readable as root) says its out-of-memory killer killed process
/// pid, or a process called program (a rank under mpirun), since sinceBootSeconds.
bool killedForMemory(int pid, const std::string& program, double sinceBootSeconds);
/// Seconds since boot now (CLOCK_MONOTONIC, the kernel log's clock).
double bootSeconds();

}  // namespace rtcp::observe
