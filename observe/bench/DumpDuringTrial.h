#pragma once
/// \file DumpDuringTrial.h
/// `rtcp-bench capacity --dump`: a triggered dump of every station and subband
/// (rtcp-trigger; ionproc/README.md, input/README.md "Dumps") in the middle of a trial's
/// observation, and what it cost the observation. While observe runs, ionproc's status
/// (rewritten once a second) and its CPU time are sampled; at `triggerAt` seconds of
/// observed time rtcp-trigger asks for the `window` seconds that end then. Afterwards the
/// status counters are split between the dump (from the trigger until a second after the
/// dump ended) and the rest of the observation (from the first block served), and
/// ionproc's CPU during the dump is compared with its rate before it.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "rtcp/StatusFile.h"

namespace rtcp::observe::bench {

class DumpDuringTrial {
 public:
  /// observe: its process (ionproc is found among its descendants); obs: the observation
  /// directory; dir: where rtcp-trigger's log goes.
  DumpDuringTrial(pid_t observe, std::string obs, std::string dir, double window, double triggerAt);
  ~DumpDuringTrial();

  /// Call every fraction of a second while observe runs: samples ionproc's status and
  /// CPU, starts rtcp-trigger when the observation reaches triggerAt, notes its end.
  void sample();
  /// After observe ended: prints the figures (`<prefix>dump.*`), with the whole
  /// observation's losses from its summary.json text, and writes ionproc's samples into
  /// dir/ionproc-samples.csv. Removes the dump's recordings.
  void printFigures(const std::string& prefix, const std::string& summaryJson);

 private:
  /// ionproc's counters at one status write, summed over its stations.
  struct Sample {
    double wallTime = 0;
    int64_t newestBlock = -1;
    double newestBlockLag = 0;
    bool lastBlockServed = false;  ///< the observation's last: its lag grows from then on
    uint64_t blocksGone = 0;       ///< the most of any station (as the summary's blocksDropped)
    uint64_t late = 0, samplesServed = 0, samplesFlagged = 0, incompleteIntegrations = 0;
  };
  /// What happened between two samples (late: blocks served with a lag above the
  /// allowance, the observation's last one aside).
  struct Counts {
    double seconds = 0;
    uint64_t blocksServed = 0, blocksLate = 0, blocksGone = 0, packetsLate = 0;
    uint64_t samplesServed = 0, samplesFlagged = 0, incompleteIntegrations = 0;
    double maxLag = 0;
    void add(const Sample& before, const Sample& after, double allowance);
  };
  struct CpuSample {
    double wallTime = 0, cpuSeconds = 0;
  };

  void noteStatus(const ion::IonStatus& status);
  void startTrigger(double dataNow);
  void printCounts(const std::string& prefix, const Counts& c) const;
  /// One line per status written: seconds from the trigger, the phase (before, during,
  /// after), the newest block and its lag, and the counters.
  void writeSamples(const std::string& path) const;
  /// ionproc's CPU seconds per second over [from, to] of the samples taken; 0 if fewer
  /// than two lie in it.
  double cpuRate(double from, double to) const;
  std::optional<double> cpuAt(double wallTime) const;

  pid_t observe_;
  std::string obs_, dir_;
  double window_, triggerAt_;
  std::optional<pid_t> ionproc_;
  double startTime_ = 0, blockDuration_ = 0, allowance_ = 0, maxNetworkDelay_ = 0;
  double inputBytesPerSecond_ = 0;
  int64_t processedBlocks_ = 0;  ///< the blocks of whole integrations, all the ranks ask for  ///<
                                 ///< the stations' samples, as the dump holds them
  bool settingsRead_ = false;
  std::vector<Sample> samples_;
  std::vector<CpuSample> cpu_;
  std::unique_ptr<ChildProcess> trigger_;
  double triggerStarted_ = 0, triggerEnded_ = 0;
  double windowFrom_ = 0, windowTo_ = 0;  ///< UTC of the observed data
  int triggerCode_ = -1;
};

}  // namespace rtcp::observe::bench
