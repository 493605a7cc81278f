#include "daemon/CallService.h"

#include <algorithm>
#include <cstring>

#include "rtcp/Logger.h"

namespace rtcp::ion {
namespace {

LinkPosting refuse(const std::string& why) {
  LinkPosting posting;
  posting.refused = true;
  posting.head.assign(why.begin(), why.begin() + std::min(why.size(), kMaxHeadSize));
  return posting;
}

uint32_t functionId(std::span<const uint8_t> head) {
  uint32_t id = 0;
  if (head.size() >= sizeof id) std::memcpy(&id, head.data(), sizeof id);
  return id;
}

}  // namespace

LinkPosting CallService::post(const LinkRequest& request) {
  return request.op == LinkOp::kWrite ? postCall(request) : postAnswer(request);
}

LinkPosting CallService::postCall(const LinkRequest& request) {
  const FunctionRegistry::Function* function = functions_.find(functionId(request.head));
  if (!function) {
    std::lock_guard lock(mutex_);
    ++failures_;
    return refuse("no plug-in serves function id " + std::to_string(functionId(request.head)));
  }
  const uint64_t limit = std::min(maxCallBytes_, function->maxInputBytes);
  if (request.size > limit) {  // before allocating: the size comes from the peer
    std::lock_guard lock(mutex_);
    ++failures_;
    RTCP_LOG_WARN("ionproc", "refused a call of " << function->name << " by rank " << request.rank
                                                  << " core " << request.core << ": "
                                                  << request.size << " input bytes exceed its "
                                                  << limit);
    return refuse(function->name + ": " + std::to_string(request.size) +
                  " input bytes exceed the limit of " + std::to_string(limit));
  }
  // The link fills it (a short transfer's rest is zeroed below).
  std::shared_ptr<AlignedBuffer<uint8_t>> bulk = bulkPool_.take(size_t(request.size));
  LinkPosting posting;
  posting.data = {{bulk->data(), bulk->size()}};
  posting.done =
      [this, function, bulk, rank = request.rank, core = request.core,
       connection = request.connection,
       head = std::vector<uint8_t>(request.head.begin(), request.head.end())](size_t received) {
        if (received < bulk->size())
          std::memset(bulk->data() + received, 0, bulk->size() - received);
        forwarding::CallResult answer;
        bool failed = false;
        try {
          answer = function->dispatch(head, bulk);
        } catch (const std::exception& e) {
          failed = true;
          answer = forwarding::errorResult(function->name + ": " + e.what());
          RTCP_LOG_WARN("ionproc", "call of " << function->name << " by rank " << rank << " core "
                                              << core << " failed: " << e.what());
        }
        std::lock_guard lock(mutex_);
        ++calls_;
        failures_ += failed;
        answers_[connection] = std::move(answer);
      };
  return posting;
}

LinkPosting CallService::postAnswer(const LinkRequest& request) {
  std::unique_lock lock(mutex_);
  const auto it = answers_.find(request.connection);
  if (it == answers_.end()) return refuse("read without a preceding call");
  forwarding::CallResult answer = std::move(it->second);
  answers_.erase(it);
  lock.unlock();
  LinkPosting posting;
  posting.head = std::move(answer.head);
  posting.data = std::move(answer.data);
  posting.done = [keepAlive = std::move(answer.keepAlive)](size_t) {};
  return posting;
}

void CallService::connectionClosed(uint64_t connection) {
  std::lock_guard lock(mutex_);
  answers_.erase(connection);
}

uint64_t CallService::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

uint64_t CallService::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

}  // namespace rtcp::ion
