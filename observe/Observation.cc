#include "Observation.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>  // sigabbrev_np
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <thread>

#include "BeamFormedHoldings.h"
#include "Executables.h"
#include "FlaggingReport.h"
#include "LocalHost.h"
#include "LocalRankEnvironment.h"
#include "MeasurementSetHoldings.h"
#include "MemoryPlan.h"
#include "PacketCounts.h"
#include "ProgressMonitor.h"
#include "StationDataListing.h"
#include "rtcp/Baselines.h"
#include "rtcp/Files.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"
#include "rtcp/ReplayParset.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

/// Waits up to seconds for a stop signal; returns it, or 0.
int waitForSignal(const sigset_t& signals, double seconds) {
  timespec timeout{time_t(seconds), long((seconds - std::floor(seconds)) * 1e9)};
  const int signal = sigtimedwait(&signals, nullptr, &timeout);
  return signal > 0 ? signal : 0;
}

std::string hostName() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

/// The online flaggers' final lines in a part's log (correlator/README.md, output/README.md):
/// from "rank N: pre-correlation flagging", "rank N: broken stations", "post-correlation
/// flagging" and "post-correlation broken stations" to the end of the line.
std::vector<std::string> flaggingLines(const std::string& logPath) {
  std::vector<std::string> lines;
  std::ifstream log(logPath);
  std::string line;
  static const std::regex report(
      "(rank [0-9]+: (pre-correlation flagging|broken stations).*|"
      "post-correlation (flagging|broken stations).*)");
  std::smatch match;
  while (std::getline(log, line))
    if (std::regex_search(line, match, report)) lines.push_back(match.str(1));
  return lines;
}

uint64_t directoryBytes(const std::string& path) {
  uint64_t bytes = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(path, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error))
    if (it->is_regular_file(error)) bytes += it->file_size(error);
  return bytes;
}

/// ionproc and storage-sink block SIGINT, SIGTERM and SIGHUP first thing in main and take
/// them with sigwait: a stop while they start is a stop after start-up (they send what
/// they integrated, close what they wrote, exit 0). They are started with the signals
/// blocked (ChildStreams::stopSignalsBlocked), so that one sent before their main is not
/// death by the signal (130). The other parts stop by the signal's default action.
bool takesStopSignals(const std::string& part) {
  return part.starts_with("ionproc") || part.starts_with("storage-sink");
}

}  // namespace

Observation::Observation(ObservationPlan plan, RunOptions options, sigset_t stopSignals)
    : plan_(std::move(plan)), options_(options), stopSignals_(stopSignals) {}

ChildProcess& Observation::addPart(const std::string& name, std::vector<std::string> arguments,
                                   ChildStreams streams) {
  // Here: the part itself; on another host: mpiexec, which must get the signal to pass it on.
  streams.stopSignalsBlocked = !remote_.count(name) && takesStopSignals(name);
  parts_.push_back(std::make_unique<ChildProcess>(
      name, std::move(arguments), plan_.directory + "/" + name + ".log", std::move(streams)));
  ChildProcess& child = *parts_.back();
  RTCP_LOG_INFO("observe", "starting " << name << ": " << child.commandLine());
  child.start();
  partPids_.insert(child.pid());
  return child;
}

ChildProcess& Observation::addRemotePart(const std::string& name, const std::string& hosts,
                                         int processes, const std::vector<std::string>& command,
                                         const std::string& parsetPath,
                                         const std::string& statusPath) {
  const std::string outputPath = plan_.directory + "/" + name + ".out";
  RemotePart& remote = remote_[name];
  remote.host = hosts;
  remote.output = std::make_unique<PartOutput>(outputPath, processes);
  remote.launchedAt = wallClock();
  remote.statusPath = statusPath;
  return addPart(name,
                 hydraCommand(options_.launcher, hosts, processes, command, takesStopSignals(name)),
                 ChildStreams{parsetPath, outputPath, false});
}

ChildProcess* Observation::part(const std::string& name) {
  for (auto& p : parts_)
    if (p->name() == name) return p.get();
  return nullptr;
}

std::vector<ChildProcess*> Observation::partsNamed(const std::string& name) {
  std::vector<ChildProcess*> found;
  for (auto& p : parts_)
    if (p->name() == name || p->name().starts_with(name + "@")) found.push_back(p.get());
  return found;
}

std::string Observation::describe(const ChildProcess& part) const {
  const auto it = remote_.find(part.name());
  if (it == remote_.end() || part.name().ends_with("@" + it->second.host)) return part.name();
  return part.name() + " on " + it->second.host;
}

std::optional<int> Observation::exitCodeOf(ChildProcess& part) {
  if (!part.poll()) return std::nullopt;
  const auto it = remote_.find(part.name());
  if (it == remote_.end()) return part.exitCode();
  it->second.output->update();  // mpiexec has written all it will
  // mpiexec's own code when the part did not report (not started, killed, host lost).
  const std::optional<int> reported = it->second.output->exitCode();
  return reported ? *reported : (*part.exitCode() != 0 ? *part.exitCode() : 255);
}

void Observation::relayRemoteOutput() {
  for (auto& [name, remote] : remote_) {
    const bool updated = remote.output->update();
    if (options_.console) relayConsoleOutput(name, *remote.output);
    if (!updated || remote.statusPath.empty()) continue;
    try {
      const PartOutput& output = *remote.output;  // an ionproc's or a storage-sink's status
      writeFileAtomically(remote.statusPath, output.status() ? output.status()->format()
                                                             : output.storageStatus()->format());
    } catch (const std::exception& e) {
      RTCP_LOG_WARN("observe", e.what());
    }
  }
}

void Observation::relayConsoleOutput(const std::string& name, const PartOutput& output) {
  try {
    if (name == "correlator")
      for (const auto& [rank, status] : output.rankStatuses())
        if (status.wallTime > relayedRanks_[rank]) {
          writeFileAtomically(correlator::rankStatusPath(rankStatusPattern(), rank),
                              status.format());
          relayedRanks_[rank] = status.wallTime;
        }
    if (name == plan_.ionprocs.front().name && output.quickLook() != relayedQuickLook_) {
      writeFileAtomically(quickLookPath(), output.quickLook() + "\n");
      relayedQuickLook_ = output.quickLook();
    }
  } catch (const std::exception& e) {
    RTCP_LOG_WARN("observe", e.what());  // the console's alone: not the observation's
  }
}

ChildProcess* Observation::failedPart() {
  for (auto& p : parts_)
    if (const std::optional<int> code = exitCodeOf(*p); code && *code != 0) return p.get();
  return nullptr;
}

bool Observation::checkParts(const std::string& when) {
  relayRemoteOutput();
  ChildProcess* failed = failedPart();
  // Ranks end as soon as an ionproc they fetch from is gone: give the cause a moment to
  // show before blaming them.
  for (const double giveUp = wallClock() + 1;
       failed && failed->name() == "correlator" && wallClock() < giveUp;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    relayRemoteOutput();
    for (auto& p : parts_)
      if (p.get() != failed && exitCodeOf(*p).value_or(0) != 0) failed = p.get();
  }
  if (failed) {
    const int code = *exitCodeOf(*failed);
    if (outOfMemory(*failed)) {
      fail(describe(*failed) + " killed: out of memory (the kernel's out-of-memory killer" + when +
           "; see dmesg and " + failed->logPath() + ")");
      return false;
    }
    const std::string problem = lastProblem(failed->logPath());
    fail(describe(*failed) + " failed with exit code " + std::to_string(code) +
         (code > 128 && code < 160 ? std::string(" (SIG") + sigabbrev_np(code - 128) + ")" : "") +
         when + (problem.empty() ? "" : ": " + problem) + " (see " + failed->logPath() + ")");
    return false;
  }
  const double now = wallClock();
  for (auto& p : parts_) {
    const auto it = remote_.find(p->name());
    if (it != remote_.end() && p->running() && !it->second.output->started() &&
        now > it->second.launchedAt + options_.startupSeconds) {
      const std::string problem = lastProblem(p->logPath());
      fail("cannot start " + p->name() + " on " + it->second.host + ": no answer within " +
           std::to_string(int(options_.startupSeconds)) + " s" +
           (problem.empty() ? "" : " (" + problem + ")") + "; is the host up and reachable with " +
           (options_.launcher.launcherExec.empty() ? options_.launcher.launcher
                                                   : options_.launcher.launcherExec) +
           "? (see " + p->logPath() + ")");
      return false;
    }
  }
  return true;
}

void Observation::noteStatus(const ion::IonStatus& status) {
  lastStatus_ = status;
  if (status.newestBlock < 0) return;
  const Served served{status.wallTime, status.newestBlock};
  if (!firstServed_) firstServed_ = served;
  if (!lastServed_ || served.block > lastServed_->block) lastServed_ = served;
}

bool Observation::outOfMemory(ChildProcess& part) {
  if (remote_.count(part.name())) return false;  // the kernel log of another host
  // The part itself (SIGKILL), or a rank mpirun ran (mpirun then reports its rank's end).
  const std::optional<int> code = exitCodeOf(part);
  const std::string program = part.name() == "correlator" ? "correlator" : "";
  return code && *code != 0 && (*code == 128 + SIGKILL || !program.empty()) &&
         killedForMemory(part.pid(), program, startedBoot_);
}

void Observation::removeLeftovers() {
  std::vector<std::string> removed;
  auto remove = [&](const fs::path& path) {
    std::error_code error;
    if (fs::remove(path, error)) removed.push_back(path.string());
  };
  std::error_code error;
  // Segments are named /PREFIX-PID-N by the process that made them (SharedMemory.h).
  for (auto it = fs::directory_iterator("/dev/shm", error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    const std::string name = it->path().filename().string();
    const size_t dash = name.rfind('-'), pidDash = name.rfind('-', dash - 1);
    if (!name.starts_with("rtcp-") || dash == std::string::npos || pidDash == std::string::npos)
      continue;
    const std::string pid = name.substr(pidDash + 1, dash - pidDash - 1);
    if (!pid.empty() && pid.find_first_not_of("0123456789") == std::string::npos &&
        partPids_.count(pid_t(std::stol(pid))))
      remove(it->path());
  }
  const std::string links = "rtcp-link-" + std::to_string(getpid()) + "-";
  for (auto it = fs::directory_iterator("/tmp", error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (it->path().filename().string().starts_with(links)) remove(it->path());
  const std::string reserve =
      ".L" + std::to_string(plan_.settings.observationId) + ".storage-reserve";
  std::set<std::string> directories;
  for (const std::string& ms : plan_.measurementSets)
    directories.insert(fs::path(ms).parent_path().string());
  for (const std::string& directory : directories) remove(fs::path(directory) / reserve);
  for (const std::string& path : removed)
    RTCP_LOG_INFO("observe", "removed " << path << ", left behind by a part");
}

void Observation::fail(const std::string& reason) {
  RTCP_LOG_ERROR("observe", reason);
  if (failure_.empty()) failure_ = reason;
}

void Observation::tickConsole(const std::string& phase, bool force) {
  ObservationConsole* console = options_.console;
  if (!console) return;
  const double now = wallClock();
  // A new ionproc status at once (a station that stopped shows within its second), else
  // twice a second.
  const bool fresh = lastStatus_ && lastStatus_->wallTime != consoleIonTime_;
  if (!force && !fresh && now - consoleTicked_ < 0.5) return;
  consoleTicked_ = now;
  if (lastStatus_) consoleIonTime_ = lastStatus_->wallTime;
  ConsoleStatus& status = console->status();
  status.setPhase(phase);
  for (; warningsShown_ < warnings_.size(); ++warningsShown_)
    status.addEvent(now, "WARN", "observe", warnings_[warningsShown_]);
  if (!failure_.empty() && !failureShown_) {
    status.addEvent(now, "ERROR", "observe", failure_);
    failureShown_ = true;
  }
  if (lastStatus_) status.noteIonStatus(*lastStatus_);
  if (lastStorageStatus_) status.noteStorageStatus(*lastStorageStatus_);
  // The ranks and the quick look: their files here (relayRemoteOutput() writes those of
  // parts on other hosts from the lines mpiexec brings).
  std::vector<correlator::RankStatus> ranks;
  for (int rank = 0; rank < options_.ranks; ++rank) {
    const std::string path = correlator::rankStatusPath(rankStatusPattern(), rank);
    std::error_code error;
    if (!fs::exists(path, error)) continue;
    try {
      ranks.push_back(correlator::RankStatus::read(path));
    } catch (const std::exception& e) {
      RTCP_LOG_DEBUG("observe", e.what());  // being replaced; next time
    }
  }
  if (!ranks.empty()) status.noteRankStatuses(std::move(ranks));
  if (std::optional<std::string> json = tryReadFile(quickLookPath())) {
    while (!json->empty() && json->back() == '\n') json->pop_back();
    if (json->starts_with("{") && json->ends_with("}")) status.noteQuickLook(std::move(*json));
  }
  console->publish(now, force || fresh);
}

ObservationSummary Observation::run() {
  startedAt_ = wallClock();
  startedBoot_ = bootSeconds();
  if (startParts()) follow();
  stopAll();
  removeLeftovers();
  endedAt_ = wallClock();
  ObservationSummary summary = summarise();
  if (summary.ok) makePlots(summary);
  summary.write(plan_.directory);
  if (options_.console) {
    tickConsole("ended");
    options_.console->status().setSummary(summary);
    options_.console->publish(wallClock(), true);
  }
  return summary;
}

bool Observation::startParts() {
  try {
    startStorageSinks();
    const std::vector<std::string> endpoints = startIonprocs();
    if (!waitForIonprocs() || !waitForRemoteParts()) return false;
    startCorrelator(endpoints);
    startStationSims();
  } catch (const std::exception& e) {
    fail(e.what());
    return false;
  }
  return true;
}

void Observation::startStorageSinks() {
  if (plan_.localStorageSink()) addPart("storage-sink", localStorageSinkArguments());
  for (const RemotePartPlan& storage : plan_.remoteStorageSinks)
    addRemotePart(storage.name, storage.host, 1, remoteStorageSinkCommand(storage.host),
                  storage.parsetPath, storageStatusPath(storage.name));
}

std::vector<std::string> Observation::startIonprocs() {
  // Ranks on other hosts reach ionproc by this host's name over TCP; local ranks over a
  // unix socket, which moves about twice the bytes per CPU second of loopback TCP
  // (rtcp-bench link). Its path stays short: sockaddr_un holds 108 bytes.
  const bool remoteRanks = !plan_.computeHosts.empty();
  std::vector<std::string> endpoints;
  // One ionproc per input host; the first integrates and sends to storage-sink.
  for (const IonprocPlan& ionproc : plan_.ionprocs) {
    const std::string port = std::to_string(ionproc.linkPort);
    // Over TCP on the address of the name the ranks connect to, not on every interface.
    const std::string listen = ionproc.remote ? "tcp:" + ionproc.inputHost + ":" + port
                               : remoteRanks
                                   ? "tcp:" + hostName() + ":" + port
                                   : "unix:/tmp/rtcp-link-" + std::to_string(getpid()) + "-" + port;
    std::vector<std::string> arguments{partExecutable("ionproc"),
                                       ionproc.remote ? "-" : plan_.parsetPath,
                                       "--secret-file",
                                       ionproc.remote ? "-" : plan_.secretPath,
                                       "--link",
                                       listen,
                                       "--status",
                                       ionproc.remote ? "-" : statusPath(ionproc)};
    // What storage-sink cannot take meanwhile waits here (on other hosts: in their /tmp).
    if (!ionproc.remote) arguments.insert(arguments.end(), {"--spool-dir", plan_.directory});
    if (options_.lendRing && !ionproc.remote) arguments.push_back("--lend-ring");
    // Its trigger port where rtcp-trigger on this host reaches it (the status names it).
    if (ionproc.remote) arguments.insert(arguments.end(), {"--trigger", ionproc.inputHost + ":0"});
    if (options_.console && &ionproc == &plan_.ionprocs.front())
      arguments.insert(arguments.end(), {"--quicklook", ionproc.remote ? "-" : quickLookPath()});
    if (plan_.ionprocs.size() > 1) {
      std::string stations;
      for (const std::string& name : ionproc.stations)
        stations += (stations.empty() ? "" : ",") + name;
      arguments.insert(arguments.end(), {"--stations", stations});
      if (&ionproc != &plan_.ionprocs.front()) arguments.push_back("--no-output");
    }
    if (ionproc.remote) {
      addRemotePart(ionproc.name, ionproc.inputHost, 1, arguments, plan_.remoteInputPath,
                    statusPath(ionproc));
      endpoints.push_back("tcp:" + ionproc.inputHost + ":" + port);
    } else {
      addPart(ionproc.name, arguments);
      endpoints.push_back(listen);
    }
  }
  return endpoints;
}

void Observation::startCorrelator(const std::vector<std::string>& ionprocEndpoints) {
  const bool remoteRanks = !plan_.computeHosts.empty();
  std::vector<std::string> correlator{partExecutable("correlator"),
                                      remoteRanks ? "-" : plan_.parsetPath, "--secret-file",
                                      remoteRanks ? "-" : plan_.secretPath};
  for (const std::string& endpoint : ionprocEndpoints)
    correlator.insert(correlator.end(), {"--ionproc", endpoint});
  if (options_.threads > 0)
    correlator.insert(correlator.end(), {"--threads", std::to_string(options_.threads)});
  if (options_.noSharedMemory)
    correlator.insert(correlator.end(), {"--no-shared-link", "--exchange", "messages"});
  if (options_.console)
    correlator.insert(correlator.end(), {"--status", remoteRanks ? "-" : rankStatusPattern()});
  ranksStartedAt_ = wallClock();
  if (remoteRanks) {
    addRemotePart("correlator", plan_.computeHosts, options_.ranks, correlator,
                  plan_.remoteInputPath);
    return;
  }
  correlator.insert(correlator.begin(),
                    {mpirunExecutable(), "-np", std::to_string(options_.ranks)});
  addPart("correlator", withLocalRankEnvironment(correlator));
}

void Observation::startStationSims() {
  if (!plan_.stationSimParsetPath.empty())
    addPart("station-sim", {partExecutable("station-sim"), plan_.stationSimParsetPath});
  for (const RemotePartPlan& sim : plan_.remoteStationSims)
    addRemotePart(sim.name, sim.host, 1, {partExecutable("station-sim"), "-"}, sim.parsetPath);
}

std::vector<std::string> Observation::statusPaths() const {
  std::vector<std::string> paths;
  for (const IonprocPlan& ionproc : plan_.ionprocs) paths.push_back(statusPath(ionproc));
  return paths;
}

bool Observation::waitForIonprocs() {
  const double deadline = wallClock() + options_.startupSeconds;
  for (const IonprocPlan& plan : plan_.ionprocs)
    if (!waitForIonproc(plan, deadline)) return false;
  return true;
}

bool Observation::waitForRemoteParts() {
  for (;;) {
    relayRemoteOutput();
    if (std::all_of(remote_.begin(), remote_.end(),
                    [](const auto& r) { return r.second.output->started(); }))
      return true;
    if (!checkParts(" while starting")) return false;  // also: not started within startupSeconds
    if (const int signal = waitForSignal(stopSignals_, 0.1)) {
      fail(std::string("interrupted by SIG") + sigabbrev_np(signal));
      return false;
    }
  }
}

bool Observation::waitForIonproc(const IonprocPlan& plan, double deadline) {
  ChildProcess& ionproc = *part(plan.name);
  while (!fs::exists(statusPath(plan))) {
    if (!checkParts(" while starting")) return false;
    tickConsole("starting");
    if (exitCodeOf(ionproc) == 0) {  // ended without an error and without coming up
      const std::string problem = lastProblem(ionproc.logPath());
      fail(describe(ionproc) + " ended before it came up" +
           (problem.empty() ? "" : ": " + problem) + " (see " + ionproc.logPath() + ")");
      return false;
    }
    if (wallClock() > deadline) {
      fail(describe(ionproc) + " did not come up within " +
           std::to_string(int(options_.startupSeconds)) + " s (see " + ionproc.logPath() + ")");
      return false;
    }
    if (const int signal = waitForSignal(stopSignals_, 0.1)) {
      fail(std::string("interrupted by SIG") + sigabbrev_np(signal));
      return false;
    }
  }
  return true;
}

void Observation::follow() {
  const ObservationSettings& s = plan_.settings;
  ProgressMonitor progress(s, statusPaths(), options_.terminal, 5, storageStatusPaths());
  double lastChange = wallClock();
  std::array<uint64_t, 7> lastCounters{};
  // When the stop time comes by the wall clock: real-time replays of recordings play
  // from when ionproc started.
  const double stopWall = plan_.liveInput ? s.stopTime : startedAt_ + (s.stopTime - s.startTime);
  for (;;) {
    if (const int signal = waitForSignal(stopSignals_, 0.2)) {
      progress.finish();
      fail(std::string("interrupted by SIG") + sigabbrev_np(signal));
      return;
    }
    restartDeadStorageSinks();
    if (!checkParts("")) {  // also brings the status of ionprocs on other hosts here
      progress.finish();
      return;
    }
    const double now = wallClock();
    progress.update(now);
    if (progress.latest()) noteStatus(*progress.latest());
    if (progress.latestStorage()) lastStorageStatus_ = progress.latestStorage();
    tickConsole("observing");
    bool allDone = true;
    for (auto& p : parts_) {
      if (!exitCodeOf(*p) && !p->name().starts_with("station-sim")) allDone = false;
    }
    if (allDone) break;
    // Progress: ionproc's blocks and integrations, or storage-sink making, writing or
    // closing its MSs (which before the first block and after the last move nothing else).
    const ion::IonStatus ion = lastStatus_.value_or(ion::IonStatus{});
    const storage::StorageStatus st = lastStorageStatus_.value_or(storage::StorageStatus{});
    const std::array<uint64_t, 7> counters{
        uint64_t(ion.newestBlock + 1), ion.integrations,        ion.storageSent,
        st.measurementSetsCreated,     st.measurementSetsReady, st.integrationsWritten,
        st.measurementSetsClosed};
    if (counters != lastCounters) lastCounters = counters, lastChange = now;
    const bool late = s.realTime && now > stopWall + options_.keepGoingSeconds;
    const bool stalled = !s.realTime && now - lastChange > options_.keepGoingSeconds;
    if (late || stalled) {
      progress.finish();
      std::string laggards;
      for (auto& p : parts_)
        if (p->running()) laggards += " " + describe(*p);
      const std::string why =
          late ? "still running " + std::to_string(int(options_.keepGoingSeconds)) +
                     " s after the stop time"
               : "no progress for " + std::to_string(int(options_.keepGoingSeconds)) + " s";
      warnings_.push_back("terminated" + laggards + ": " + why);
      RTCP_LOG_WARN("observe", warnings_.back());
      return;
    }
  }
  progress.finish();
}

std::vector<std::string> Observation::storageStatusPaths() const {
  std::vector<std::string> paths;
  if (plan_.localStorageSink()) paths.push_back(storageStatusPath("storage-sink"));
  for (const RemotePartPlan& storage : plan_.remoteStorageSinks)
    paths.push_back(storageStatusPath(storage.name));
  return paths;
}

void Observation::waitUntilRunning(ChildProcess& p) {
  const auto it = remote_.find(p.name());
  if (it == remote_.end() || !takesStopSignals(p.name())) return;
  RemotePart& remote = it->second;
  while (p.running() && !remote.output->started() &&
         wallClock() < remote.launchedAt + options_.startupSeconds) {
    remote.output->update();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void Observation::stop(ChildProcess& p, double seconds) {
  if (!p.running()) return;
  RTCP_LOG_INFO("observe", "stopping " << describe(p));
  waitUntilRunning(p);
  p.signal(SIGINT);
  if (p.waitFor(seconds)) return;
  warnings_.push_back(describe(p) + " did not stop within " + std::to_string(int(seconds)) +
                      " s: killed");
  RTCP_LOG_WARN("observe", warnings_.back());
  if (remote_.count(p.name())) {
    p.signal(SIGINT);  // mpiexec's second Ctrl-C: it kills the part on its host
    if (p.waitFor(5)) return;
  }
  p.kill();
}

void Observation::stopAll() {
  tickConsole("stopping", true);
  for (const char* name : {"station-sim", "correlator"})
    for (ChildProcess* p : partsNamed(name)) p->signal(SIGINT);
  for (auto it = plan_.ionprocs.rbegin(); it != plan_.ionprocs.rend(); ++it)
    if (ChildProcess* p = part(it->name))
      stop(*p, 20);  // the first, last: sends what it integrated on
  for (ChildProcess* p : partsNamed("storage-sink"))
    stop(*p, 30);  // writes what it staged, closes the MSs
  for (ChildProcess* p : partsNamed("correlator")) stop(*p, 10);
  for (ChildProcess* p : partsNamed("station-sim")) stop(*p, 5);
  relayRemoteOutput();
  try {
    if (auto status = readStorageStatuses(storageStatusPaths()))
      lastStorageStatus_ = std::move(status);
  } catch (const std::exception& e) {
    warnings_.push_back(e.what());
  }
  if (part(plan_.ionprocs.front().name)) {
    try {
      if (auto status = readStatuses(plan_.settings, statusPaths())) noteStatus(*status);
    } catch (const std::exception& e) {
      warnings_.push_back(e.what());
    }
  }
  tickConsole("stopping", true);
}

ObservationSummary Observation::summarise() {
  const ObservationSettings& s = plan_.settings;
  ObservationSummary summary;
  summary.observationId = s.observationId;
  summary.parset = plan_.parsetPath;
  summary.start = formatUtc(s.startTime);
  summary.stop = formatUtc(s.stopTime);
  summary.durationSeconds = s.stopTime - s.startTime;
  summary.wallSeconds = endedAt_ - startedAt_;
  for (const auto& p : parts_)
    if (!p->name().starts_with("rtcp-inspect")) {
      summary.exitCodes[p->name()] = exitCodeOf(*p).value_or(-1);
      // Of a part on another host only mpiexec's CPU time would be known here.
      if (p->cpuSeconds() && !remote_.count(p->name()))
        summary.cpuSeconds[p->name()] = *p->cpuSeconds();
    }
  for (const std::string& ms : plan_.measurementSets)
    if (fs::exists(ms)) {
      summary.measurementSets.push_back(ms);
      summary.bytesWritten += directoryBytes(ms);
    }
  for (const auto& [name, remote] : remote_)  // as their storage-sinks reported them
    for (const WrittenMeasurementSet& ms : remote.output->measurementSets()) {
      summary.measurementSets.push_back(remote.host + ":" + ms.path);
      summary.bytesWritten += ms.bytes;
    }
  if (lastStatus_ && !lastStatus_->finished)
    warnings_.push_back("the packet counts are those of ionproc's last status, written at " +
                        formatUtc(lastStatus_->wallTime) +
                        ", not of its end (it could not write its final status)");
  if (lastStatus_) {
    const ion::IonStatus& st = *lastStatus_;
    summary.beamFormedBlocks = {st.beamFormedQueued,  st.beamFormedSent,
                                st.beamFormedDropped, st.beamFormedSpooled,
                                st.beamFormedResent,  st.beamFormedUnprotected};
    for (size_t i = 0; i < st.stations.size() && int(i) < s.nrStations(); ++i) {
      const int index = s.stationIndex(st.stations[i].name);
      const std::vector<bool> carrying =
          index >= 0 ? carryingInputs(s, index) : std::vector<bool>{};
      const ion::IonStatus::Station& in = st.stations[i];
      StationSummary station;
      station.name = in.name;
      // Inside start..stop only: packets of the margins cannot make up for losses inside.
      station.packetsReceived =
          in.packetsAccepted -
          std::min(in.packetsAccepted, in.acceptedBeforeStart + in.acceptedAfterStop);
      station.packetsBeforeWindow = in.acceptedBeforeStart;
      station.packetsAfterWindow = in.acceptedAfterStop;
      station.packetsLate = in.late;
      station.packetsDuplicated = in.duplicated;
      station.packetsImplausible = in.implausible;
      station.packetsBeforeStart = in.beforeStart;
      station.packetsRejected =
          in.rejected - std::min(in.rejected, in.implausible + in.beforeStart);
      station.flaggedFraction =
          in.samplesServed ? double(in.samplesFlagged) / double(in.samplesServed) : 0;
      const uint64_t arrived = in.samplesServed - std::min(in.samplesServed, in.samplesFlagged);
      station.subbandLevelFlagged = arrived ? double(in.samplesLevelFlagged) / double(arrived) : 0;
      station.subbandLevelFlaggedBlocks = in.subbandBlocksLevelFlagged;
      for (size_t k = 0; k < carrying.size(); ++k) {
        PortSummary port;
        port.packetsReceived =
            k < st.stations[i].portsAccepted.size() ? st.stations[i].portsAccepted[k] : 0;
        port.packetsExpected = carrying[k] ? packetsPerStream(s) : 0;
        port.packetsLost = port.packetsExpected > port.packetsReceived
                               ? port.packetsExpected - port.packetsReceived
                               : 0;
        station.packetsExpected += port.packetsExpected;
        station.packetsLost += port.packetsLost;
        station.ports.push_back(port);
      }
      station.lossFraction = station.packetsExpected
                                 ? double(station.packetsLost) / double(station.packetsExpected)
                                 : 0;
      station.packetsRecorded = in.packetsRecorded;
      station.packetsNotRecorded = in.packetsNotRecorded;
      summary.stations.push_back(station);
      summary.blocksDropped = std::max(summary.blocksDropped, st.stations[i].blocksGone);
    }
    // On the data, by ionproc's clock: blocks served per second between two of its status
    // snapshots (observe may have been paused meanwhile: its own clock says nothing); with
    // fewer than two (a short replay), the blocks served by ionproc's end.
    if (firstServed_ && lastServed_->wallTime > firstServed_->wallTime + 0.5) {
      summary.realTimeFactor = double(lastServed_->block - firstServed_->block) *
                               s.blockDuration() / (lastServed_->wallTime - firstServed_->wallTime);
    } else {
      const double observed = double(st.newestBlock + 1) * s.blockDuration();
      const double begin = s.realTime ? std::max(ranksStartedAt_, s.startTime) : ranksStartedAt_;
      if (st.wallTime > begin && ranksStartedAt_ > 0)
        summary.realTimeFactor = observed / (st.wallTime - begin);
    }
  }
  countStoredIntegrations(summary);
  noteRecordings(summary);
  listDumps(summary);
  listBeamFormedFiles(summary);
  noteStorageFailure();
  noteIntruders();
  summary.warnings = warnings_;
  for (const auto& p : parts_)
    if (p->name().starts_with("correlator") || p->name().starts_with("ionproc"))
      for (std::string& line : flaggingLines(p->logPath())) summary.flagging.push_back(line);
  addFlaggingReports(summary.flagging, summary.stations);
  for (const auto& p : parts_)
    if (const int code = summary.exitCodes[p->name()];
        code != 0 && failure_.empty() && !p->name().starts_with("rtcp-inspect"))
      failure_ =
          describe(*p) + " exited with " + std::to_string(code) + " (see " + p->logPath() + ")";
  // What is missing: every MS planned that no file here or report from there shows.
  std::vector<std::string> planned = plan_.measurementSets;
  planned.insert(planned.end(), plan_.remoteMeasurementSets.begin(),
                 plan_.remoteMeasurementSets.end());
  for (const std::string& ms : planned)
    if (std::find(summary.measurementSets.begin(), summary.measurementSets.end(), ms) ==
        summary.measurementSets.end())
      summary.warnings.push_back("not written: " + ms);
  const size_t expected = planned.size();
  const size_t beamFormedWritten =
      size_t(std::count_if(summary.beamFormedFiles.begin(), summary.beamFormedFiles.end(),
                           [](const BeamFormedFileSummary& f) { return f.blocksWritten > 0; }));
  if (failure_.empty() && beamFormedWritten < summary.beamFormedFiles.size())
    failure_ = "only " + std::to_string(beamFormedWritten) + " of " +
               std::to_string(summary.beamFormedFiles.size()) + " beam-formed files were written";
  if (failure_.empty() && summary.measurementSets.size() < expected)
    failure_ = "only " + std::to_string(summary.measurementSets.size()) + " of " +
               std::to_string(expected) + " MeasurementSets were written";
  if (failure_.empty() && !summary.warnings.empty()) summary.reason = summary.warnings.front();
  // The parset's warnings were known before the start: listed, never the run's reason.
  summary.warnings.insert(summary.warnings.end(), options_.parsetWarnings.begin(),
                          options_.parsetWarnings.end());
  summary.ok = failure_.empty();
  summary.assess();
  for (const std::string& d : summary.degradations) RTCP_LOG_WARN("observe", "degraded: " << d);
  if (!summary.ok) {  // what is on disk is incomplete: not "written"
    summary.reason = failure_;
    summary.partialMeasurementSets = std::move(summary.measurementSets);
    summary.measurementSets.clear();
  }
  return summary;
}

void Observation::noteRecordings(ObservationSummary& summary) {
  const std::string& dir = plan_.recordingDirectory;
  if (dir.empty()) return;
  summary.recording = describeRecording(dir, plan_.settings, summary.stations);
  if (const uint64_t notRecorded = summary.recording.packetsNotRecorded)
    warnings_.push_back(std::to_string(notRecorded) +
                        " valid packets could not be recorded (no free buffer, the bound on disk "
                        "use, or a failed write: see the ionproc logs)");
  try {  // what replays the recordings through the same chain, into DIR/replay
    const Parset replay = replayParset(plan_.parset, plan_.settings, dir, dir + "/replay");
    std::ofstream file(dir + "/replay.parset");
    file << "# replays the recordings of observation " << plan_.settings.observationId
         << " (written by observe from " << plan_.parsetPath << ")\n"
         << replay.toString();
    if (!file) throw std::runtime_error("cannot write " + dir + "/replay.parset");
  } catch (const std::exception& e) {
    warnings_.push_back(std::string("recordings: ") + e.what());
  }
}

void Observation::listDumps(ObservationSummary& summary) {
  std::error_code error;
  std::vector<std::string> directories;
  for (const auto& entry : fs::directory_iterator(plan_.directory + "/dumps", error))
    if (fs::exists(entry.path() / "dump.parset")) directories.push_back(entry.path().string());
  std::sort(directories.begin(), directories.end());
  for (const std::string& dir : directories) try {  // partial ones say what they lack
      summary.dumps.push_back(describeDump(dir));
    } catch (const std::exception& e) {
      warnings_.push_back(std::string("dump ") + dir + ": " + e.what());
    }
}

void Observation::countStoredIntegrations(ObservationSummary& summary) {
  const ObservationSettings& s = plan_.settings;
  if (!s.correlatedOutput.enabled) return;
  summary.integrationsExpected = uint64_t(s.nrIntegrations() * s.nrSubbands());
  // This host's MSs as they are on disk now that every storage-sink has stopped.
  const int baselines = nrBaselines(s.nrStations());
  for (const std::string& ms : plan_.measurementSets) {
    std::error_code error;
    if (!fs::exists(ms, error)) continue;  // "not written", below
    try {
      const storage::MeasurementSetHoldings holdings = storage::readHoldings(ms, baselines);
      summary.integrationsStored += uint64_t(holdings.withData());
      summary.integrationsFlagged += uint64_t(holdings.flagged);
    } catch (const std::exception& e) {
      warnings_.push_back(e.what());
      RTCP_LOG_WARN("observe", e.what());
    }
  }
  // Those of other hosts as their storage-sinks reported them after the final flush (an MS
  // with no report is "not written"; of a restarted sink, the last report of each MS).
  std::map<std::string, const WrittenMeasurementSet*> reported;
  for (const auto& [name, remote] : remote_)
    for (const WrittenMeasurementSet& ms : remote.output->measurementSets())
      reported[remote.host + ":" + ms.path] = &ms;
  for (const auto& [path, ms] : reported) {
    summary.integrationsStored += uint64_t(std::max<int64_t>(0, ms->integrations - ms->missing));
    summary.integrationsFlagged += uint64_t(std::max<int64_t>(0, ms->missing));
  }
  summary.integrationsDropped = summary.integrationsExpected -
                                std::min(summary.integrationsExpected, summary.integrationsStored);
}

void Observation::listBeamFormedFiles(ObservationSummary& summary) {
  const ObservationSettings& s = plan_.settings;
  if (s.beamFormed.files.empty()) return;
  // This host's files as they are on disk now that every storage-sink has stopped (a sink
  // killed and restarted continued them: BeamFormedHoldings.h); the others' as their
  // storage-sinks reported them at their end (`--report`, counted from the files there; a
  // restarted one's last report).
  const int64_t expected = nrProcessedBlocks(s);
  for (size_t f = 0; f < s.beamFormed.files.size(); ++f) {
    const BeamFormedFile& file = s.beamFormed.files[f];
    const std::string path = file.directory + "/" + file.filename;
    std::optional<WrittenBeamFormedFile> written;
    BeamFormedFileSummary entry;
    entry.path = path;
    if (isLocalHost(file.host)) {
      written = localBeamFormedFile(int(f));
    } else {
      entry.path = file.host + ":" + path;
      if (const auto it = remote_.find("storage-sink@" + file.host); it != remote_.end())
        for (const WrittenBeamFormedFile& w : it->second.output->beamFormedFiles())
          if (w.path == path) written = w;
    }
    entry.nrSubbands = file.nrSubbands;
    entry.blocksExpected = expected;
    if (written) {
      entry.bytes = written->bytes;
      entry.blocksWritten = written->blocks;
      entry.subbandBlocksLost = written->lost;
    } else {
      entry.subbandBlocksLost = expected * file.nrSubbands;
      warnings_.push_back("not written: " + entry.path);
    }
    summary.beamFormedFiles.push_back(entry);
  }
}

std::optional<WrittenBeamFormedFile> Observation::localBeamFormedFile(int index) {
  const ObservationSettings& s = plan_.settings;
  const BeamFormedFile& file = s.beamFormed.files.at(size_t(index));
  const storage::BeamFormedFileLayout layout(s, index, file.directory);
  std::error_code error;
  if (!fs::exists(layout.h5Path, error)) return std::nullopt;
  try {
    const storage::BeamFormedHoldings held =
        storage::readBeamFormedHoldings(layout, nrProcessedBlocks(s));
    return WrittenBeamFormedFile{layout.h5Path, held.blocks, nrProcessedBlocks(s),
                                 held.subbandBlocksLost, held.bytes};
  } catch (const std::exception& e) {
    warnings_.push_back(e.what());
    RTCP_LOG_WARN("observe", e.what());
    return std::nullopt;
  }
}

std::vector<std::string> Observation::localStorageSinkArguments() const {
  return {partExecutable("storage-sink"),
          plan_.parsetPath,
          "--secret-file",
          plan_.secretPath,
          "--port",
          std::to_string(plan_.storagePort),
          "--status",
          storageStatusPath("storage-sink"),
          "--report"};
}

std::vector<std::string> Observation::remoteStorageSinkCommand(const std::string& host) const {
  return {partExecutable("storage-sink"),
          "-",
          "--secret-file",
          "-",
          "--port",
          std::to_string(plan_.storagePort),
          "--location-host",
          host,
          "--report",
          "--status",
          "-"};
}

void Observation::restartDeadStorageSinks() {
  if (plan_.localStorageSink()) restartIfDied("storage-sink");
  for (const RemotePartPlan& storage : plan_.remoteStorageSinks) restartIfDied(storage.name);
}

void Observation::restartIfDied(const std::string& name) {
  ChildProcess* sink = part(name);
  if (!sink) return;
  const std::optional<int> code = exitCodeOf(*sink);
  // Killed or crashed (a signal): started again, it reopens the MSs and appends, and
  // ionproc sends what it kept meanwhile. An exit with an error (a full disk, a bad
  // parset) would only come back.
  int& restarts = storageSinkRestarts_[name];
  if (!code || *code <= 128 || restarts >= kMaxStorageSinkRestarts) return;
  ++restarts;
  const std::string restart = ".restart" + std::to_string(restarts);
  warnings_.push_back(describe(*sink) + " died (SIG" + sigabbrev_np(*code - 128) + ", see " +
                      sink->logPath() + "); restarted (" + std::to_string(restarts) +
                      " of at most " + std::to_string(kMaxStorageSinkRestarts) + ")");
  RTCP_LOG_WARN("observe", warnings_.back());
  const std::string log = plan_.directory + "/" + name + restart + ".log";
  std::unique_ptr<ChildProcess> again;
  if (const auto it = remote_.find(name); it != remote_.end()) {
    // Through a new mpiexec, its output into a new file; what the first one reported
    // (MSs it closed) stays.
    RemotePart& remote = it->second;
    const std::string output = plan_.directory + "/" + name + restart + ".out";
    remote.output->follow(output);
    remote.launchedAt = wallClock();
    const auto storage =
        std::find_if(plan_.remoteStorageSinks.begin(), plan_.remoteStorageSinks.end(),
                     [&](const RemotePartPlan& r) { return r.name == name; });
    again =
        std::make_unique<ChildProcess>(name,
                                       hydraCommand(options_.launcher, remote.host, 1,
                                                    remoteStorageSinkCommand(remote.host), true),
                                       log, ChildStreams{storage->parsetPath, output, false});
  } else {
    ChildStreams streams;
    streams.stopSignalsBlocked = true;
    again = std::make_unique<ChildProcess>(name, localStorageSinkArguments(), log, streams);
  }
  RTCP_LOG_INFO("observe", "starting " << describe(*sink) << " again: " << again->commandLine());
  for (auto& p : parts_)
    if (p.get() == sink) p = std::move(again);
  part(name)->start();
  partPids_.insert(part(name)->pid());
}

void Observation::noteIntruders() {
  const uint64_t link = lastStatus_ ? lastStatus_->linkConnectionsRefused : 0;
  if (link)
    warnings_.push_back("ionproc refused " + std::to_string(link) +
                        " link connections that did not prove they belong to the observation "
                        "(their peers are in the ionproc logs)");
  if (!lastStorageStatus_) return;
  const storage::StorageStatus& st = *lastStorageStatus_;
  if (st.connectionsRefused)
    warnings_.push_back("storage-sink refused " + std::to_string(st.connectionsRefused) +
                        " connections that did not prove they belong to the observation (their "
                        "peers are in the storage-sink logs)");
  if (st.blocksDuplicated)
    warnings_.push_back("storage-sink received " + std::to_string(st.blocksDuplicated) +
                        " blocks for integrations it had already written, the first kept (the "
                        "sources and integrations are in the storage-sink logs)");
}

void Observation::noteStorageFailure() {
  if (!lastStorageStatus_ || lastStorageStatus_->error.empty()) return;
  const storage::StorageStatus& st = *lastStorageStatus_;
  std::string what = "storage-sink: " + st.error;
  if (st.integrationsLost)
    what += "; " + std::to_string(st.integrationsLost) + " integrations received were not written";
  if (ChildProcess* sink = part("storage-sink")) what += " (see " + sink->logPath() + ")";
  if (st.failed && (failure_.empty() || failure_.starts_with("storage-sink failed with exit")))
    failure_ = what;  // why storage-sink failed, rather than its exit code and last line
  else if (failure_.find(st.error) == std::string::npos)
    warnings_.push_back(what);
}

void Observation::makePlots(ObservationSummary& summary) {
  // The MSs and beam-formed files written, by host ("": here).
  std::map<std::string, std::vector<std::string>> paths;
  for (const std::string& ms : summary.measurementSets) {
    auto [host, path] = splitHostPath(ms);
    paths[host].push_back(std::move(path));
  }
  for (const BeamFormedFileSummary& file : summary.beamFormedFiles) {
    if (file.blocksWritten == 0) continue;
    auto [host, path] = splitHostPath(file.path);
    paths[host].push_back(std::move(path));
  }
  for (const auto& [host, onHost] : paths) {
    // The MSs and files of another host are read there (its disk is its own); the plots
    // stay beside them, in L<obsId>_inspect/, and the summary names them host:path.
    const std::string out = host.empty()
                                ? plan_.directory + "/plots"
                                : fs::path(onHost.front()).parent_path().string() + "/L" +
                                      std::to_string(plan_.settings.observationId) + "_inspect";
    runInspect(host, onHost, out, (host.empty() ? plan_.directory : out) + "/msoverview.txt",
               summary);
  }
  std::sort(summary.plots.begin(), summary.plots.end());
}

void Observation::runInspect(const std::string& host, const std::vector<std::string>& paths,
                             const std::string& out, const std::string& overview,
                             ObservationSummary& summary) {
  const std::string inspect = inspectExecutable();
  if (inspect.empty()) return;
  std::vector<std::string> command{inspect, "--out", out, "--overview", overview};
  command.insert(command.end(), paths.begin(), paths.end());
  const std::string name = host.empty() ? "rtcp-inspect" : "rtcp-inspect@" + host;
  try {
    ChildProcess& child =
        host.empty() ? addPart(name, command) : addRemotePart(name, host, 1, command, "", "");
    if (!child.waitFor(300)) child.kill();
    if (const int code = exitCodeOf(child).value_or(-1); code != 0) {
      summary.warnings.push_back(describe(child) + " failed with exit code " +
                                 std::to_string(code) + " (see " + child.logPath() + ")");
      RTCP_LOG_WARN("observe", summary.warnings.back());
    }
  } catch (const std::exception& e) {
    summary.warnings.push_back(std::string("plots: ") + e.what());
  }
  if (host.empty()) {
    std::error_code error;
    for (auto it = fs::recursive_directory_iterator(out, error);
         !error && it != fs::recursive_directory_iterator(); it.increment(error))
      if (it->path().extension() == ".png") summary.plots.push_back(it->path().string());
  } else {  // the files it wrote, as it printed them there
    for (const std::string& path : remote_.at(name).output->printedPaths())
      if (path.ends_with(".png")) summary.plots.push_back(host + ":" + path);
  }
}

}  // namespace rtcp::observe
