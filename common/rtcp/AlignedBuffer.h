#pragma once
/// \file AlignedBuffer.h
/// A fixed-size, 64-byte aligned, zero-initialised array: the one allocation helper for
/// sample and visibility buffers (allocated once, moved, never copied by accident).
/// Large buffers (circular sample buffers, station blocks) are 2 MB aligned and asked for
/// transparent huge pages before they are zeroed: a paravirtualised guest pays dearly for
/// each page fault (zeroing 1 GB: 7-9 s in 4 KB pages, 3.8 s in huge pages, here), and
/// the kernels walk them with fewer TLB misses.

#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace rtcp {

constexpr size_t kBufferAlignment = 64;
constexpr size_t kHugePageSize = size_t(2) << 20;
constexpr size_t kHugePageThreshold = size_t(8) << 20;  ///< bytes from which huge pages pay

template <typename T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "AlignedBuffer holds plain data");

 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) : size_(size) {
    if (size == 0) return;
    const bool huge = size * sizeof(T) >= kHugePageThreshold;
    const size_t alignment = huge ? kHugePageSize : kBufferAlignment;
    const size_t bytes = (size * sizeof(T) + alignment - 1) / alignment * alignment;
    data_ = static_cast<T*>(std::aligned_alloc(alignment, bytes));
    if (!data_) throw std::bad_alloc();
    if (huge) ::madvise(static_cast<void*>(data_), bytes, MADV_HUGEPAGE);  // a hint only
    std::memset(static_cast<void*>(data_), 0, bytes);
  }
  /// A buffer over memory owned elsewhere (a shared-memory segment), never freed here.
  static AlignedBuffer borrowed(T* data, size_t size) {
    AlignedBuffer buffer;
    buffer.data_ = data;
    buffer.size_ = size;
    buffer.owned_ = false;
    return buffer;
  }
  ~AlignedBuffer() {
    if (owned_) std::free(data_);
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        owned_(std::exchange(other.owned_, true)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(owned_, other.owned_);
    return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  bool owned() const { return owned_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::span<T> span() { return {data_, size_}; }
  std::span<const T> span() const { return {data_, size_}; }
  void zero() {
    if (data_) std::memset(static_cast<void*>(data_), 0, size_ * sizeof(T));
  }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = true;  ///< false: borrowed()
};

}  // namespace rtcp
