#pragma once
/// \file RecordingReader.h
/// Reads a recording (file:) in large sequential chunks into one reused buffer, so that
/// replaying costs one system call per chunk and no page fault per packet. (Parsing the
/// packets where they lie in a mapping of the file faulted every 64 KB: on a
/// paravirtualised guest 0.67 CPU s per GB; 1 MB pread()s into a buffer that stays in the
/// cache: 0.12 CPU s per GB, `rtcp-bench ingest`.)

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "rtcp/AlignedBuffer.h"

namespace rtcp::ion {

class RecordingReader {
 public:
  static constexpr size_t kChunkBytes = 1 << 20;  ///< bytes per read (fits in L2)

  /// fd: an open recording (not closed here); name labels errors.
  RecordingReader(int fd, std::string name, size_t chunkBytes = kChunkBytes);

  /// Bytes read and not yet consumed; valid until the next fill().
  std::span<const uint8_t> unread() const { return {buffer_.data() + begin_, end_ - begin_}; }
  /// The offset in the file of unread().front().
  uint64_t position() const { return position_; }
  void consume(size_t bytes);
  /// Keeps the unread bytes (moved to the front) and reads up to one chunk behind them
  /// (a record longer than a chunk takes several fills); false when the file has nothing
  /// more. Throws StreamError on a read error.
  bool fill();

 private:
  int fd_;
  std::string name_;
  size_t chunkBytes_;
  AlignedBuffer<uint8_t> buffer_;  ///< one chunk plus the largest record a chunk may cut
  size_t begin_ = 0, end_ = 0;     ///< unread bytes in buffer_
  uint64_t position_ = 0;          ///< file offset of buffer_[begin_]
};

}  // namespace rtcp::ion
