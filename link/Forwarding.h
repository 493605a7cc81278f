#pragma once
/// \file Forwarding.h
/// Forwarded functions (ZOID style): one declaration serves both sides of the link.
///
///   RTCP_FORWARDED(scale, double(int32_t n, Span<float> in, Out<Span<float>> out, Out<int64_t> m));
///
/// declares `scale`, a Forwarded object. A compute core calls it through its link client
/// (`scale.call(client, n, in, out, m)`); ionproc serves it with
/// `registry.serve(scale, implementation)`. Argument kinds:
///
/// | declared          | compute side       | ionproc side           | travels as                |
/// |-------------------|--------------------|------------------------|---------------------------|
/// | T (plain data)    | T                  | T                      | inline head               |
/// | Span<T>           | std::span<const T> | std::span<const T>     | write bulk, 64-byte padded|
/// | Out<Span<T>>      | std::span<T>&      | OutArray<T>&           | read bulk, 64-byte padded |
/// | Out<T>            | T&                 | T&                     | acknowledgement head      |
///
/// A call is one write (head: function id, signature, scalars and array lengths; bulk:
/// the input arrays) and one read (ack head: status, return value, output scalars and
/// array lengths; bulk: the output arrays, sent straight from ionproc's buffers). An
/// output array's capacity is the caller's span; the received length shrinks the span.
/// An exception on ionproc's side comes back as a LinkError naming the function.

#include <sys/uio.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "LinkClient.h"
#include "LinkProtocol.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::ion {

/// Declaration markers (see the table above).
template <typename T>
struct Span {};
template <typename T>
struct Out {};

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
  if constexpr (k == Kind::kScalar) return layout(pos, sizeof(A), alignof(A));
  else if constexpr (k == Kind::kScalarOut) return pos;
  else return layout(pos, 8, 8);
}
template <typename A>
constexpr size_t replyHeadField(size_t pos) {
  constexpr Kind k = Arg<A>::kind;
  using E = typename Arg<A>::Element;
  if constexpr (k == Kind::kScalarOut) return layout(pos, sizeof(E), alignof(E));
  else if constexpr (k == Kind::kArrayOut) return layout(pos, 8, 8);
  else return pos;
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
  uint32_t hash = mix(2166136261u, std::is_void_v<R> ? 0 : sizeof(std::conditional_t<std::is_void_v<R>, char, R>));
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

/// Unpacks a call (head and input bulk), runs the implementation, packs the answer.
using Dispatcher = std::function<CallResult(std::span<const uint8_t> head, std::shared_ptr<AlignedBuffer<uint8_t>> bulk)>;

}  // namespace forwarding

template <typename Signature>
class Forwarded;

template <typename R, typename... Args>
class Forwarded<R(Args...)> {
  static_assert(std::is_void_v<R> || std::is_trivially_copyable_v<R>, "forwarded results are plain data");
  using Kind = forwarding::Kind;
  template <typename A> using ArgOf = forwarding::Arg<A>;

 public:
  constexpr explicit Forwarded(const char* name) : name_(name), id_(forwarding::fnv1a(name)) {
    static_assert(kCallHeadSize <= kMaxHeadSize, "too many scalar arguments for the 240-byte head");
    static_assert(kReplyHeadSize <= kMaxHeadSize, "too many output scalars for the 240-byte head");
  }
  const char* name() const { return name_; }
  uint32_t id() const { return id_; }
  static constexpr uint32_t signature() { return forwarding::signatureCode<R, Args...>(); }

  /// Calls the function on ionproc through a given client.
  R call(LinkClient& link, typename ArgOf<Args>::Client... args) const {
    forwarding::HeadWriter head;
    head.put(id_);
    head.put(signature());
    std::vector<iovec> in;
    size_t readCapacity = 0;
    (packCall<Args>(head, in, readCapacity, args), ...);
    link.write(head.span(), in);

    forwarding::HeadWriter readHead;
    readHead.put(id_);
    std::string error;
    bool failed = false;
    ResultHolder result;
    uint8_t scratch[forwarding::kPad];
    link.read(readHead.span(), readCapacity, [&](std::span<const uint8_t> ackHead, size_t) {
      forwarding::HeadReader reply(ackHead);
      std::vector<iovec> out;
      if (reply.get<int32_t>() != forwarding::kStatusOk) {
        failed = true;
        error = reply.rest();
        return out;
      }
      if constexpr (!std::is_void_v<R>) result.value = reply.get<R>();
      (unpackReply<Args>(reply, out, scratch, args), ...);
      return out;
    });
    if (failed) throw LinkError(std::string(name_) + " on ionproc: " + error);
    if constexpr (!std::is_void_v<R>) return result.value;
  }

  /// ionproc's dispatcher around an implementation taking the ionproc-side types.
  template <typename Implementation>
  forwarding::Dispatcher dispatcher(Implementation implementation) const {
    return [implementation = std::move(implementation), name = std::string(name_)](
               std::span<const uint8_t> headBytes, std::shared_ptr<AlignedBuffer<uint8_t>> bulk) {
      forwarding::HeadReader head(headBytes);
      head.get<uint32_t>();  // id, checked by the registry
      if (head.get<uint32_t>() != signature())
        return forwarding::errorResult(name + ": signature differs between compute side and plug-in");
      auto storage = std::make_shared<std::tuple<typename ArgOf<Args>::Storage...>>();
      size_t offset = 0;
      unpackCall(head, *bulk, offset, *storage, std::index_sequence_for<Args...>{});
      if (offset != bulk->size())
        return forwarding::errorResult(name + ": input arrays do not fill the bulk data");
      forwarding::HeadWriter reply;
      reply.put(forwarding::kStatusOk);
      if constexpr (std::is_void_v<R>) {
        std::apply(implementation, *storage);
      } else {
        reply.put(R(std::apply(implementation, *storage)));
      }
      forwarding::CallResult result;
      packReply(reply, result.data, *storage, std::index_sequence_for<Args...>{});
      result.head = reply.vector();
      result.keepAlive = std::make_shared<std::pair<decltype(storage), decltype(bulk)>>(storage, bulk);
      return result;
    };
  }

 private:
  struct Empty {};
  using Value = std::conditional_t<std::is_void_v<R>, char, R>;  ///< R, or a stand-in for void
  struct ResultHolder {
    std::conditional_t<std::is_void_v<R>, Empty, R> value{};
  };

  static constexpr size_t kCallHeadSize = [] {
    size_t pos = 8;
    ((pos = forwarding::callHeadField<Args>(pos)), ...);
    return pos;
  }();
  static constexpr size_t kReplyHeadSize = [] {
    size_t pos = 4;
    if constexpr (!std::is_void_v<R>) pos = forwarding::layout(pos, sizeof(Value), alignof(Value));
    ((pos = forwarding::replyHeadField<Args>(pos)), ...);
    return pos;
  }();

  template <typename A>
  static void packCall(forwarding::HeadWriter& head, std::vector<iovec>& in, size_t& readCapacity,
                       typename ArgOf<A>::Client arg) {
    using E = typename ArgOf<A>::Element;
    if constexpr (ArgOf<A>::kind == Kind::kScalar) {
      head.put(arg);
    } else if constexpr (ArgOf<A>::kind == Kind::kArrayIn) {
      head.put(uint64_t(arg.size()));
      const size_t bytes = arg.size_bytes();
      in.push_back({const_cast<E*>(arg.data()), bytes});
      if (forwarding::padded(bytes) > bytes)
        in.push_back({const_cast<uint8_t*>(forwarding::kZeros), forwarding::padded(bytes) - bytes});
    } else if constexpr (ArgOf<A>::kind == Kind::kArrayOut) {
      head.put(uint64_t(arg.size()));
      readCapacity += forwarding::padded(arg.size_bytes());
    }
  }

  template <typename A>
  static void unpackReply(forwarding::HeadReader& reply, std::vector<iovec>& out, uint8_t* scratch,
                          typename ArgOf<A>::Client arg) {
    using E = typename ArgOf<A>::Element;
    if constexpr (ArgOf<A>::kind == Kind::kScalarOut) {
      arg = reply.get<E>();
    } else if constexpr (ArgOf<A>::kind == Kind::kArrayOut) {
      const uint64_t n = reply.get<uint64_t>();
      if (n > arg.size()) throw LinkError("forwarded call returned more elements than requested");
      arg = arg.first(n);
      const size_t bytes = n * sizeof(E);
      out.push_back({arg.data(), bytes});
      if (forwarding::padded(bytes) > bytes) out.push_back({scratch, forwarding::padded(bytes) - bytes});
    }
  }

  template <typename Tuple, size_t... I>
  static void unpackCall(forwarding::HeadReader& head, AlignedBuffer<uint8_t>& bulk, size_t& offset,
                         Tuple& storage, std::index_sequence<I...>) {
    (unpackCallArg<Args>(head, bulk, offset, std::get<I>(storage)), ...);
  }
  template <typename A>
  static void unpackCallArg(forwarding::HeadReader& head, AlignedBuffer<uint8_t>& bulk, size_t& offset,
                            typename ArgOf<A>::Storage& slot) {
    using E = typename ArgOf<A>::Element;
    if constexpr (ArgOf<A>::kind == Kind::kScalar) {
      slot = head.get<A>();
    } else if constexpr (ArgOf<A>::kind == Kind::kArrayIn) {
      const uint64_t n = head.get<uint64_t>();
      if (n > (bulk.size() - offset) / sizeof(E)) throw LinkError("input array beyond the bulk data");
      slot = std::span<const E>(reinterpret_cast<const E*>(bulk.data() + offset), n);
      offset += forwarding::padded(n * sizeof(E));
      offset = std::min(offset, bulk.size());
    } else if constexpr (ArgOf<A>::kind == Kind::kArrayOut) {
      slot = OutArray<E>(head.get<uint64_t>());
    }
  }

  template <typename Tuple, size_t... I>
  static void packReply(forwarding::HeadWriter& reply, std::vector<iovec>& data, Tuple& storage,
                        std::index_sequence<I...>) {
    (packReplyArg<Args>(reply, data, std::get<I>(storage)), ...);
  }
  template <typename A>
  static void packReplyArg(forwarding::HeadWriter& reply, std::vector<iovec>& data,
                           typename ArgOf<A>::Storage& slot) {
    using E = typename ArgOf<A>::Element;
    if constexpr (ArgOf<A>::kind == Kind::kScalarOut) {
      reply.put(slot);
    } else if constexpr (ArgOf<A>::kind == Kind::kArrayOut) {
      reply.put(uint64_t(slot.size()));
      const size_t bytes = slot.size() * sizeof(E);
      if (bytes) data.push_back({const_cast<E*>(slot.data()), bytes});
      if (forwarding::padded(bytes) > bytes)
        data.push_back({const_cast<uint8_t*>(forwarding::kZeros), forwarding::padded(bytes) - bytes});
    }
  }

  const char* name_;
  uint32_t id_;
};

}  // namespace rtcp::ion

/// Declares a forwarded function (see Forwarding.h): RTCP_FORWARDED(name, R(args...)).
#define RTCP_FORWARDED(name, ...) inline constexpr ::rtcp::ion::Forwarded<__VA_ARGS__> name{#name}
