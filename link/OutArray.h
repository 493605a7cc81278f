#pragma once
/// \file OutArray.h
/// ionproc's side of a forwarded function's output array (Forwarding.h).

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <utility>

#include "LinkProtocol.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::ion {

/// ionproc's side of an output array: the caller's capacity, filled in place or handed
/// over by ownership (sent from the buffer itself, not copied).
template <typename T>
class OutArray {
 public:
  OutArray() = default;
  explicit OutArray(size_t capacity) : capacity_(capacity) {}
  /// Elements the caller can take.
  size_t capacity() const { return capacity_; }
  /// A zeroed buffer of n <= capacity() elements to fill in place.
  std::span<T> allocate(size_t n) {
    check(n);
    buffer_ = AlignedBuffer<T>(n);
    size_ = n;
    lent_ = nullptr;
    return buffer_.span();
  }
  /// Hands over a buffer; its first n <= capacity() elements are sent.
  void give(AlignedBuffer<T>&& buffer, size_t n) {
    check(n);
    if (n > buffer.size()) throw LinkError("OutArray::give: more elements than the buffer holds");
    buffer_ = std::move(buffer);
    size_ = n;
    lent_ = nullptr;
  }
  void give(AlignedBuffer<T>&& buffer) { give(std::move(buffer), buffer.size()); }
  /// Sends elements that stay owned elsewhere; keepAlive holds them until they are sent.
  void lend(std::span<const T> data, std::shared_ptr<const void> keepAlive) {
    check(data.size());
    lent_ = data.data();
    size_ = data.size();
    keepAlive_ = std::move(keepAlive);
  }
  size_t size() const { return size_; }
  const T* data() const { return lent_ ? lent_ : buffer_.data(); }

 private:
  void check(size_t n) const {
    if (n > capacity_)
      throw LinkError("output array of " + std::to_string(n) + " elements exceeds the caller's " +
                      std::to_string(capacity_));
  }
  size_t capacity_ = 0;
  size_t size_ = 0;
  AlignedBuffer<T> buffer_;
  const T* lent_ = nullptr;
  std::shared_ptr<const void> keepAlive_;
};

}  // namespace rtcp::ion
