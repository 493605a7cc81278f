#pragma once
/// \file ForwardingCodec.h
/// The wire format of forwarded calls (Forwarding.h): the declaration markers, how each
/// argument kind travels (inline head or bulk, 64-byte padded), the signature code, and
/// the per-argument packing and unpacking both sides use.

#include <sys/uio.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "LinkProtocol.h"
#include "OutArray.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::ion {

/// Declaration markers (see the table in Forwarding.h).
template <typename T>
struct Span {};
template <typename T>
struct Out {};

namespace forwarding {

enum class Kind : uint8_t { kScalar = 1, kArrayIn, kArrayOut, kScalarOut };
constexpr size_t kPad = 64;  ///< arrays in the bulk start at multiples of this
constexpr size_t padded(size_t bytes) { return (bytes + kPad - 1) / kPad * kPad; }
/// Zero bytes to send as padding; scratch to receive padding into.
inline const uint8_t kZeros[kPad] = {};

template <typename A>
struct Arg {
  static_assert(std::is_trivially_copyable_v<A> && !std::is_pointer_v<A>,
                "a forwarded scalar must be plain data (use Span<T> for arrays)");
  static constexpr Kind kind = Kind::kScalar;
  using Element = A;
  using Client = A;
  using Server = A;
  using Storage = A;
};
template <typename T>
struct Arg<Span<T>> {
  static constexpr Kind kind = Kind::kArrayIn;
  using Element = T;
  using Client = std::span<const T>;
  using Server = std::span<const T>;
  using Storage = std::span<const T>;
};
template <typename T>
struct Arg<Out<Span<T>>> {
  static constexpr Kind kind = Kind::kArrayOut;
  using Element = T;
  using Client = std::span<T>&;
  using Server = OutArray<T>&;
  using Storage = OutArray<T>;
};
template <typename T>
struct Arg<Out<T>> {
  static_assert(std::is_trivially_copyable_v<T>, "a forwarded output scalar must be plain data");
  static constexpr Kind kind = Kind::kScalarOut;
  using Element = T;
  using Client = T&;
  using Server = T&;
  using Storage = T;
};

/// Builds an inline head: fields at their natural alignment.
class HeadWriter {
 public:
  template <typename T>
  void put(const T& value) {
    pos_ = (pos_ + alignof(T) - 1) / alignof(T) * alignof(T);
    if (pos_ + sizeof(T) > kMaxHeadSize) throw LinkError("forwarded call head exceeds 240 bytes");
    std::memcpy(bytes_ + pos_, &value, sizeof(T));
    pos_ += sizeof(T);
  }
  void putText(const std::string& text) {
    const size_t n = std::min(text.size(), kMaxHeadSize - pos_);
    std::memcpy(bytes_ + pos_, text.data(), n);
    pos_ += n;
  }
  std::span<const uint8_t> span() const { return {bytes_, pos_}; }
  std::vector<uint8_t> vector() const { return {bytes_, bytes_ + pos_}; }

 private:
  uint8_t bytes_[kMaxHeadSize] = {};
  size_t pos_ = 0;
};

/// Reads what HeadWriter wrote; LinkError when the head is too short.
class HeadReader {
 public:
  explicit HeadReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  template <typename T>
  T get() {
    pos_ = (pos_ + alignof(T) - 1) / alignof(T) * alignof(T);
    if (pos_ + sizeof(T) > bytes_.size()) throw LinkError("forwarded call head too short");
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string rest() const {
    return pos_ < bytes_.size() ? std::string(bytes_.begin() + pos_, bytes_.end()) : std::string();
  }

 private:
  std::span<const uint8_t> bytes_;
  size_t pos_ = 0;
};

/// Head bytes a field list needs (same alignment rule as HeadWriter).
constexpr size_t layout(size_t pos, size_t size, size_t align) {
  return (pos + align - 1) / align * align + size;
}
template <typename A>
constexpr size_t callHeadField(size_t pos) {
  constexpr Kind k = Arg<A>::kind;
  if constexpr (k == Kind::kScalar)
    return layout(pos, sizeof(A), alignof(A));
  else if constexpr (k == Kind::kScalarOut)
    return pos;
  else
    return layout(pos, 8, 8);
}
template <typename A>
constexpr size_t replyHeadField(size_t pos) {
  constexpr Kind k = Arg<A>::kind;
  using E = typename Arg<A>::Element;
  if constexpr (k == Kind::kScalarOut)
    return layout(pos, sizeof(E), alignof(E));
  else if constexpr (k == Kind::kArrayOut)
    return layout(pos, 8, 8);
  else
    return pos;
}

constexpr uint32_t fnv1a(const char* text, uint32_t hash = 2166136261u) {
  for (; *text; ++text) hash = (hash ^ uint8_t(*text)) * 16777619u;
  return hash;
}
constexpr uint32_t mix(uint32_t hash, uint64_t value) {
  for (int i = 0; i < 8; ++i) hash = (hash ^ uint8_t(value >> (8 * i))) * 16777619u;
  return hash;
}
template <typename R, typename... Args>
constexpr uint32_t signatureCode() {
  uint32_t hash = mix(
      2166136261u, std::is_void_v<R> ? 0 : sizeof(std::conditional_t<std::is_void_v<R>, char, R>));
  ((hash = mix(hash, uint64_t(Arg<Args>::kind) << 32 | sizeof(typename Arg<Args>::Element))), ...);
  return hash;
}

constexpr int32_t kStatusOk = 0;
constexpr int32_t kStatusError = 1;

/// ionproc's answer to a call: acknowledgement head, output arrays, and what owns them.
struct CallResult {
  std::vector<uint8_t> head;
  std::vector<iovec> data;
  std::shared_ptr<void> keepAlive;
};

/// An error answer carrying the message.
inline CallResult errorResult(const std::string& message) {
  HeadWriter head;
  head.put(kStatusError);
  head.putText(message);
  return {head.vector(), {}, nullptr};
}

/// ionproc's side of one function: unpacks a call (head and input bulk), runs the
/// implementation, packs the answer (ForwardingServer.h).
using Dispatcher = std::function<CallResult(std::span<const uint8_t> head,
                                            std::shared_ptr<AlignedBuffer<uint8_t>> bulk)>;

/// Head bytes of a call (id, signature, then each argument's head field).
template <typename... Args>
constexpr size_t callHeadSize() {
  size_t pos = 8;
  ((pos = callHeadField<Args>(pos)), ...);
  return pos;
}
/// Head bytes of an answer (status, return value, then each output's head field).
template <typename R, typename... Args>
constexpr size_t replyHeadSize() {
  size_t pos = 4;
  if constexpr (!std::is_void_v<R>) pos = layout(pos, sizeof(R), alignof(R));
  ((pos = replyHeadField<Args>(pos)), ...);
  return pos;
}

/// Compute side, call: an argument into the head and the write bulk; output arrays add
/// their padded capacity to the read.
template <typename A>
inline void packCallArg(HeadWriter& head, std::vector<iovec>& in, size_t& readCapacity,
                        typename Arg<A>::Client arg) {
  using E = typename Arg<A>::Element;
  if constexpr (Arg<A>::kind == Kind::kScalar) {
    head.put(arg);
  } else if constexpr (Arg<A>::kind == Kind::kArrayIn) {
    head.put(uint64_t(arg.size()));
    const size_t bytes = arg.size_bytes();
    in.push_back({const_cast<E*>(arg.data()), bytes});
    if (padded(bytes) > bytes) in.push_back({const_cast<uint8_t*>(kZeros), padded(bytes) - bytes});
  } else if constexpr (Arg<A>::kind == Kind::kArrayOut) {
    head.put(uint64_t(arg.size()));
    readCapacity += padded(arg.size_bytes());
  }
}

/// Compute side, answer: an output scalar from the head, an output array's length from
/// the head (shrinking the caller's span) and its place in the read bulk.
template <typename A>
inline void unpackReplyArg(HeadReader& reply, std::vector<iovec>& out, uint8_t* scratch,
                           typename Arg<A>::Client arg) {
  using E = typename Arg<A>::Element;
  if constexpr (Arg<A>::kind == Kind::kScalarOut) {
    arg = reply.get<E>();
  } else if constexpr (Arg<A>::kind == Kind::kArrayOut) {
    const uint64_t n = reply.get<uint64_t>();
    if (n > arg.size()) throw LinkError("forwarded call returned more elements than requested");
    arg = arg.first(n);
    const size_t bytes = n * sizeof(E);
    out.push_back({arg.data(), bytes});
    if (padded(bytes) > bytes) out.push_back({scratch, padded(bytes) - bytes});
  }
}

/// ionproc side, call: an argument from the head and the bulk into its storage slot.
template <typename A>
inline void unpackCallArg(HeadReader& head, AlignedBuffer<uint8_t>& bulk, size_t& offset,
                          typename Arg<A>::Storage& slot) {
  using E = typename Arg<A>::Element;
  if constexpr (Arg<A>::kind == Kind::kScalar) {
    slot = head.get<A>();
  } else if constexpr (Arg<A>::kind == Kind::kArrayIn) {
    const uint64_t n = head.get<uint64_t>();
    if (n > (bulk.size() - offset) / sizeof(E)) throw LinkError("input array beyond the bulk data");
    slot = std::span<const E>(reinterpret_cast<const E*>(bulk.data() + offset), n);
    offset += padded(n * sizeof(E));
    offset = std::min(offset, bulk.size());
  } else if constexpr (Arg<A>::kind == Kind::kArrayOut) {
    slot = OutArray<E>(head.get<uint64_t>());
  }
}

/// ionproc side, answer: an output into the head and the answer's bulk.
template <typename A>
inline void packReplyArg(HeadWriter& reply, std::vector<iovec>& data,
                         typename Arg<A>::Storage& slot) {
  using E = typename Arg<A>::Element;
  if constexpr (Arg<A>::kind == Kind::kScalarOut) {
    reply.put(slot);
  } else if constexpr (Arg<A>::kind == Kind::kArrayOut) {
    reply.put(uint64_t(slot.size()));
    const size_t bytes = slot.size() * sizeof(E);
    if (bytes) data.push_back({const_cast<E*>(slot.data()), bytes});
    if (padded(bytes) > bytes)
      data.push_back({const_cast<uint8_t*>(kZeros), padded(bytes) - bytes});
  }
}

}  // namespace forwarding
}  // namespace rtcp::ion
