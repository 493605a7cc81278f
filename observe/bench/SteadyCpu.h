#pragma once
/// \file SteadyCpu.h
/// The CPU each part of a running observation uses in its steady state: sampled from
/// /proc while observe runs, between the moments ionproc's status file shows the
/// observation a quarter and three quarters done. Start-up (buffers faulted in, FFTW
/// plans, MS creation) and the end fall outside the window, and no second, longer trial
/// is needed (one at tens of subbands would record more than this machine's memory holds
/// in its page cache, and replaying from disk measures the disk).

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rtcp::observe::bench {

/// The first process called `part` (its comm) among the descendants of root; nullopt when
/// none runs (yet).
std::optional<pid_t> findPart(pid_t root, const std::string& part);
/// User + system CPU seconds of a running process (its ended threads' included); nullopt
/// when it is gone.
std::optional<double> processCpuSeconds(pid_t pid);

class SteadyCpu {
 public:
  /// parts: process names (comm) counted, among the descendants of `root` (observe).
  SteadyCpu(pid_t root, std::string ionprocStatusPath, std::vector<std::string> parts);

  /// One sample: call every fraction of a second while observe runs.
  void sample();

  /// CPU seconds per observed second per part over the window; empty when the status
  /// never showed both moments (a trial that failed early).
  std::optional<std::map<std::string, double>> perObservedSecond() const;
  /// Seconds per observed second that the part's threads were ready to run but waited for
  /// a core (the scheduler's run-queue wait, /proc/PID/task/TID/schedstat), same window.
  std::optional<std::map<std::string, double>> waitPerObservedSecond() const;
  /// CPU seconds per observed second of each process of a part that runs several (the
  /// correlator's ranks: "correlator.rank<N>", N its PMI_RANK), same window.
  std::optional<std::map<std::string, double>> perProcessPerObservedSecond() const;

 private:
  struct Usage {
    double cpuSeconds = 0;
    double waitSeconds = 0;  ///< runnable, not running
  };
  struct Snapshot {
    double observedSeconds = 0;  ///< newestBlock x blockDuration
    std::map<std::string, Usage> usage;
    std::map<std::string, double> processCpu;  ///< per process label (processLabels_), CPU s
  };
  Snapshot snapshot(double observedSeconds);
  std::optional<std::map<std::string, double>> perObservedSecond(double Usage::*seconds) const;

  pid_t root_;
  std::string statusPath_;
  std::vector<std::string> parts_;
  std::map<pid_t, std::pair<std::string, double>> lastCpu_;   ///< pid: part, CPU seconds
  std::map<pid_t, std::pair<std::string, double>> lastWait_;  ///< thread: part, wait seconds
  std::map<pid_t, std::string> processLabels_;                ///< pid: part.rank<N> or part
  std::optional<Snapshot> first_, last_;
};

}  // namespace rtcp::observe::bench
