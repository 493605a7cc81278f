#pragma once
/// \file ForwardingClient.h
/// The compute side of a forwarded call (Forwarding.h): packs the arguments, writes the
/// call over a LinkClient, reads the answer straight into the caller's output arrays.

#include <sys/uio.h>

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "ForwardingCodec.h"
#include "LinkClient.h"

namespace rtcp::ion::forwarding {

/// Calls function `name` (id `id`, signature R(Args...)) on ionproc through `link`.
/// LinkError when the link fails or the function failed on ionproc's side.
template <typename R, typename... Args>
R callRemote(LinkClient& link, const char* name, uint32_t id, typename Arg<Args>::Client... args) {
  HeadWriter head;
  head.put(id);
  head.put(signatureCode<R, Args...>());
  std::vector<iovec> in;
  size_t readCapacity = 0;
  (packCallArg<Args>(head, in, readCapacity, args), ...);
  link.write(head.span(), in);

  HeadWriter readHead;
  readHead.put(id);
  std::string error;
  bool failed = false;
  struct Empty {};
  std::conditional_t<std::is_void_v<R>, Empty, R> result{};
  uint8_t scratch[kPad];
  link.read(readHead.span(), readCapacity, [&](std::span<const uint8_t> ackHead, size_t) {
    HeadReader reply(ackHead);
    std::vector<iovec> out;
    if (reply.get<int32_t>() != kStatusOk) {
      failed = true;
      error = reply.rest();
      return out;
    }
    if constexpr (!std::is_void_v<R>) result = reply.get<R>();
    (unpackReplyArg<Args>(reply, out, scratch, args), ...);
    return out;
  });
  if (failed) throw LinkError(std::string(name) + " on ionproc: " + error);
  if constexpr (!std::is_void_v<R>) return result;
}

}  // namespace rtcp::ion::forwarding
