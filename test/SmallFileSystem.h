#pragma once
// A small file system for fault tests: a tmpfs of a given size mounted in this process's
// own mount namespace (so nothing outside the test sees it), which the programs the test
// starts inherit. Needs root (the tests run as root); skips the test otherwise.
#include <cstdint>
#include <string>

namespace rtcp::test {

class SmallFileSystem {
 public:
  /// Mounts a tmpfs of `bytes` at `directory` (created). Calls skipTest() when this
  /// process cannot have a mount namespace of its own (not root, or a restricted sandbox).
  /// Call before the test starts threads: unshare(CLONE_NEWNS) refuses threaded processes.
  SmallFileSystem(const std::string& directory, uint64_t bytes);
  ~SmallFileSystem();  ///< unmounts (lazily) and removes the directory
  SmallFileSystem(const SmallFileSystem&) = delete;
  SmallFileSystem& operator=(const SmallFileSystem&) = delete;

  const std::string& path() const { return path_; }
  /// Bytes an unprivileged writer can still write (statvfs f_bavail).
  uint64_t freeBytes() const;
  /// Writes a file of zeros at `path` so that about `leaveFree` bytes stay free.
  void fillLeaving(const std::string& path, uint64_t leaveFree) const;
  /// Remounts the file system read-only (writes fail with EROFS, even for root).
  void makeReadOnly() const;

 private:
  std::string path_;
};

}  // namespace rtcp::test
