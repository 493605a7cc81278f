#include "RecordingReader.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "rtcp/RspPacket.h"
#include "rtcp/Stream.h"

namespace rtcp::ion {
namespace {

/// The largest record an RSP header can describe (16-bit, 255 beamlets x 255 samples).
constexpr size_t kLargestRecord = kRspHeaderSize + 255 * 255 * 8;

}  // namespace

RecordingReader::RecordingReader(int fd, std::string name, size_t chunkBytes)
    : fd_(fd),
      name_(std::move(name)),
      chunkBytes_(chunkBytes),
      buffer_(chunkBytes + kLargestRecord) {
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
}

void RecordingReader::consume(size_t bytes) {
  begin_ += std::min(bytes, end_ - begin_);
  position_ += bytes;
}

bool RecordingReader::fill() {
  const size_t kept = end_ - begin_;
  if (kept > kLargestRecord) return true;  // a whole record is there already
  if (kept && begin_) std::memmove(buffer_.data(), buffer_.data() + begin_, kept);
  begin_ = 0;
  end_ = kept;
  for (;;) {  // one chunk: there is room, since kept <= kLargestRecord
    const ssize_t n = ::pread(fd_, buffer_.data() + end_, chunkBytes_, off_t(position_ + kept));
    if (n >= 0) {
      end_ += size_t(n);
      return n > 0;
    }
    if (errno != EINTR) throw StreamError(name_ + ": read: " + std::strerror(errno));
  }
}

}  // namespace rtcp::ion
