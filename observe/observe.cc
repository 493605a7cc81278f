// observe PARSET: runs a whole observation on this host. Checks the parset (every
// problem at once), writes the effective parset into the observation directory, starts
// storage-sink, ionproc, the correlator ranks (mpirun) and station-sim, follows them with
// a progress line, stops them cleanly and writes summary.txt and summary.json.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "Executables.h"
#include "Observation.h"
#include "ObservationConsole.h"
#include "ParsetChecker.h"
#include "RunDirectory.h"
#include "rtcp/CommandLine.h"
#include "rtcp/InputRecordingSettings.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace po = boost::program_options;
using namespace rtcp;
using namespace rtcp::observe;

namespace {

const char* kDescription = R"(
Checks the parset as a whole before anything starts (unknown stations, subbands outside
0..511, input ports used twice, stop before start, a start in the past, output
directories that cannot be written, missing recordings, more ranks than cores; unknown
keys, and casacore measures tables that do not cover the observation, are warnings) and
exits non-zero listing every error (--check-only: stops here). Then writes the effective
parset (--now: start and stop shifted by an even number of seconds to begin a few
seconds from now; the storage port chosen) into the observation directory (--dir, else
the first output directory on this host, else ./L<ObsID>), starts storage-sink, ionproc,
`mpirun -np N correlator` and station-sim for the udp: inputs on this host (file:
recordings are read by ionproc itself), each logging to DIR/PART.log, shows a progress
line, and writes DIR/summary.txt and DIR/summary.json at the end. Parts whose hosts the
parset names elsewhere (udp:HOST:PORT inputs, HOST:DIR output locations, Cobalt.Nodes
or --mpi-hosts for the ranks) are started there through mpiexec, which brings their
logs and status back (observe/README.md, Several hosts). Ctrl-C, SIGTERM or SIGHUP stops every
part cleanly (what was received is written, the MeasurementSets are closed, a summary is
written) and observe exits non-zero; during the check they end observe at once. Should
observe itself die, its parts get SIGTERM. The exit
status is non-zero whenever the observation failed.
)";

struct Options {
  std::string parset;
  bool now = false;
  std::string directory;
  int ranks = 0;
  int threads = 0;
  double keepGoing = 30;
  double margin = 4;
  bool noStationSim = false;
  bool checkOnly = false;
  std::string mpiHosts;
  bool ranksGiven = false;
  LauncherOptions launcher;
  int linkPort = 4200;
  double startupSeconds = 30;
  bool noSharedMemory = false;
  bool lendRing = false;
  std::string console;       ///< --console [HOST:]PORT ("": none)
  double consoleLinger = 0;  ///< --console-linger: seconds of serving after the summary
  std::string recordInput;
};

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  po::options_description visible("usage: observe PARSET [options]\n\noptions");
  visible.add_options()("help,h", "this help")(
      "now", po::bool_switch(&o.now),
      "shift the observation to start at the next even second after a set-up margin")(
      "dir", po::value(&o.directory),
      "observation directory (default: the output directory of the first subband whose MS is "
      "written on this host, else ./L<ObsID>); one that holds another run's files is refused")(
      "ranks", po::value(&o.ranks),
      "correlator ranks (default: one per compute node of Cobalt.Nodes, else min(2, cores))")(
      "threads", po::value(&o.threads), "threads per correlator rank (default: the correlator's)")(
      "no-shared-memory", po::bool_switch(&o.noSharedMemory),
      "ranks on ionproc's host fetch station blocks over the link's socket and exchange them by "
      "MPI messages (as ranks on other hosts do), not through shared memory")(
      "lend-ring", po::bool_switch(&o.lendRing),
      "ionproc lends ranks on its host the rows in its station buffer (with huge pages in "
      "/dev/shm) instead of copying each block into shared memory for them")(
      "keep-going-seconds", po::value(&o.keepGoing)->default_value(30),
      "terminate parts still running this long after the stop time (replays: without progress)")(
      "margin", po::value(&o.margin)->default_value(4),
      "--now: seconds of set-up before the start, at least; the time ionproc may take to fault "
      "its buffers in is added")(
      "mpi-hosts", po::value(&o.mpiHosts),
      "run the correlator ranks on these hosts (Hydra's -hosts LIST, e.g. cn1:1,cn2:1; default: "
      "the parset's Cobalt.Nodes, else this host); ionproc's link then listens on every interface")(
      "launcher", po::value(&o.launcher.launcher)->default_value("ssh"),
      "how mpiexec reaches other hosts (Hydra's -launcher: ssh or rsh)")(
      "launcher-exec", po::value(&o.launcher.launcherExec),
      "the remote shell program mpiexec runs for the launcher (Hydra's -launcher-exec; default: "
      "the launcher itself)")("link-port", po::value(&o.linkPort)->default_value(4200),
                              "TCP port an ionproc on another host listens on for the ranks")(
      "startup-seconds", po::value(&o.startupSeconds)->default_value(30),
      "a part must be up within this many seconds (ionproc listening, a part on another host "
      "started)")(
      "record-input", po::value(&o.recordInput),
      "every ionproc records its stations' packets into DIR as they arrive (STATION-K.rsp, "
      "station-sim's format; Rtcp.recordInput.*); observe writes DIR/replay.parset, which "
      "replays them")(
      "no-station-sim", po::bool_switch(&o.noStationSim),
      "start no station-sim: the udp: inputs come from elsewhere (real stations, a replay)")(
      "console", po::value(&o.console)->value_name("[HOST:]PORT"),
      "serve the operator's console, a read-only web page of the observation live (and its "
      "status as JSON at /status.json), on PORT of HOST (default 127.0.0.1: this machine "
      "only; 0.0.0.0: every interface; PORT 0: any free port); its address is logged and "
      "written to DIR/console.url")(
      "console-linger", po::value(&o.consoleLinger)->default_value(0)->value_name("SECONDS"),
      "keep serving the console this long after the summary is written (the page shows the "
      "summary and says the observation has ended); a stop signal ends it sooner")(
      "check-only", po::bool_switch(&o.checkOnly),
      "check the parset, the options and casacore's measures data; start nothing (exit 1 on an "
      "error)")("debug", "log debug messages");
  po::variables_map vm;
  if (!parseCommandLine(argc, argv, visible, "PARSET", o.parset, kDescription, &vm))
    return std::nullopt;
  if (vm.count("debug")) Logger::setLevel(LogLevel::kDebug);
  o.ranksGiven = o.ranks != 0;
  if (o.ranks == 0) o.ranks = std::min(2, coresOfThisMachine());
  if (o.linkPort < 1 || o.linkPort > 65535) throw po::error("--link-port must be 1..65535");
  if (!o.console.empty()) {
    try {
      console::ConsoleAddress::parse(o.console);
    } catch (const std::invalid_argument& e) {
      throw po::error(std::string("--console: ") + e.what());
    }
  }
  if (!(o.consoleLinger >= 0)) throw po::error("--console-linger must not be negative");
  if (o.consoleLinger > 0 && o.console.empty()) throw po::error("--console-linger needs --console");
  return o;
}

/// Reports every problem; true when none is an error.
bool reportProblems(const CheckResult& result) {
  for (const ParsetProblem& p : result.problems) {
    if (p.error)
      RTCP_LOG_ERROR("observe", p.message);
    else
      RTCP_LOG_WARN("observe", p.message);
  }
  const size_t errors = size_t(std::count_if(result.problems.begin(), result.problems.end(),
                                             [](const ParsetProblem& p) { return p.error; }));
  if (errors)
    RTCP_LOG_ERROR("observe", errors << " error(s) in the parset or options: nothing started");
  return errors == 0;
}

/// Logs what an earlier run left where this one would write; true when nothing.
bool refuseEarlierRuns(const ObservationPlan& plan) {
  const std::vector<std::string> problems = earlierRunProblems(plan);
  for (const std::string& problem : problems) RTCP_LOG_ERROR("observe", problem);
  if (!problems.empty()) RTCP_LOG_ERROR("observe", "nothing started");
  return problems.empty();
}

/// While the parset is checked and the observation planned (nothing started yet), a
/// stop signal ends observe at once, however long the check would still take.
class InterruptWhileChecking {
 public:
  explicit InterruptWhileChecking(const sigset_t& signals)
      : watcher_([signals](std::stop_token stop) {
          const timespec tick{0, 100'000'000};
          while (!stop.stop_requested())
            if (const int signal = sigtimedwait(&signals, nullptr, &tick); signal > 0) {
              RTCP_LOG_ERROR("observe", "interrupted by SIG" << sigabbrev_np(signal)
                                                             << " before the start: nothing "
                                                                "started");
              std::_Exit(1);
            }
        }) {}

 private:
  std::jthread watcher_;
};

int run(const Options& o) {
  // Taken in the main loop (a dropped ssh session's SIGHUP as Ctrl-C); children unblock them.
  sigset_t stopSignals;
  sigemptyset(&stopSignals);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stopSignals, signal);
  pthread_sigmask(SIG_BLOCK, &stopSignals, nullptr);
  std::optional<InterruptWhileChecking> interruptible(std::in_place, stopSignals);

  const double now = wallClock();
  // Ranks on other hosts are bounded by their cores, which mpirun knows, not by ours.
  const int cores = o.mpiHosts.empty() ? coresOfThisMachine() : o.ranks;
  const ParsetChecker checker(CheckOptions{o.now, o.ranks, cores, o.directory, now, o.ranksGiven,
                                           !o.mpiHosts.empty(), !o.launcher.launcherExec.empty()});
  const CheckResult checked = checker.check(o.parset);
  if (!reportProblems(checked)) return 1;
  ObservationPlan plan = ObservationPlan::make(
      checked.parset,
      PlanOptions{o.now, o.directory, wallClock(), o.margin, uint16_t(o.linkPort), o.mpiHosts});
  if (o.checkOnly) {
    if (!refuseEarlierRuns(plan)) return 1;
    RTCP_LOG_INFO("observe", "--check-only: no errors; nothing started");
    return 0;
  }
  if (o.noStationSim) plan.stationSimParsetPath.clear(), plan.remoteStationSims.clear();
  const InputRecordingSettings recording = InputRecordingSettings::fromParset(
      plan.parset, std::filesystem::absolute(o.parset).parent_path());
  if (!o.recordInput.empty() || recording.enabled())
    plan.recordInput(o.recordInput.empty() ? recording.directory : o.recordInput);
  const int ranks =
      plan.computeNodes > 0 && !o.ranksGiven ? plan.computeNodes : o.ranks;  // one per node
  // One observation per directory and MS: what another run left is refused before anything
  // is made, and again under the directory's lock (another observe may have come between).
  if (!refuseEarlierRuns(plan)) return 1;
  plan.createDirectory();
  const DirectoryLock lock(plan.directory);  // held until observe ends
  if (!refuseEarlierRuns(plan)) return 1;
  plan.write(ObservationSecret::generate());
  for (const std::string& note : plan.notes) RTCP_LOG_INFO("observe", note);
  RTCP_LOG_INFO("observe", "observation " << plan.settings.observationId << ": "
                                          << formatUtc(plan.settings.startTime) << " .. "
                                          << formatUtc(plan.settings.stopTime) << " UTC, directory "
                                          << plan.directory);
  RunOptions runOptions{
      ranks,      o.threads,        o.keepGoing, o.startupSeconds, bool(isatty(STDERR_FILENO)),
      o.launcher, o.noSharedMemory, {}};
  runOptions.lendRing = o.lendRing;
  for (const ParsetProblem& p : checked.problems)
    if (!p.error) runOptions.parsetWarnings.push_back(p.message);
  interruptible.reset();  // from here on the observation stops its parts itself
  std::unique_ptr<ObservationConsole> console;
  if (!o.console.empty()) {
    std::vector<std::string> measurementSets = plan.measurementSets;
    measurementSets.insert(measurementSets.end(), plan.remoteMeasurementSets.begin(),
                           plan.remoteMeasurementSets.end());
    std::vector<std::string> beamFormedFiles = plan.beamFormedFiles;
    beamFormedFiles.insert(beamFormedFiles.end(), plan.remoteBeamFormedFiles.begin(),
                           plan.remoteBeamFormedFiles.end());
    console = std::make_unique<ObservationConsole>(
        console::ConsoleAddress::parse(o.console), plan.settings, plan.directory,
        std::move(measurementSets), std::move(beamFormedFiles));
    runOptions.console = console.get();
  }
  Observation observation(plan, std::move(runOptions), stopSignals);
  const ObservationSummary summary = observation.run();
  std::cerr << summary.toText();
  RTCP_LOG_INFO("observe", "summary written to " << plan.directory << "/summary.{txt,json}");
  if (console && o.consoleLinger > 0) {
    RTCP_LOG_INFO("observe", "console at " << console->url() << " for another " << o.consoleLinger
                                           << " s (a stop signal ends it sooner)");
    const double seconds = o.consoleLinger;
    timespec timeout{time_t(seconds), long((seconds - double(time_t(seconds))) * 1e9)};
    sigtimedwait(&stopSignals, nullptr, &timeout);
  }
  return summary.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Logger::setProcessName("observe");
  try {
    const std::optional<Options> options = parseOptions(argc, argv);
    return options ? run(*options) : 0;
  } catch (const po::error& e) {
    RTCP_LOG_ERROR("observe", e.what() << " (see observe --help)");
    return 2;
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("observe", e.what());
  }
  return 1;
}
