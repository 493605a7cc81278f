#include "FileSystemSync.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <stdexcept>

namespace rtcp::storage {

void syncFileSystems(const std::vector<std::string>& paths) {
  std::set<dev_t> synced;
  std::string failures;
  for (const std::string& path : paths) {
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0 || !synced.insert(info.st_dev).second) continue;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (::syncfs(fd) != 0)
      failures += (failures.empty() ? "" : "; ") + path + ": syncfs: " + std::strerror(errno);
    ::close(fd);
  }
  if (!failures.empty()) throw std::runtime_error(failures);
}

}  // namespace rtcp::storage
