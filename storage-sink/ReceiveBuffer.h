#pragma once
/// \file ReceiveBuffer.h
/// Buffered reading of one connection: each read takes whatever the socket holds, up to
/// the buffer's capacity, so that many small blocks cost one system call, and headers are
/// parsed in place. A large payload bypasses the buffer: what the buffer holds of it is
/// copied, the rest is read straight into the caller's memory.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rtcp/Stream.h"

namespace rtcp::storage {

class ReceiveBuffer {
 public:
  /// What storage-sink's connections use: one recv takes up to this much.
  static constexpr size_t kDefaultCapacity = 256u << 10;

  /// capacity: at least the largest size asked of fill() (a block header).
  explicit ReceiveBuffer(Stream& stream, size_t capacity = kDefaultCapacity)
      : stream_(stream), buffer_(capacity) {}

  /// Bytes buffered, not yet consumed, and where they start.
  size_t available() const { return end_ - begin_; }
  const uint8_t* data() const { return buffer_.data() + begin_; }
  void consume(size_t size) { begin_ += size; }
  /// Reads until at least size (<= capacity) bytes are buffered; false when the stream
  /// ended first (available() says how many came). StreamError from the stream.
  bool fill(size_t size);
  /// Copies the next size bytes to out (reading straight into it what is not buffered
  /// when that is a large part); false when the stream ended first.
  bool read(uint8_t* out, uint64_t size);
  /// Drops the next size bytes; false when the stream ended first.
  bool skip(uint64_t size);

 private:
  /// One read of whatever the stream holds into the free end; false at its end.
  bool readMore();

  Stream& stream_;
  std::vector<uint8_t> buffer_;
  size_t begin_ = 0, end_ = 0;  // the unconsumed bytes: [begin_, end_)
};

}  // namespace rtcp::storage
