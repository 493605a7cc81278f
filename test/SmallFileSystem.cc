#include "SmallFileSystem.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "TestPrograms.h"

namespace rtcp::test {
namespace {

/// Gives this process a mount namespace of its own, once.
void privateMounts() {
  static bool done = false;
  if (done) return;
  if (geteuid() != 0) skipTest("a small file system needs root (mount)");
  if (unshare(CLONE_NEWNS) != 0)
    skipTest(std::string("unshare(CLONE_NEWNS): ") + std::strerror(errno));
  // Mounts made here must not propagate to the rest of the machine.
  if (mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    skipTest(std::string("making / private: ") + std::strerror(errno));
  done = true;
}

}  // namespace

SmallFileSystem::SmallFileSystem(const std::string& directory, uint64_t bytes) : path_(directory) {
  privateMounts();
  std::filesystem::create_directories(directory);
  const std::string options = "size=" + std::to_string(bytes);
  if (mount("tmpfs", directory.c_str(), "tmpfs", 0, options.c_str()) != 0)
    skipTest("mounting a tmpfs at " + directory + ": " + std::strerror(errno));
}

SmallFileSystem::~SmallFileSystem() {
  umount2(path_.c_str(), MNT_DETACH);
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

void SmallFileSystem::makeReadOnly() const {
  if (mount(nullptr, path_.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0)
    throw std::runtime_error("remounting " + path_ + " read-only: " + std::strerror(errno));
}

uint64_t SmallFileSystem::freeBytes() const {
  struct statvfs s {};
  if (statvfs(path_.c_str(), &s) != 0)
    throw std::runtime_error("statvfs " + path_ + ": " + std::strerror(errno));
  return uint64_t(s.f_bavail) * s.f_frsize;
}

void SmallFileSystem::fillLeaving(const std::string& path, uint64_t leaveFree) const {
  const uint64_t free = freeBytes();
  if (free <= leaveFree) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  std::vector<char> zeros(1 << 16, 0);
  uint64_t left = free - leaveFree;
  while (left > 0) {
    const size_t n = size_t(std::min<uint64_t>(left, zeros.size()));
    const ssize_t written = ::write(fd, zeros.data(), n);
    if (written <= 0) break;
    left -= uint64_t(written);
  }
  ::close(fd);
}

}  // namespace rtcp::test
