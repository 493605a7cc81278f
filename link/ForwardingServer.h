#pragma once
/// \file ForwardingServer.h
/// ionproc's side of a forwarded function (Forwarding.h): the dispatcher that unpacks a
/// call into the implementation's argument types, runs it, and packs the answer, whose
/// output arrays are sent from their own buffers.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "ForwardingCodec.h"

namespace rtcp::ion::forwarding {

namespace detail {
template <typename... Args, typename Tuple, size_t... I>
void unpackCall(HeadReader& head, AlignedBuffer<uint8_t>& bulk, size_t& offset, Tuple& storage,
                std::index_sequence<I...>) {
  (unpackCallArg<Args>(head, bulk, offset, std::get<I>(storage)), ...);
}
template <typename... Args, typename Tuple, size_t... I>
void packReply(HeadWriter& reply, std::vector<iovec>& data, Tuple& storage,
               std::index_sequence<I...>) {
  (packReplyArg<Args>(reply, data, std::get<I>(storage)), ...);
}
}  // namespace detail

/// The dispatcher of function `name` (signature R(Args...)) around an implementation
/// taking ionproc's argument types (Forwarding.h's table).
template <typename R, typename... Args, typename Implementation>
Dispatcher makeDispatcher(std::string name, Implementation implementation) {
  return [implementation = std::move(implementation), name = std::move(name)](
             std::span<const uint8_t> headBytes, std::shared_ptr<AlignedBuffer<uint8_t>> bulk) {
    HeadReader head(headBytes);
    head.get<uint32_t>();  // id, checked by the registry
    if (head.get<uint32_t>() != signatureCode<R, Args...>())
      return errorResult(name + ": signature differs between compute side and plug-in");
    auto storage = std::make_shared<std::tuple<typename Arg<Args>::Storage...>>();
    size_t offset = 0;
    detail::unpackCall<Args...>(head, *bulk, offset, *storage, std::index_sequence_for<Args...>{});
    if (offset != bulk->size())
      return errorResult(name + ": input arrays do not fill the bulk data");
    HeadWriter reply;
    reply.put(kStatusOk);
    if constexpr (std::is_void_v<R>) {
      std::apply(implementation, *storage);
    } else {
      reply.put(R(std::apply(implementation, *storage)));
    }
    CallResult result;
    detail::packReply<Args...>(reply, result.data, *storage, std::index_sequence_for<Args...>{});
    result.head = reply.vector();
    result.keepAlive =
        std::make_shared<std::pair<decltype(storage), decltype(bulk)>>(storage, bulk);
    return result;
  };
}

}  // namespace rtcp::ion::forwarding
