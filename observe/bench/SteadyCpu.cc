#include "SteadyCpu.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "rtcp/StatusFile.h"

namespace rtcp::observe::bench {
namespace {

struct ProcessStat {
  pid_t pid = 0;
  pid_t parent = 0;
  std::string name;
  double cpuSeconds = 0;  ///< user + system
};

/// The run-queue wait of each of a process's threads, seconds: the second field of
/// /proc/PID/task/TID/schedstat ("on-CPU ns, waiting ns, timeslices").
std::map<pid_t, double> threadWaitSeconds(pid_t pid) {
  std::map<pid_t, double> waits;
  std::error_code error;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  for (const auto& task : std::filesystem::directory_iterator(tasks, error)) {
    std::ifstream file(task.path() / "schedstat");
    double onCpu = 0, waiting = 0;
    if (file >> onCpu >> waiting)
      waits[pid_t(std::atoi(task.path().filename().c_str()))] = waiting * 1e-9;
  }
  return waits;
}

/// /proc/PID/stat: "pid (comm) state ppid ... utime stime ..." (fields 14 and 15); comm
/// may hold spaces and parentheses, so the fields are counted from its last ')'.
std::optional<ProcessStat> readStat(pid_t pid) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(file, line)) return std::nullopt;
  const size_t open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  ProcessStat s;
  s.pid = pid;
  s.name = line.substr(open + 1, close - open - 1);
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int k = 3; fields >> field; ++k) {
    if (k == 4) s.parent = pid_t(std::atoi(field.c_str()));
    if (k == 14) utime = std::atof(field.c_str());
    if (k == 15) {
      stime = std::atof(field.c_str());
      break;
    }
  }
  static const double ticks = double(::sysconf(_SC_CLK_TCK));
  s.cpuSeconds = (utime + stime) / ticks;
  return s;
}

/// "<name>.rank<N>" for a process MPI started (PMI_RANK=N in /proc/PID/environ), else name.
std::string processLabel(pid_t pid, const std::string& name) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (std::string entry; std::getline(file, entry, '\0');)
    if (entry.starts_with("PMI_RANK=")) return name + ".rank" + entry.substr(9);
  return name;
}

std::vector<ProcessStat> allProcesses() {
  std::vector<ProcessStat> processes;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    if (auto s = readStat(pid_t(std::atoi(name.c_str())))) processes.push_back(*s);
  }
  return processes;
}

/// root and its descendants, whatever order /proc lists them in.
std::set<pid_t> familyOf(pid_t root, const std::vector<ProcessStat>& processes) {
  std::set<pid_t> family{root};
  for (bool grew = true; grew;) {
    grew = false;
    for (const ProcessStat& p : processes)
      if (family.count(p.parent) && family.insert(p.pid).second) grew = true;
  }
  return family;
}

/// ionproc's status: newest block served and blocks in the observation, in seconds.
std::optional<std::pair<double, double>> observedAndTotal(const std::string& path) {
  try {
    const ion::IonStatus status = ion::IonStatus::read(path);
    return std::make_pair(double(status.newestBlock + 1) * status.blockDuration,
                          double(status.nrBlocks) * status.blockDuration);
  } catch (const std::runtime_error&) {
    return std::nullopt;  // not written yet
  }
}

}  // namespace

std::optional<pid_t> findPart(pid_t root, const std::string& part) {
  const std::vector<ProcessStat> processes = allProcesses();
  const std::set<pid_t> family = familyOf(root, processes);
  for (const ProcessStat& p : processes)
    if (p.name == part && family.count(p.pid)) return p.pid;
  return std::nullopt;
}

std::optional<double> processCpuSeconds(pid_t pid) {
  if (const std::optional<ProcessStat> s = readStat(pid)) return s->cpuSeconds;
  return std::nullopt;
}

SteadyCpu::SteadyCpu(pid_t root, std::string ionprocStatusPath, std::vector<std::string> parts)
    : root_(root), statusPath_(std::move(ionprocStatusPath)), parts_(std::move(parts)) {}

SteadyCpu::Snapshot SteadyCpu::snapshot(double observedSeconds) {
  const std::vector<ProcessStat> processes = allProcesses();
  const std::set<pid_t> family = familyOf(root_, processes);
  for (const ProcessStat& p : processes)
    if (family.count(p.pid) && std::find(parts_.begin(), parts_.end(), p.name) != parts_.end()) {
      lastCpu_[p.pid] = {p.name, p.cpuSeconds};
      if (!processLabels_.count(p.pid)) processLabels_[p.pid] = processLabel(p.pid, p.name);
      for (const auto& [thread, wait] : threadWaitSeconds(p.pid))
        lastWait_[thread] = {p.name, wait};
    }
  // A process's CPU includes its ended threads'; a thread's wait ends with it, so each
  // thread keeps the last value seen.
  Snapshot s;
  s.observedSeconds = observedSeconds;
  for (const auto& [pid, partAndCpu] : lastCpu_) {
    s.usage[partAndCpu.first].cpuSeconds += partAndCpu.second;
    s.processCpu[processLabels_.at(pid)] += partAndCpu.second;
  }
  for (const auto& [thread, partAndWait] : lastWait_)
    s.usage[partAndWait.first].waitSeconds += partAndWait.second;
  return s;
}

void SteadyCpu::sample() {
  if (last_) return;
  const auto status = observedAndTotal(statusPath_);
  if (!status || status->second <= 0) return;
  const auto [observed, total] = *status;
  if (!first_ && observed >= total / 4)
    first_ = snapshot(observed);
  else if (first_ && observed >= 3 * total / 4 && observed > first_->observedSeconds)
    last_ = snapshot(observed);
  else if (first_)
    snapshot(observed);  // keeps the CPU of parts that may exit before the window ends
}

std::optional<std::map<std::string, double>> SteadyCpu::perObservedSecond() const {
  return perObservedSecond(&Usage::cpuSeconds);
}

std::optional<std::map<std::string, double>> SteadyCpu::waitPerObservedSecond() const {
  return perObservedSecond(&Usage::waitSeconds);
}

std::optional<std::map<std::string, double>> SteadyCpu::perProcessPerObservedSecond() const {
  if (!first_ || !last_) return std::nullopt;
  const double observed = last_->observedSeconds - first_->observedSeconds;
  std::map<std::string, double> perSecond;
  for (const auto& [label, cpu] : last_->processCpu) {
    if (last_->usage.count(label)) continue;  // a part's only process: perObservedSecond()
    const auto before = first_->processCpu.find(label);
    perSecond[label] = (cpu - (before == first_->processCpu.end() ? 0 : before->second)) / observed;
  }
  return perSecond;
}

std::optional<std::map<std::string, double>> SteadyCpu::perObservedSecond(
    double Usage::*seconds) const {
  if (!first_ || !last_) return std::nullopt;
  const double observed = last_->observedSeconds - first_->observedSeconds;
  std::map<std::string, double> perSecond;
  for (const auto& [part, usage] : last_->usage) {
    const auto before = first_->usage.find(part);
    const double start = before == first_->usage.end() ? 0 : before->second.*seconds;
    perSecond[part] = (usage.*seconds - start) / observed;
  }
  return perSecond;
}

}  // namespace rtcp::observe::bench
