#pragma once
/// \file SharedMemory.h
/// A named POSIX shared-memory segment on this host: one process creates it (and unlinks
/// it at its end), others map it read-only by name. Its first page holds a nonce that
/// proves to a reader that it opened the segment it was told of (not another host's or
/// another run's of the same name).
///
/// Both sides ask for 2 MB pages and fault every page in with one call at mapping, not
/// one fault per page on the data path. POSIX shared memory gets 2 MB pages only where
/// /dev/shm is mounted with huge=advise (or within_size, always); Debian mounts it
/// without (hugePages()).

#include <cstddef>
#include <cstdint>
#include <string>

namespace rtcp {

/// What a reader needs to map a segment; travels in link calls, so of fixed size.
struct SharedMemoryName {
  char name[64] = {};  ///< shm_open name, "/rtcp-..."
  uint64_t bytes = 0;  ///< the whole segment, header page included
  uint64_t nonce = 0;  ///< also in the segment's first bytes
};

class SharedMemory {
 public:
  /// Whether segments can have 2 MB pages: /dev/shm is mounted with a huge= option
  /// other than never (`mount -o remount,huge=advise /dev/shm`; scripts/setup.sh does).
  static bool hugePages();

  /// A 2 MB page: the unit segments are laid out in.
  static constexpr size_t kPageBytes = size_t(2) << 20;
  /// Bytes before the payload: the nonce's page, so that the payload is 2 MB aligned.
  static constexpr size_t kHeaderBytes = kPageBytes;
  /// `bytes` rounded up to whole 2 MB pages (parts of a payload that start on a page).
  static constexpr size_t roundUpToPages(size_t bytes) {
    return (bytes + kPageBytes - 1) / kPageBytes * kPageBytes;
  }

  /// A new segment "/<prefix>-<pid>-<n>" with `payloadBytes` of zeroed payload, faulted in
  /// unless !populate (then populate() later, or a fault per page on first touch).
  /// std::runtime_error naming the segment and the system's reason when that fails.
  static SharedMemory create(const std::string& prefix, size_t payloadBytes, bool populate = true);
  /// Faults the payload in with one call (the creator's; seconds per GB here).
  void populate();
  /// The segment `name` mapped read-only; std::runtime_error when it cannot be opened or
  /// is not the one `name` describes.
  static SharedMemory openReadOnly(const SharedMemoryName& name);

  SharedMemory() = default;
  ~SharedMemory();
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  const SharedMemoryName& name() const { return name_; }
  /// The payload, kHeaderBytes into the segment (writable only for the creator).
  uint8_t* payload() const { return base_ ? base_ + kHeaderBytes : nullptr; }
  size_t payloadBytes() const { return base_ ? name_.bytes - kHeaderBytes : 0; }

 private:
  SharedMemoryName name_;
  uint8_t* base_ = nullptr;
  bool creator_ = false;
};

}  // namespace rtcp
