#include "ObservationRunner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "rtcp/Files.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

extern char** environ;

namespace rtcp::nightly {
namespace {

std::atomic<bool> gStop{false};

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
}

/// "NN_<parset name without extension>", the observation's directory name.
std::string directoryName(const ScheduleEntry& entry, int index) {
  char prefix[16];
  std::snprintf(prefix, sizeof prefix, "%02d_", index);
  return prefix + std::filesystem::path(entry.parset).stem().string();
}

/// Starts observe in a process group of its own, stdout and stderr into files.
pid_t spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int error = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) throw std::runtime_error("cannot start " + args[0] + ": " + std::strerror(error));
  return pid;
}

}  // namespace

ObservationRunner::ObservationRunner(RunnerOptions options) : options_(std::move(options)) {}

void ObservationRunner::requestStop() { gStop = true; }
bool ObservationRunner::stopRequested() { return gStop; }

bool ObservationRunner::waitUntil(double unixTime) const {
  double left = unixTime - wallClock();
  if (left > 1)
    RTCP_LOG_INFO("nightly", "waiting " << int(left) << " s until " << formatUtc(unixTime));
  while (!gStop && (left = unixTime - wallClock()) > 0)
    std::this_thread::sleep_for(std::chrono::duration<double>(std::min(left, 0.5)));
  return !gStop;
}

ObservationResult ObservationRunner::run(const ScheduleEntry& entry, int index) {
  ObservationResult result;
  result.index = index;
  result.entry = entry;
  result.directory = options_.reportDirectory + "/" + directoryName(entry, index);
  const double lead = entry.startNow ? 0.0 : options_.leadSeconds;
  if (!waitUntil(entry.plannedStart - lead)) {
    result.skipped = true;
    result.reason = "not run: nightly was interrupted";
    return result;
  }
  std::filesystem::create_directories(result.directory);
  const double start = std::max(wallClock(), entry.plannedStart);
  execute(result, start + entry.duration());
  collect(result);
  return result;
}

std::optional<double> plannedEnd(const std::string& directory) {
  const std::string path = directory + "/observation.parset";
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return std::nullopt;
  try {
    std::vector<ParsetError> errors;  // other keys do not matter here
    const ObservationSettings s =
        ObservationSettings::readAll(Parset::fromFile(path), StationTable::shipped(), errors);
    if (s.stopTime > 0) return s.stopTime;
  } catch (const std::exception&) {
  }
  return std::nullopt;  // being written: read again next time
}

void ObservationRunner::execute(ObservationResult& result, double expectedEnd) const {
  std::vector<std::string> args{options_.observe, result.entry.parset, "--dir", result.directory};
  if (result.entry.startNow) args.push_back("--now");
  if (!options_.console.empty()) args.insert(args.end(), {"--console", options_.console});
  result.stderrPath = result.directory + "/observe.stderr";
  result.started = wallClock();
  RTCP_LOG_INFO("nightly", "observation " << result.index << ": " << options_.observe << " "
                                          << result.entry.parset
                                          << (result.entry.startNow ? " --now" : ""));
  pid_t pid;
  try {
    pid = spawn(args, result.directory + "/observe.stdout", result.stderrPath);
  } catch (const std::exception& e) {
    result.reason = e.what();
    result.ended = wallClock();
    return;
  }
  if (options_.started) options_.started(result.index, result.directory);
  // Wait for observe; ask it to stop (SIGINT, then SIGTERM, then SIGKILL to its whole
  // process group) when it overruns or nightly is interrupted.
  double stopSince = 0;
  int status = 0;
  std::optional<double> end;  // the planned end, from observe's effective parset
  while (waitpid(pid, &status, WNOHANG) == 0) {
    const double now = wallClock();
    if (!end) end = plannedEnd(result.directory);
    const double deadline = end.value_or(expectedEnd) + options_.maxOverrunSeconds;
    if (stopSince == 0 && (gStop || now > deadline)) {
      stopSince = now;
      result.reason = gStop ? "stopped: nightly was interrupted"
                            : "stopped by nightly: still running " +
                                  std::to_string(int(options_.maxOverrunSeconds)) +
                                  " s after its planned end";
      RTCP_LOG_WARN("nightly", "observation " << result.index << ": " << result.reason);
      kill(-pid, SIGINT);
    } else if (stopSince > 0 && now - stopSince > 60) {
      kill(-pid, SIGKILL);
    } else if (stopSince > 0 && now - stopSince > 30) {
      kill(-pid, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  result.ended = wallClock();
  if (WIFEXITED(status)) result.exitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
}

void ObservationRunner::collect(ObservationResult& result) const {
  const std::string summaryPath = result.directory + "/summary.json";
  std::string summaryProblem;
  if (std::filesystem::exists(summaryPath)) {
    try {
      result.summary = ObservationSummary::fromFile(summaryPath);
    } catch (const std::exception& e) {
      summaryProblem = e.what();
    }
  }
  const bool summaryOk = result.summary && result.summary->ok;
  result.ok = result.reason.empty() && result.exitCode == 0 && summaryOk;
  if (result.ok || !result.reason.empty()) return;
  const std::string errors = errorLines(tryReadFile(result.stderrPath).value_or(""));
  if (result.summary && !result.summary->ok)
    result.reason =
        result.summary->reason.empty() ? "observe reported a failure" : result.summary->reason;
  else if (result.signal != 0)
    result.reason = "observe was killed by signal " + std::to_string(result.signal) + " (" +
                    strsignal(result.signal) + ")";
  else if (result.exitCode != 0)
    result.reason = "observe exited with code " + std::to_string(result.exitCode) +
                    (errors.empty() ? "" : ": " + errors);
  else
    result.reason =
        "observe exited with 0 but its summary.json is " +
        (summaryProblem.empty() ? std::string("missing") : "unreadable: " + summaryProblem);
  if (result.summary && !result.summary->ok && !errors.empty() && result.summary->reason.empty())
    result.reason += ": " + errors;
}

std::string errorLines(const std::string& text) {
  std::vector<std::string> lines, errors, mentions;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    line = trim(line);
    if (line.empty()) continue;
    lines.push_back(line);
    const size_t level = line.find(" ERROR ");
    if (level != std::string::npos)
      errors.push_back(trim(line.substr(level + 7)));
    else if (line.find("error") != std::string::npos || line.find("Error") != std::string::npos)
      mentions.push_back(line);
  }
  std::vector<std::string>& chosen = !errors.empty()     ? errors
                                     : !mentions.empty() ? mentions
                                                         : lines;
  const size_t first = chosen.size() > 20 ? chosen.size() - 20 : 0;
  const size_t from = (&chosen == &lines && chosen.size() > 3) ? chosen.size() - 3 : first;
  std::string joined;
  for (size_t i = from; i < chosen.size(); ++i) joined += (joined.empty() ? "" : "; ") + chosen[i];
  return joined;
}

}  // namespace rtcp::nightly
