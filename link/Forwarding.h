#pragma once
/// \file Forwarding.h
/// Forwarded functions (ZOID style): one declaration serves both sides of the link.
///
///   RTCP_FORWARDED(scale, double(int32_t n, Span<float> in, Out<Span<float>> out, Out<int64_t>
///   m));
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
///
/// The parts: ForwardingCodec.h (wire format, per-argument packing), ForwardingClient.h
/// (the compute side's call), ForwardingServer.h (ionproc's dispatcher), OutArray.h.

#include <cstdint>
#include <type_traits>
#include <utility>

#include "ForwardingClient.h"
#include "ForwardingCodec.h"
#include "ForwardingServer.h"

namespace rtcp::ion {

template <typename Signature>
class Forwarded;

template <typename R, typename... Args>
class Forwarded<R(Args...)> {
  static_assert(std::is_void_v<R> || std::is_trivially_copyable_v<R>,
                "forwarded results are plain data");
  static_assert(forwarding::callHeadSize<Args...>() <= kMaxHeadSize,
                "too many scalar arguments for the 240-byte head");
  static_assert(forwarding::replyHeadSize<R, Args...>() <= kMaxHeadSize,
                "too many output scalars for the 240-byte head");

 public:
  constexpr explicit Forwarded(const char* name) : name_(name), id_(forwarding::fnv1a(name)) {}
  const char* name() const { return name_; }
  uint32_t id() const { return id_; }
  static constexpr uint32_t signature() { return forwarding::signatureCode<R, Args...>(); }

  /// Calls the function on ionproc through `link` (ForwardingClient.h).
  R call(LinkClient& link, typename forwarding::Arg<Args>::Client... args) const {
    return forwarding::callRemote<R, Args...>(link, name_, id_, args...);
  }

  /// ionproc's dispatcher around an implementation taking the ionproc-side types
  /// (ForwardingServer.h).
  template <typename Implementation>
  forwarding::Dispatcher dispatcher(Implementation implementation) const {
    return forwarding::makeDispatcher<R, Args...>(name_, std::move(implementation));
  }

 private:
  const char* name_;
  uint32_t id_;
};

}  // namespace rtcp::ion

/// Declares a forwarded function (see Forwarding.h): RTCP_FORWARDED(name, R(args...)).
#define RTCP_FORWARDED(name, ...) \
  inline constexpr ::rtcp::ion::Forwarded<__VA_ARGS__> name { #name }
