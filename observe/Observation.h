#pragma once
/// \file Observation.h
/// Runs one observation's parts on this host, in order: storage-sink, ionproc (once its
/// status file shows it is up), the correlator ranks under mpirun, station-sim for the
/// stations this host simulates. Follows them with a progress line, stops them when
/// one fails, when stopped by a signal, or when they outstay the stop time (real time)
/// or stop making progress (replays); then sums up.

#include <memory>
#include <signal.h>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "ObservationPlan.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/StatusFile.h"

namespace rtcp::observe {

struct RunOptions {
  int ranks = 1;               ///< correlator ranks (mpirun -np)
  int threads = 0;             ///< --threads per rank; 0: the correlator's default
  double keepGoingSeconds = 30;  ///< after the stop time (or without progress): terminate
  double startupSeconds = 30;  ///< ionproc must be up within this
  bool terminal = false;       ///< standard error is a terminal (progress line with \r)
  std::string mpiHosts;        ///< mpirun -hosts LIST ("": every rank on this host)
  /// Replays: how long storage-sink may take to create its MSs (it listens only then;
  /// hundreds of subbands on a slow disk take a while) before "no progress" counts.
  double storageStartupSeconds = 600;
};

class Observation {
 public:
  /// stopSignals: the signals observe blocked and waits for (SIGINT, SIGTERM).
  Observation(ObservationPlan plan, RunOptions options, sigset_t stopSignals);
  /// Runs everything to the end and returns the summary (also written to the directory).
  ObservationSummary run();

 private:
  ChildProcess& addPart(const std::string& name, std::vector<std::string> arguments);
  ChildProcess* part(const std::string& name);
  bool startParts();
  /// storage-sink still creating its MSs: running, not yet reached by ionproc, within
  /// storageStartupSeconds of the start.
  bool storageStarting(double now);
  /// Waits until every ionproc wrote its status file (it is up and listening).
  bool waitForIonprocs();
  bool waitForIonproc(const IonprocPlan& ionproc, double deadline);
  void follow();
  void stopAll();
  void fail(const std::string& reason);
  ObservationSummary summarise();
  void makePlots(ObservationSummary& summary);
  std::string statusPath(const IonprocPlan& ionproc) const { return plan_.directory + "/" + ionproc.name + ".status"; }
  std::vector<std::string> statusPaths() const;

  ObservationPlan plan_;
  RunOptions options_;
  sigset_t stopSignals_;
  std::vector<std::unique_ptr<ChildProcess>> parts_;
  std::string failure_;                 ///< first reason the observation failed
  std::vector<std::string> warnings_;
  std::optional<ion::IonStatus> lastStatus_;
  double startedAt_ = 0, ranksStartedAt_ = 0, ionprocEndedAt_ = 0, endedAt_ = 0;
};

}  // namespace rtcp::observe
