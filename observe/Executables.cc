#include "Executables.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>
#include <thread>

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

bool isExecutable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0 && fs::is_regular_file(path);
}

/// The name's full path in PATH, or "".
std::string inPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');)
    if (!dir.empty() && isExecutable(dir + "/" + name)) return dir + "/" + name;
  return "";
}

}  // namespace

std::string partExecutable(const std::string& part) {
  static const std::map<std::string, std::string> built = {
      {"station-sim", RTCP_STATION_SIM_EXE},
      {"ionproc", RTCP_IONPROC_EXE},
      {"correlator", RTCP_CORRELATOR_EXE},
      {"storage-sink", RTCP_STORAGE_SINK_EXE},
  };
  const auto it = built.find(part);
  if (it != built.end() && isExecutable(it->second)) return it->second;
  // Installed side by side, or a build tree moved as a whole: ../PART/PART.
  std::error_code error;
  const fs::path self = fs::canonical("/proc/self/exe", error);
  for (const fs::path& candidate :
       {self.parent_path() / part, self.parent_path().parent_path() / part / part})
    if (!error && isExecutable(candidate.string())) return candidate.string();
  const std::string found = inPath(part);
  return found.empty() ? part : found;
}

std::string mpirunExecutable() {
  for (const std::string candidate : {"/usr/bin/mpirun", "/usr/bin/mpiexec.hydra"})
    if (isExecutable(candidate)) return candidate;
  return "mpirun";
}

std::string inspectExecutable() {
  const std::string shipped = std::string(RTCP_SOURCE_TREE) + "/tools/rtcp-inspect";
  if (fs::exists(shipped)) return shipped;
  return inPath("rtcp-inspect");
}

int coresOfThisMachine() {
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? int(n) : 1;
}

}  // namespace rtcp::observe
