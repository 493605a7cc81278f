#pragma once
/// \file Observation.h
/// Runs one observation's parts, in order: the storage-sinks, the ionprocs (once their
/// status shows they are up), the correlator ranks under mpirun, station-sim for the
/// stations simulated. Parts of this host are its children; parts of other hosts are
/// started through mpiexec (HydraLaunch.h), whose output brings their logs, status and
/// exit codes back here. Follows them with a progress line, stops them when one fails,
/// when stopped by a signal, or when they outstay the stop time (real time) or stop
/// making progress (replays); then sums up.

#include <signal.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ChildProcess.h"
#include "HydraLaunch.h"
#include "ObservationConsole.h"
#include "ObservationPlan.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/StatusFile.h"

namespace rtcp::observe {

struct RunOptions {
  int ranks = 1;                 ///< correlator ranks (mpirun -np)
  int threads = 0;               ///< --threads per rank; 0: the correlator's default
  double keepGoingSeconds = 30;  ///< after the stop time (or without progress): terminate
  double startupSeconds = 30;    ///< ionproc must be up within this
  bool terminal = false;         ///< standard error is a terminal (progress line with \r)
  LauncherOptions launcher;      ///< how mpiexec reaches other hosts
  /// --no-shared-memory: local ranks fetch over the link's socket and exchange by MPI
  /// messages, as ranks on other hosts do (to compare the paths).
  bool noSharedMemory = false;
  /// The parset checker's warnings ("FILE:LINE: unknown key ..."): the summary lists them
  /// after those of the run.
  std::vector<std::string> parsetWarnings;
  /// --lend-ring: ionproc lends local ranks the rows in its station buffer (ionproc
  /// --lend-ring) instead of copying blocks into shared memory.
  bool lendRing = false;
  /// --console: the console the observation's status goes to (null: none). The ranks then
  /// write their --status and the first ionproc its --quicklook.
  ObservationConsole* console = nullptr;
};

class Observation {
 public:
  /// stopSignals: the signals observe blocked and waits for (SIGINT, SIGTERM).
  Observation(ObservationPlan plan, RunOptions options, sigset_t stopSignals);
  /// Runs everything to the end and returns the summary (also written to the directory).
  ObservationSummary run();

 private:
  /// A part on another host, started through mpiexec.
  struct RemotePart {
    std::string host;  ///< its host (the ranks: Hydra's host list)
    std::unique_ptr<PartOutput> output;
    double launchedAt = 0;
    std::string statusPath;  ///< ionprocs: where their status lines are written here
  };

  ChildProcess& addPart(const std::string& name, std::vector<std::string> arguments,
                        ChildStreams streams = {});
  /// Starts command on hosts through mpiexec, its parset on standard input.
  ChildProcess& addRemotePart(const std::string& name, const std::string& hosts, int processes,
                              const std::vector<std::string>& command,
                              const std::string& parsetPath, const std::string& statusPath = "");
  ChildProcess* part(const std::string& name);
  /// The parts called name, or name@HOST.
  std::vector<ChildProcess*> partsNamed(const std::string& name);
  /// "ionproc-2 on in2" for messages.
  std::string describe(const ChildProcess& part) const;
  /// The exit code, once exited (parts on other hosts: as their wrapper reported it).
  std::optional<int> exitCodeOf(ChildProcess& part);
  /// Reads what the parts on other hosts said; writes the ionprocs' status files (and, with
  /// the console, the ranks' status files and the quick look).
  void relayRemoteOutput();
  void relayConsoleOutput(const std::string& name, const PartOutput& output);
  std::map<int, double> relayedRanks_;  ///< the time of each rank's status written last
  std::string relayedQuickLook_;
  /// Fails when a part exited non-zero, or a part on another host did not start in time.
  bool checkParts(const std::string& when);
  /// The first part that exited non-zero, if any.
  ChildProcess* failedPart();
  bool startParts();
  void startStorageSinks();
  /// Starts the ionprocs; returns the --ionproc endpoints the ranks reach them at.
  std::vector<std::string> startIonprocs();
  void startCorrelator(const std::vector<std::string>& ionprocEndpoints);
  void startStationSims();
  /// Waits until every ionproc wrote its status file (it is up and listening).
  bool waitForIonprocs();
  bool waitForIonproc(const IonprocPlan& ionproc, double deadline);
  /// Waits until every part started on another host so far runs there (the storage-sinks
  /// before the ranks start).
  bool waitForRemoteParts();
  void follow();
  /// Hands the console the parts' newest status (at most once a second unless forced).
  void tickConsole(const std::string& phase, bool force = false);
  /// The ranks' status files (%r: the rank) and the first ionproc's quick look.
  std::string rankStatusPattern() const { return plan_.directory + "/correlator-rank%r.status"; }
  std::string quickLookPath() const { return plan_.directory + "/ionproc.quicklook.json"; }
  size_t warningsShown_ = 0;  ///< warnings_ handed to the console so far
  double consoleTicked_ = -1e300;
  double consoleIonTime_ = 0;  ///< of the ionproc status the console has
  bool failureShown_ = false;
  void stopAll();
  /// Of a part on another host that takes its stop signals itself (ionproc, storage-sink):
  /// waits until its wrapper said it runs there (from then on a SIGINT reaches the part,
  /// which has it blocked from exec on, and the wrapper reports how it ended), or its
  /// --startup-seconds are over. A SIGINT before that ends the wrapper or mpiexec instead.
  void waitUntilRunning(ChildProcess& part);
  /// SIGINT, then (parts on other hosts) a second SIGINT that has mpiexec kill them, then
  /// SIGKILL, each after seconds without exit.
  void stop(ChildProcess& part, double seconds);
  void fail(const std::string& reason);
  /// Whether the kernel's out-of-memory killer ended the part (or, of mpirun, a rank).
  bool outOfMemory(ChildProcess& part);
  /// Removes what the parts here left behind: their shared-memory segments
  /// (/dev/shm/rtcp-*-PID-*), the link's unix sockets (/tmp/rtcp-link-OBSERVE-*), and a
  /// storage-sink's disk-space reserve files when it did not remove them (killed).
  void removeLeftovers();
  ObservationSummary summarise();
  /// The integrations the MSs hold (this host's read back from disk, those of other hosts
  /// as their storage-sinks reported them at the end), and what is missing from them.
  /// The recordings of the input (observe --record-input): their bytes, packets not
  /// recorded, and DIR/replay.parset beside them.
  void noteRecordings(ObservationSummary& summary);
  /// The dumps rtcp-trigger had written into DIR/dumps.
  void listDumps(ObservationSummary& summary);
  void countStoredIntegrations(ObservationSummary& summary);
  /// Every beam-formed file of the parset with what its storage-sink reported of it.
  void listBeamFormedFiles(ObservationSummary& summary);
  /// This host's beam-formed file `index` (of settings.beamFormed.files) as it is on disk;
  /// nullopt when it is not there (or cannot be read: a warning).
  std::optional<WrittenBeamFormedFile> localBeamFormedFile(int index);
  /// What the storage-sinks' status says went wrong in writing (a full disk): the failure,
  /// or a warning when nothing was lost.
  void noteStorageFailure();
  /// Connections the parts refused (no proof of the observation) and blocks storage-sink
  /// received twice: warnings.
  void noteIntruders();
  /// Starts every storage-sink (this host's, those of other hosts) again that died from
  /// a signal, each at most kMaxStorageSinkRestarts times.
  void restartDeadStorageSinks();
  void restartIfDied(const std::string& storageSink);
  std::vector<std::string> localStorageSinkArguments() const;
  /// What mpiexec runs on a storage host (its parset on standard input).
  /// The command of the storage-sink on another host: the outputs located there alone.
  std::vector<std::string> remoteStorageSinkCommand(const std::string& host) const;
  static constexpr int kMaxStorageSinkRestarts = 3;
  std::map<std::string, int> storageSinkRestarts_;  ///< by part name
  /// rtcp-inspect's plots and overview of the MSs written, made where each MS is.
  void makePlots(ObservationSummary& summary);
  /// Runs rtcp-inspect on host ("": here) over paths (MSs on that host), into out there;
  /// adds the PNGs it made to the summary, a warning when it failed.
  void runInspect(const std::string& host, const std::vector<std::string>& paths,
                  const std::string& out, const std::string& overview, ObservationSummary& summary);
  std::string statusPath(const IonprocPlan& ionproc) const {
    return plan_.directory + "/" + ionproc.name + ".status";
  }
  std::vector<std::string> statusPaths() const;
  /// The storage-sinks' status files (those of other hosts: written here from their lines).
  std::string storageStatusPath(const std::string& part) const {
    return plan_.directory + "/" + part + ".status";
  }
  std::vector<std::string> storageStatusPaths() const;

  ObservationPlan plan_;
  RunOptions options_;
  sigset_t stopSignals_;
  std::vector<std::unique_ptr<ChildProcess>> parts_;
  std::map<std::string, RemotePart> remote_;  ///< by part name
  std::string failure_;                       ///< first reason the observation failed
  std::vector<std::string> warnings_;
  std::optional<ion::IonStatus> lastStatus_;
  /// ionproc's newest block served and when (its clock), as first seen and as it last grew.
  struct Served {
    double wallTime = 0;
    int64_t block = -1;
  };
  std::optional<Served> firstServed_, lastServed_;
  /// Keeps ionproc's latest status and the blocks it served by then.
  void noteStatus(const ion::IonStatus& status);
  std::optional<storage::StorageStatus> lastStorageStatus_;
  double startedAt_ = 0, ranksStartedAt_ = 0, endedAt_ = 0;
  double startedBoot_ = 0;    ///< startedAt_ on the kernel log's clock
  std::set<pid_t> partPids_;  ///< every part started here (restarts too)
};

}  // namespace rtcp::observe
