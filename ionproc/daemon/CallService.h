#pragma once
/// \file CallService.h
/// The request loop's answer to compute cores: runs their forwarded calls (a write with
/// the call, then a read of its answer, Forwarding.h) on the registered functions.

#include <cstdint>
#include <map>
#include <mutex>

#include "LinkServer.h"
#include "daemon/FunctionRegistry.h"
#include "rtcp/BufferPool.h"

namespace rtcp::ion {

class CallService : public LinkService {
 public:
  /// maxCallBytes: the largest input bulk any call may bring; each function's own bound
  /// (FunctionRegistry::Function::maxInputBytes) applies too.
  explicit CallService(const FunctionRegistry& functions, uint64_t maxCallBytes = uint64_t(1) << 32)
      : functions_(functions), maxCallBytes_(maxCallBytes) {}

  LinkPosting post(const LinkRequest& request) override;
  void connectionClosed(uint64_t connection) override;

  uint64_t calls() const;     ///< calls completed
  uint64_t failures() const;  ///< calls whose function threw or was unknown

 private:
  LinkPosting postCall(const LinkRequest& request);
  LinkPosting postAnswer(const LinkRequest& request);

  const FunctionRegistry& functions_;
  uint64_t maxCallBytes_;
  mutable std::mutex mutex_;
  std::map<uint64_t, forwarding::CallResult> answers_;  ///< per connection: the last call's
  uint64_t calls_ = 0, failures_ = 0;
  BufferPool bulkPool_;  ///< calls' input bulk: the same shapes every block
};

}  // namespace rtcp::ion
