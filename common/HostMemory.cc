#include "rtcp/HostMemory.h"

#include <algorithm>
#include <fstream>

namespace rtcp {
namespace {

/// A number from a file holding one ("max" or unreadable: nullopt).
std::optional<double> numberIn(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// This process's cgroup (v2: the "0::PATH" line of /proc/self/cgroup).
std::string ownCgroup() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("0::")) return line.substr(3);
  return "";
}

}  // namespace

std::optional<HostMemory> hostMemory() {
  std::ifstream in("/proc/meminfo");
  std::optional<HostMemory> memory;
  for (std::string key; in >> key;) {
    double kilobytes = 0;
    in >> kilobytes;
    in.ignore(1 << 10, '\n');
    if (key == "MemAvailable:") memory = HostMemory{kilobytes * 1024, "MemAvailable"};
  }
  if (!memory) return std::nullopt;
  const std::string cgroup = ownCgroup();
  if (!cgroup.empty()) {
    const std::string dir = "/sys/fs/cgroup" + (cgroup == "/" ? "" : cgroup);
    const std::optional<double> limit = numberIn(dir + "/memory.max");
    const std::optional<double> used = numberIn(dir + "/memory.current");
    if (limit && *limit - used.value_or(0) < memory->bytes)
      memory = HostMemory{std::max(0.0, *limit - used.value_or(0)),
                          "the memory.max of cgroup " + cgroup};
  }
  return memory;
}

}  // namespace rtcp
