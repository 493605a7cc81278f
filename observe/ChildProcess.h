#pragma once
/// \file ChildProcess.h
/// One part of an observation as a child process: started in a process group of its
/// own (so that a Ctrl-C at the terminal reaches only observe, which stops the parts in
/// order), standard output and error into its log file, standard input from /dev/null;
/// SIGTERM when observe dies (PR_SET_PDEATHSIG), so that no part outlives it.

#include <sys/resource.h>
#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace rtcp::observe {

/// Where a child's standard streams go, and what signal() reaches.
struct ChildStreams {
  std::string inputPath;   ///< standard input from this file ("": /dev/null)
  std::string outputPath;  ///< standard output into this file ("": the log)
  /// true: signals go to the child's whole process group (mpirun and its local ranks);
  /// false: to the child alone (mpiexec of parts on other hosts forwards them itself,
  /// while a signal to its ssh children would cut the connection).
  bool signalGroup = true;
  /// true: the child runs with SIGINT, SIGTERM and SIGHUP blocked, for a part that blocks
  /// them itself first thing in main and takes them with sigwait (ionproc, storage-sink):
  /// one sent between fork and main (exec and dynamic loading take tens of milliseconds
  /// under load) then waits for the part instead of killing it (exit 130). false: the
  /// child starts with nothing blocked (parts that stop by the signal's default action,
  /// mpirun and mpiexec, which forward it).
  bool stopSignalsBlocked = false;
};

class ChildProcess {
 public:
  /// name: for messages and the exit-code table (station-sim, ionproc, ...).
  ChildProcess(std::string name, std::vector<std::string> arguments, std::string logPath,
               ChildStreams streams = {});
  ~ChildProcess();  ///< kills a child still running (SIGKILL to its group) and reaps it
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Forks and executes arguments[0] (a path, or a name looked up in PATH); throws
  /// std::runtime_error naming the program when the log cannot be opened or exec fails.
  void start();
  /// Sends a signal to the child's whole process group (e.g. mpirun and its ranks), or
  /// to the child alone (ChildStreams::signalGroup).
  void signal(int signalNumber);
  /// Reaps the child when it has exited; true once it has.
  bool poll();
  /// Waits up to timeoutSeconds for the child to exit; true once it has.
  bool waitFor(double timeoutSeconds);
  /// SIGKILL to the group, then reaps.
  void kill();

  bool started() const { return pid_ > 0; }
  bool running() const { return started() && !exitCode_; }
  /// The exit status once exited: the code, or 128 + signal number.
  std::optional<int> exitCode() const { return exitCode_; }
  const std::string& name() const { return name_; }
  const std::string& logPath() const { return logPath_; }
  std::string commandLine() const;
  pid_t pid() const { return pid_; }
  /// User + system CPU seconds of the child and the descendants it reaped (mpirun: its
  /// ranks), known once it has exited and been reaped.
  std::optional<double> cpuSeconds() const { return cpuSeconds_; }

 private:
  void reaped(int status, const ::rusage& usage);

  std::string name_;
  std::vector<std::string> arguments_;
  std::string logPath_;
  ChildStreams streams_;
  pid_t pid_ = -1;
  std::optional<int> exitCode_;
  std::optional<double> cpuSeconds_;
};

}  // namespace rtcp::observe
