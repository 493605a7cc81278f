#pragma once
/// \file AlignedBuffer.h
/// A fixed-size, 64-byte (or Alignment) aligned, zero-initialised array: the one allocation helper
/// for sample and visibility buffers (allocated once, moved, never copied by accident). Large
/// buffers (circular sample buffers, station blocks) are mapped 2 MB aligned, asked for transparent
/// huge pages and faulted in by the kernel in one call (mapZeroed): a paravirtualised guest pays
/// dearly for each page fault, and the kernels walk them with fewer TLB misses.

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

namespace rtcp {

constexpr size_t kBufferAlignment = 64;
/// What direct I/O (O_DIRECT) asks of a buffer's address on the usual block devices
/// (statx's dio_mem_align is 512 here); a page, to be safe.
constexpr size_t kDirectIoAlignment = 4096;
constexpr size_t kHugePageSize = size_t(2) << 20;
constexpr size_t kHugePageThreshold = size_t(8) << 20;  ///< bytes from which huge pages pay

template <typename T, size_t Alignment = kBufferAlignment>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T>, "AlignedBuffer holds plain data");

 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t size) : size_(size) {
    if (size == 0) return;
    mapped_ = size * sizeof(T) >= kHugePageThreshold;
    if (mapped_) {
      data_ = static_cast<T*>(mapZeroed(mappedBytes()));
      return;
    }
    data_ = static_cast<T*>(std::aligned_alloc(Alignment, heapBytes()));
    if (!data_) throw std::bad_alloc();
    std::memset(static_cast<void*>(data_), 0, heapBytes());
  }
  /// A buffer of `size` elements that the caller fills before anything reads them: below
  /// 8 MB not zeroed (a memset per link call was 1-4 % of ionproc), from 8 MB as usual.
  static AlignedBuffer toBeFilled(size_t size) {
    if (size == 0 || size * sizeof(T) >= kHugePageThreshold) return AlignedBuffer(size);
    AlignedBuffer buffer;
    buffer.size_ = size;
    buffer.data_ = static_cast<T*>(std::aligned_alloc(Alignment, buffer.heapBytes()));
    if (!buffer.data_) throw std::bad_alloc();
    return buffer;
  }
  /// A buffer of `size` zeroed elements whose memory is mapped but, from 8 MB on, not yet
  /// faulted in: populate() does that later (on another thread, say), and until then each
  /// first touch faults. Below 8 MB it is an ordinary (zeroed) buffer.
  static AlignedBuffer unpopulated(size_t size) {
    if (size * sizeof(T) < kHugePageThreshold) return AlignedBuffer(size);
    AlignedBuffer buffer;
    buffer.size_ = size;
    buffer.mapped_ = true;
    buffer.data_ = static_cast<T*>(mapZeroed(buffer.mappedBytes(), false));
    return buffer;
  }
  /// Faults in what unpopulated() mapped (the kernel's zeroed pages, in one call); nothing
  /// for other buffers.
  void populate() {
    if (!mapped_ || !owned_ || !data_) return;
    if (::madvise(static_cast<void*>(data_), mappedBytes(), MADV_POPULATE_WRITE) != 0)
      std::memset(static_cast<void*>(data_), 0, mappedBytes());  // kernels before 5.14
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
    if (!owned_ || !data_) return;
    if (mapped_)
      ::munmap(static_cast<void*>(data_), mappedBytes());
    else
      std::free(data_);
  }
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)),
        size_(std::exchange(other.size_, 0)),
        owned_(std::exchange(other.owned_, true)),
        mapped_(std::exchange(other.mapped_, false)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(owned_, other.owned_);
    std::swap(mapped_, other.mapped_);
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
  size_t mappedBytes() const {
    return (size_ * sizeof(T) + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
  }
  size_t heapBytes() const { return (size_ * sizeof(T) + Alignment - 1) / Alignment * Alignment; }
  /// `bytes` (a multiple of 2 MB) of fresh anonymous memory, 2 MB aligned, asked for huge
  /// pages and faulted in by the kernel in one call: its pages come zeroed, so unlike a
  /// memset nothing writes them twice (1 GB here: 0.06 CPU s, against 0.1-2.6 s with
  /// memset, more when the kernel must first compact memory for huge pages).
  static void* mapZeroed(size_t bytes, bool populate = true) {
    const size_t span = bytes + kHugePageSize;
    void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (start + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
    if (aligned > start) ::munmap(p, aligned - start);
    if (start + span > aligned + bytes)
      ::munmap(reinterpret_cast<void*>(aligned + bytes), start + span - (aligned + bytes));
    void* memory = reinterpret_cast<void*>(aligned);
    ::madvise(memory, bytes, MADV_HUGEPAGE);                             // a hint only
    if (populate && ::madvise(memory, bytes, MADV_POPULATE_WRITE) != 0)  // kernels before 5.14
      std::memset(memory, 0, bytes);
    return memory;
  }

  T* data_ = nullptr;
  size_t size_ = 0;
  bool owned_ = true;    ///< false: borrowed()
  bool mapped_ = false;  ///< from mapZeroed (munmap), else aligned_alloc (free)
};

}  // namespace rtcp
