#pragma once
// Helpers of the libFuzzer targets (fuzz/README.md).
#include <cstdint>
#include <cstring>
#include <span>

#include "rtcp/Logger.h"

namespace rtcp::fuzz {

/// Keeps the fuzzers' output to libFuzzer's own: rejections are logged by the parts.
inline void quietLogs() { Logger::setLevel(static_cast<LogLevel>(int(LogLevel::kError) + 1)); }

/// Keeps a computed value alive (so that the computation is not optimised away).
template <typename T>
void consume(const T& value) {
  asm volatile("" : : "g"(&value) : "memory");
}

/// Reads fuzz input front to back: fixed-size fields, then the rest.
class Input {
 public:
  explicit Input(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <typename T>
  T take() {
    T value{};
    const size_t n = std::min(sizeof value, bytes_.size());
    std::memcpy(&value, bytes_.data(), n);
    bytes_ = bytes_.subspan(n);
    return value;
  }
  std::span<const uint8_t> takeBytes(size_t n) {
    n = std::min(n, bytes_.size());
    const auto part = bytes_.first(n);
    bytes_ = bytes_.subspan(n);
    return part;
  }
  std::span<const uint8_t> rest() const { return bytes_; }

 private:
  std::span<const uint8_t> bytes_;
};

}  // namespace rtcp::fuzz
