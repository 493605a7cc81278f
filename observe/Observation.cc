#include "Observation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include <unistd.h>

#include "Executables.h"
#include "ProgressMonitor.h"
#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

double wallClock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

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

uint64_t directoryBytes(const std::string& path) {
  uint64_t bytes = 0;
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(path, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error))
    if (it->is_regular_file(error)) bytes += it->file_size(error);
  return bytes;
}

/// Packets of one input stream covering start..stop (as station-sim sends them).
uint64_t packetsPerStream(const ObservationSettings& s) {
  const SampleClock clock(s.clockMHz);
  const int64_t samples = clock.firstSampleAtOrAfter(s.stopTime) - clock.firstSampleAtOrAfter(s.startTime);
  return uint64_t((samples + kRspSamplesPerPacket - 1) / kRspSamplesPerPacket);
}

}  // namespace

Observation::Observation(ObservationPlan plan, RunOptions options, sigset_t stopSignals)
    : plan_(std::move(plan)), options_(options), stopSignals_(stopSignals) {}

ChildProcess& Observation::addPart(const std::string& name, std::vector<std::string> arguments) {
  parts_.push_back(std::make_unique<ChildProcess>(name, std::move(arguments), plan_.directory + "/" + name + ".log"));
  ChildProcess& child = *parts_.back();
  RTCP_LOG_INFO("observe", "starting " << name << ": " << child.commandLine());
  child.start();
  return child;
}

ChildProcess* Observation::part(const std::string& name) {
  for (auto& p : parts_)
    if (p->name() == name) return p.get();
  return nullptr;
}

void Observation::fail(const std::string& reason) {
  RTCP_LOG_ERROR("observe", reason);
  if (failure_.empty()) failure_ = reason;
}

ObservationSummary Observation::run() {
  startedAt_ = wallClock();
  if (startParts()) follow();
  stopAll();
  endedAt_ = wallClock();
  ObservationSummary summary = summarise();
  if (summary.ok) makePlots(summary);
  summary.write(plan_.directory);
  return summary;
}

bool Observation::startParts() {
  const std::string parset = plan_.parsetPath;
  try {
    if (!plan_.measurementSets.empty())
      addPart("storage-sink", {partExecutable("storage-sink"), parset, "--port", std::to_string(plan_.storagePort)});
    // Ranks on other hosts reach ionproc by this host's name over TCP; local ranks over a
    // unix socket, which moves about twice the bytes per CPU second of loopback TCP
    // (rtcp-bench link). Its path stays short: sockaddr_un holds 108 bytes.
    const bool remoteRanks = !options_.mpiHosts.empty();
    std::vector<std::string> correlator{mpirunExecutable()};
    if (remoteRanks) correlator.insert(correlator.end(), {"-hosts", options_.mpiHosts});
    correlator.insert(correlator.end(), {"-np", std::to_string(options_.ranks), partExecutable("correlator"), parset});
    // One ionproc per input host; the first integrates and sends to storage-sink.
    for (const IonprocPlan& ionproc : plan_.ionprocs) {
      const std::string port = std::to_string(ionproc.linkPort);
      const std::string listen = remoteRanks ? "tcp:0.0.0.0:" + port
                                             : "unix:/tmp/rtcp-link-" + std::to_string(getpid()) + "-" + port;
      std::vector<std::string> arguments{partExecutable("ionproc"), parset, "--link", listen, "--status",
                                         statusPath(ionproc)};
      if (plan_.ionprocs.size() > 1) {
        std::string stations;
        for (const std::string& name : ionproc.stations) stations += (stations.empty() ? "" : ",") + name;
        arguments.insert(arguments.end(), {"--stations", stations});
        if (&ionproc != &plan_.ionprocs.front()) arguments.push_back("--no-output");
      }
      addPart(ionproc.name, arguments);
      correlator.insert(correlator.end(), {"--ionproc", remoteRanks ? "tcp:" + hostName() + ":" + port : listen});
    }
    if (!waitForIonprocs()) return false;
    if (options_.threads > 0) correlator.insert(correlator.end(), {"--threads", std::to_string(options_.threads)});
    ranksStartedAt_ = wallClock();
    addPart("correlator", correlator);
    if (!plan_.stationSimParsetPath.empty())
      addPart("station-sim", {partExecutable("station-sim"), plan_.stationSimParsetPath});
  } catch (const std::exception& e) {
    fail(e.what());
    return false;
  }
  return true;
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

bool Observation::waitForIonproc(const IonprocPlan& plan, double deadline) {
  ChildProcess& ionproc = *part(plan.name);
  while (!fs::exists(statusPath(plan))) {
    for (auto& p : parts_)
      if (p->poll()) {
        fail(p->name() + " exited with " + std::to_string(*p->exitCode()) + " while starting (see " + p->logPath() + ")");
        return false;
      }
    if (wallClock() > deadline) {
      fail(plan.name + " did not come up within " + std::to_string(int(options_.startupSeconds)) + " s (see " +
           ionproc.logPath() + ")");
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
  ProgressMonitor progress(s, statusPaths(), options_.terminal);
  double lastChange = wallClock();
  std::tuple<int64_t, uint64_t, uint64_t> lastCounters{-2, 0, 0};
  // When the stop time comes by the wall clock: real-time replays of recordings play
  // from when ionproc started.
  const double stopWall = plan_.liveInput ? s.stopTime : startedAt_ + (s.stopTime - s.startTime);
  for (;;) {
    if (const int signal = waitForSignal(stopSignals_, 0.2)) {
      progress.finish();
      fail(std::string("interrupted by SIG") + sigabbrev_np(signal));
      return;
    }
    const double now = wallClock();
    progress.update(now);
    if (progress.latest()) lastStatus_ = progress.latest();
    bool allDone = true;
    for (auto& p : parts_) {
      if (p->poll()) {
        if (p->name() == plan_.ionprocs.front().name && ionprocEndedAt_ == 0) ionprocEndedAt_ = now;
        if (*p->exitCode() != 0) {
          progress.finish();
          fail(p->name() + " failed with exit code " + std::to_string(*p->exitCode()) + " (see " + p->logPath() + ")");
          return;
        }
      } else if (p->name() != "station-sim") {
        allDone = false;
      }
    }
    if (allDone) break;
    if (lastStatus_) {
      const std::tuple counters{lastStatus_->newestBlock, lastStatus_->integrations, lastStatus_->storageSent};
      if (counters != lastCounters) lastCounters = counters, lastChange = now;
    }
    const bool late = s.realTime && now > stopWall + options_.keepGoingSeconds;
    const bool stalled = !s.realTime && now - lastChange > options_.keepGoingSeconds && !storageStarting(now);
    if (late || stalled) {
      progress.finish();
      std::string laggards;
      for (auto& p : parts_)
        if (p->running()) laggards += " " + p->name();
      const std::string why = late ? "still running " + std::to_string(int(options_.keepGoingSeconds)) +
                                         " s after the stop time"
                                   : "no progress for " + std::to_string(int(options_.keepGoingSeconds)) + " s";
      warnings_.push_back("terminated" + laggards + ": " + why);
      RTCP_LOG_WARN("observe", warnings_.back());
      return;
    }
  }
  progress.finish();
}

bool Observation::storageStarting(double now) {
  const ChildProcess* storage = part("storage-sink");
  return storage && storage->running() && lastStatus_ && lastStatus_->storageConnections == 0 &&
         now - startedAt_ < options_.storageStartupSeconds;
}

void Observation::stopAll() {
  auto stop = [&](const std::string& name, double seconds) {
    ChildProcess* p = part(name);
    if (!p || !p->running()) return;
    RTCP_LOG_INFO("observe", "stopping " << name);
    p->signal(SIGINT);
    if (!p->waitFor(seconds)) {
      warnings_.push_back(name + " did not stop within " + std::to_string(int(seconds)) + " s: killed");
      RTCP_LOG_WARN("observe", warnings_.back());
      p->kill();
    }
  };
  for (const char* name : {"station-sim", "correlator"})
    if (ChildProcess* p = part(name); p && p->running()) p->signal(SIGINT);
  for (auto it = plan_.ionprocs.rbegin(); it != plan_.ionprocs.rend(); ++it)
    stop(it->name, 20);  // the first, last: sends what it integrated on to storage
  stop("storage-sink", 30);  // writes what it staged and closes the MSs
  stop("correlator", 10);
  stop("station-sim", 5);
  if (ionprocEndedAt_ == 0) ionprocEndedAt_ = wallClock();
  if (part(plan_.ionprocs.front().name)) {
    try {
      if (auto status = readStatuses(plan_.settings, statusPaths())) lastStatus_ = std::move(status);
    } catch (const std::exception& e) {
      warnings_.push_back(e.what());
    }
  }
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
    if (p->name() != "rtcp-inspect") {
      summary.exitCodes[p->name()] = p->exitCode().value_or(-1);
      if (p->cpuSeconds()) summary.cpuSeconds[p->name()] = *p->cpuSeconds();
    }
  for (const std::string& ms : plan_.measurementSets)
    if (fs::exists(ms)) {
      summary.measurementSets.push_back(ms);
      summary.bytesWritten += directoryBytes(ms);
    }
  if (lastStatus_) {
    const ion::IonStatus& st = *lastStatus_;
    for (size_t i = 0; i < st.stations.size() && int(i) < s.nrStations(); ++i) {
      StationSummary station{st.stations[i].name, st.stations[i].packetsAccepted,
                             packetsPerStream(s) * s.stations[i].inputs.size(), 0, 0};
      station.packetsLost = station.packetsExpected > station.packetsReceived ? station.packetsExpected - station.packetsReceived : 0;
      station.lossFraction = station.packetsExpected ? double(station.packetsLost) / double(station.packetsExpected) : 0;
      summary.stations.push_back(station);
      summary.blocksDropped = std::max(summary.blocksDropped, st.stations[i].blocksGone);
    }
    const uint64_t expected = uint64_t(s.nrIntegrations() * s.nrSubbands());
    summary.integrationsDropped = s.correlatedOutput.enabled && expected > st.storageSent ? expected - st.storageSent : 0;
    const double observed = double(st.newestBlock + 1) * s.blockDuration();
    const double begin = s.realTime ? std::max(ranksStartedAt_, s.startTime) : ranksStartedAt_;
    if (ionprocEndedAt_ > begin && ranksStartedAt_ > 0) summary.realTimeFactor = observed / (ionprocEndedAt_ - begin);
  }
  summary.warnings = warnings_;
  for (const auto& [name, code] : summary.exitCodes)
    if (code != 0 && failure_.empty())
      failure_ = name + " exited with " + std::to_string(code) + " (see " + plan_.directory + "/" + name + ".log)";
  if (failure_.empty() && !plan_.measurementSets.empty() && summary.measurementSets.size() < plan_.measurementSets.size())
    failure_ = "only " + std::to_string(summary.measurementSets.size()) + " of " +
               std::to_string(plan_.measurementSets.size()) + " MeasurementSets were written";
  if (failure_.empty() && !summary.warnings.empty()) summary.reason = summary.warnings.front();
  summary.ok = failure_.empty();
  if (!summary.ok) summary.reason = failure_;
  return summary;
}

void Observation::makePlots(ObservationSummary& summary) {
  const std::string inspect = inspectExecutable();
  if (inspect.empty() || summary.measurementSets.empty()) return;
  const std::string plots = plan_.directory + "/plots";
  std::vector<std::string> arguments{inspect, "--out", plots, "--overview",
                                     plan_.directory + "/msoverview.txt"};
  arguments.insert(arguments.end(), summary.measurementSets.begin(), summary.measurementSets.end());
  try {
    ChildProcess& child = addPart("rtcp-inspect", arguments);
    if (!child.waitFor(300)) child.kill();
    if (child.exitCode() != 0) {
      summary.warnings.push_back("rtcp-inspect failed with exit code " + std::to_string(child.exitCode().value_or(-1)) +
                                 " (see " + child.logPath() + ")");
      RTCP_LOG_WARN("observe", summary.warnings.back());
    }
  } catch (const std::exception& e) {
    summary.warnings.push_back(std::string("plots: ") + e.what());
  }
  std::error_code error;
  for (auto it = fs::recursive_directory_iterator(plots, error); !error && it != fs::recursive_directory_iterator();
       it.increment(error))
    if (it->path().extension() == ".png") summary.plots.push_back(it->path().string());
  std::sort(summary.plots.begin(), summary.plots.end());
}

}  // namespace rtcp::observe
