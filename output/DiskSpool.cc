#include "DiskSpool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "rtcp/Logger.h"

namespace rtcp::ion {
namespace {

/// Each item: its length (uint64, native order: the file lives as long as the process),
/// then its bytes.
constexpr size_t kLengthBytes = sizeof(uint64_t);

bool writeAll(int fd, const void* data, size_t size, uint64_t offset) {
  const auto* bytes = static_cast<const uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, bytes, size, off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n, size -= size_t(n), offset += uint64_t(n);
  }
  return true;
}

bool readAll(int fd, void* data, size_t size, uint64_t offset) {
  auto* bytes = static_cast<uint8_t*>(data);
  while (size > 0) {
    const ssize_t n = ::pread(fd, bytes, size, off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n, size -= size_t(n), offset += uint64_t(n);
  }
  return true;
}

}  // namespace

DiskSpool::DiskSpool(std::string path, uint64_t capacityBytes)
    : path_(std::move(path)), capacity_(capacityBytes) {}

DiskSpool::~DiskSpool() {
  if (fd_ < 0) return;
  ::close(fd_);
  ::unlink(path_.c_str());
}

bool DiskSpool::push(std::span<const uint8_t> bytes) {
  const uint64_t size = kLengthBytes + bytes.size();
  if (capacity_ == 0 || writeOffset_ + size > capacity_) return false;
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      if (!warned_)
        RTCP_LOG_ERROR("storage",
                       "cannot make the spool file " << path_ << ": " << std::strerror(errno));
      warned_ = true;
      capacity_ = 0;  // no second try per item
      return false;
    }
  }
  const uint64_t length = bytes.size();
  if (!writeAll(fd_, &length, kLengthBytes, writeOffset_) ||
      !writeAll(fd_, bytes.data(), bytes.size(), writeOffset_ + kLengthBytes)) {
    if (!warned_)
      RTCP_LOG_ERROR("storage",
                     "writing the spool file " << path_ << " failed: " << std::strerror(errno));
    warned_ = true;
    return false;
  }
  writeOffset_ += size;
  ++items_;
  highWater_ = std::max(highWater_, this->bytes());
  return true;
}

size_t DiskSpool::clear() {
  const size_t forgotten = items_;
  items_ = 0;
  readOffset_ = writeOffset_ = 0;
  if (fd_ >= 0 && ::ftruncate(fd_, 0) != 0)
    RTCP_LOG_WARN("storage", "truncating the spool file " << path_ << ": " << std::strerror(errno));
  return forgotten;
}

std::optional<std::vector<uint8_t>> DiskSpool::pop() {
  if (items_ == 0) return std::nullopt;
  uint64_t length = 0;
  if (!readAll(fd_, &length, kLengthBytes, readOffset_) ||
      length > writeOffset_ - readOffset_ - kLengthBytes)
    throw std::runtime_error("the spool file " + path_ + " cannot be read back at offset " +
                             std::to_string(readOffset_));
  std::vector<uint8_t> bytes(length);
  if (!readAll(fd_, bytes.data(), bytes.size(), readOffset_ + kLengthBytes))
    throw std::runtime_error("the spool file " + path_ + " cannot be read back at offset " +
                             std::to_string(readOffset_));
  readOffset_ += kLengthBytes + length;
  if (--items_ == 0) {  // caught up: the file starts again from nothing
    readOffset_ = writeOffset_ = 0;
    if (::ftruncate(fd_, 0) != 0)
      RTCP_LOG_WARN("storage",
                    "truncating the spool file " << path_ << ": " << std::strerror(errno));
  }
  return bytes;
}

}  // namespace rtcp::ion
