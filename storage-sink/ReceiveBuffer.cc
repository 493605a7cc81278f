#include "ReceiveBuffer.h"

#include <algorithm>
#include <cstring>

namespace rtcp::storage {

bool ReceiveBuffer::readMore() {
  if (end_ == buffer_.size()) {  // move what is left to the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, available());
    end_ -= begin_;
    begin_ = 0;
  }
  const size_t n = stream_.read(buffer_.data() + end_, buffer_.size() - end_);
  end_ += n;
  return n > 0;
}

bool ReceiveBuffer::fill(size_t size) {
  if (available() == 0) begin_ = end_ = 0;
  if (buffer_.size() - begin_ < size) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, available());
    end_ -= begin_;
    begin_ = 0;
  }
  while (available() < size)
    if (!readMore()) return false;
  return true;
}

bool ReceiveBuffer::read(uint8_t* out, uint64_t size) {
  const size_t buffered = size_t(std::min<uint64_t>(size, available()));
  std::memcpy(out, data(), buffered);
  consume(buffered);
  out += buffered;
  size -= buffered;
  if (size == 0) return true;
  if (size < buffer_.size() / 2) {  // small: one read of it and what follows, then copy
    if (!fill(size_t(size))) return false;
    std::memcpy(out, data(), size_t(size));
    consume(size_t(size));
    return true;
  }
  try {
    return stream_.readExact(out, size_t(size));  // large: no copy
  } catch (const StreamError&) {
    return false;
  }
}

bool ReceiveBuffer::skip(uint64_t size) {
  while (size > 0) {
    if (available() == 0 && !fill(1)) return false;
    const size_t n = size_t(std::min<uint64_t>(size, available()));
    consume(n);
    size -= n;
  }
  return true;
}

}  // namespace rtcp::storage
