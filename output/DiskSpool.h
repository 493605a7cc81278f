#pragma once
/// \file DiskSpool.h
/// The second level of StorageSender's write-back cache: serialised blocks (integrations,
/// beam-formed blocks) that did
/// not fit in its memory queue while storage-sink was away, kept in order in a file and
/// read back, first in first out, once it takes data again. Bounded: the file never grows
/// beyond capacityBytes; it is emptied (truncated) whenever the reader has caught up, so
/// the bound is on what was spooled since the spool was last empty. Not thread-safe (the
/// sender's mutex guards it).

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace rtcp::ion {

class DiskSpool {
 public:
  /// The file is made at path on the first push(); capacityBytes 0: no spool.
  DiskSpool(std::string path, uint64_t capacityBytes);
  ~DiskSpool();  ///< removes the file
  DiskSpool(const DiskSpool&) = delete;
  DiskSpool& operator=(const DiskSpool&) = delete;

  /// Appends one item; false (nothing written) when it does not fit or the file cannot
  /// be written (logged once, naming the file).
  bool push(std::span<const uint8_t> bytes);
  /// The oldest item, taken out; nullopt when empty. Throws std::runtime_error naming the
  /// file when it cannot be read back.
  std::optional<std::vector<uint8_t>> pop();
  /// Forgets every item (a file that cannot be read back); returns how many there were.
  size_t clear();
  bool empty() const { return items_ == 0; }
  size_t size() const { return items_; }
  uint64_t bytes() const { return writeOffset_ - readOffset_; }
  uint64_t highWaterBytes() const { return highWater_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  uint64_t capacity_;
  int fd_ = -1;
  uint64_t readOffset_ = 0, writeOffset_ = 0, highWater_ = 0;
  size_t items_ = 0;
  bool warned_ = false;
};

}  // namespace rtcp::ion
