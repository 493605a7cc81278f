#pragma once
/// \file ObservationRunner.h
/// Runs one scheduled observation with `observe`: waits for its start, runs observe with
/// the observation's own directory, follows it to its end (stopping it when it overruns
/// or nightly is interrupted) and collects what observe reported.

#include <functional>
#include <optional>
#include <string>

#include "Schedule.h"
#include "rtcp/ObservationSummary.h"

namespace rtcp::nightly {

struct RunnerOptions {
  std::string observe;             ///< the observe executable
  std::string reportDirectory;     ///< observation directories go below it
  double leadSeconds = 30;         ///< start observe this early when it waits for its own start
  double maxOverrunSeconds = 600;  ///< stop observe this long after the observation's planned end
  /// observe's --console ("": none): nightly --console gives HOST:0.
  std::string console;
  /// Called once observe runs: the observation's index and directory.
  std::function<void(int index, const std::string& directory)> started;
};

/// The outcome of one observation.
struct ObservationResult {
  int index = 0;  ///< 1-based position in the schedule
  ScheduleEntry entry;
  std::string directory;                      ///< observe --dir
  std::string stderrPath;                     ///< observe's standard error, as captured
  double started = 0, ended = 0;              ///< Unix seconds of observe's start and end
  int exitCode = -1;                          ///< observe's exit code (-1: did not exit normally)
  int signal = 0;                             ///< the signal that ended observe, 0 if none
  std::optional<ObservationSummary> summary;  ///< summary.json, when observe wrote one
  bool ok = false;
  std::string reason;    ///< why it failed
  bool skipped = false;  ///< not run (nightly interrupted)
};

class ObservationRunner {
 public:
  explicit ObservationRunner(RunnerOptions options);
  /// Runs one observation (blocking) and never throws for a failed observation.
  ObservationResult run(const ScheduleEntry& entry, int index);
  /// Asks a running or waiting run() to stop (async-signal-safe).
  static void requestStop();
  static bool stopRequested();

 private:
  bool waitUntil(double unixTime) const;
  /// Runs observe; stops it maxOverrunSeconds after the planned end its effective parset
  /// (DIR/observation.parset) gives once written (after --now's shift, however long),
  /// until then after expectedEnd.
  void execute(ObservationResult& result, double expectedEnd) const;
  void collect(ObservationResult& result) const;

  RunnerOptions options_;
};

/// Observation.stopTime of observe's effective parset in directory, once written.
std::optional<double> plannedEnd(const std::string& directory);

/// The error lines of observe's standard error (ERROR log lines, else lines that mention
/// an error, else the last lines), joined with "; ".
std::string errorLines(const std::string& text);

}  // namespace rtcp::nightly
