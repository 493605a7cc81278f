#include "rtcp/SharedMemory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <stdexcept>
#include <utility>

namespace rtcp {
namespace {

std::runtime_error systemError(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

}  // namespace

bool SharedMemory::hugePages() {
  // The last mount on /dev/shm is the one in effect (containers stack them).
  std::ifstream mounts("/proc/self/mounts");
  std::string device, point, type, options, rest;
  bool huge = false;
  while (mounts >> device >> point >> type >> options && std::getline(mounts, rest))
    if (point == "/dev/shm")
      huge = type == "tmpfs" && (options.find("huge=advise") != std::string::npos ||
                                 options.find("huge=within_size") != std::string::npos ||
                                 options.find("huge=always") != std::string::npos);
  return huge;
}

SharedMemory SharedMemory::create(const std::string& prefix, size_t payloadBytes, bool populate) {
  static std::atomic<int> counter{0};
  SharedMemory memory;
  const std::string name =
      "/" + prefix + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  std::snprintf(memory.name_.name, sizeof memory.name_.name, "%s", name.c_str());
  memory.name_.bytes = kHeaderBytes + payloadBytes;
  memory.name_.nonce = std::random_device{}() * 0x100000001ull ^ uint64_t(getpid());

  const int fd = ::shm_open(memory.name_.name, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) throw systemError("shm_open " + name);
  if (::ftruncate(fd, off_t(memory.name_.bytes)) != 0) {
    ::close(fd);
    ::shm_unlink(memory.name_.name);
    throw systemError("ftruncate " + name + " to " + std::to_string(memory.name_.bytes) +
                      " bytes (is /dev/shm large enough?)");
  }
  void* p = ::mmap(nullptr, memory.name_.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) {
    ::shm_unlink(memory.name_.name);
    throw systemError("mmap " + name);
  }
  memory.base_ = static_cast<uint8_t*>(p);
  memory.creator_ = true;
  ::madvise(memory.base_, memory.name_.bytes, MADV_HUGEPAGE);
  std::memcpy(memory.base_, &memory.name_.nonce, sizeof memory.name_.nonce);
  if (populate) memory.populate();
  return memory;
}

void SharedMemory::populate() {
  // One call faults every page in (a hint: ignored where refused).
  if (creator_) ::madvise(base_, name_.bytes, MADV_POPULATE_WRITE);
}

SharedMemory SharedMemory::openReadOnly(const SharedMemoryName& name) {
  SharedMemory memory;
  memory.name_ = name;
  memory.name_.name[sizeof memory.name_.name - 1] = 0;
  const std::string shown = memory.name_.name;
  if (memory.name_.bytes < kHeaderBytes)
    throw std::runtime_error(shown + ": announced with " + std::to_string(name.bytes) +
                             " bytes, less than its header");
  const int fd = ::shm_open(memory.name_.name, O_RDONLY, 0);
  if (fd < 0) throw systemError("shm_open " + shown);
  struct stat st {};
  if (::fstat(fd, &st) != 0 || uint64_t(st.st_size) < memory.name_.bytes) {
    ::close(fd);
    throw std::runtime_error(shown + " is smaller than announced (another run's?)");
  }
  void* p = ::mmap(nullptr, memory.name_.bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (p == MAP_FAILED) throw systemError("mmap " + shown);
  memory.base_ = static_cast<uint8_t*>(p);
  ::madvise(memory.base_, memory.name_.bytes, MADV_HUGEPAGE);
  ::madvise(memory.base_, memory.name_.bytes,
            MADV_POPULATE_READ);  // one call, not a fault per page
  uint64_t nonce = 0;
  std::memcpy(&nonce, memory.base_, sizeof nonce);
  if (nonce != memory.name_.nonce)
    throw std::runtime_error(shown + " is not the segment ionproc announced (another host's?)");
  return memory;
}

SharedMemory::~SharedMemory() {
  if (!base_) return;
  ::munmap(base_, name_.bytes);
  if (creator_) ::shm_unlink(name_.name);
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : name_(other.name_),
      base_(std::exchange(other.base_, nullptr)),
      creator_(std::exchange(other.creator_, false)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  std::swap(name_, other.name_);
  std::swap(base_, other.base_);
  std::swap(creator_, other.creator_);
  return *this;
}

}  // namespace rtcp
