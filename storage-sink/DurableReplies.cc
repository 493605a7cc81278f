#include "DurableReplies.h"

#include <sys/socket.h>

#include <cerrno>

#include "rtcp/CorrelatedBlock.h"

namespace rtcp::storage {

namespace {
constexpr size_t kMaxPendingBytes = 64 * DurableReply::kSize;
}

DurableMarks::DurableMarks(int nrOutputs)
    : written_(std::make_unique<std::atomic<int64_t>[]>(size_t(nrOutputs))),
      durable_(std::make_unique<std::atomic<int64_t>[]>(size_t(nrOutputs))) {
  for (int i = 0; i < nrOutputs; ++i) written_[size_t(i)] = durable_[size_t(i)] = -1;
}

void DurableMarks::written(int output, int64_t integration) {
  std::atomic<int64_t>& newest = written_[size_t(output)];
  if (integration > newest.load(std::memory_order_relaxed))
    newest.store(integration, std::memory_order_relaxed);
}

void DurableMarks::flushed(int output) {
  durable_[size_t(output)].store(written_[size_t(output)].load(std::memory_order_relaxed));
}

void DurableReplies::staged(int output, uint32_t subband) {
  if (socket_ < 0) return;
  outputs_.try_emplace(output, Sent{subband, -1});
  const auto now = std::chrono::steady_clock::now();
  if (now < nextCheck_) return;
  nextCheck_ = now + kInterval;
  for (auto& [out, sent] : outputs_) {
    const int64_t durable = marks_.durable(out);
    if (durable <= sent.durable || pending_.size() >= kMaxPendingBytes) continue;
    sent.durable = durable;
    const size_t at = pending_.size();
    pending_.resize(at + DurableReply::kSize);
    DurableReply{sent.subband, uint64_t(durable)}.write(pending_.data() + at);
  }
  sendPending();
}

void DurableReplies::sendPending() {
  while (!pending_.empty()) {
    const ssize_t n =
        ::send(socket_, pending_.data(), pending_.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n > 0) {
      pending_.erase(pending_.begin(), pending_.begin() + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;  // the sender reads later
    pending_.clear();  // the connection is ending: its receiver will notice
    return;
  }
}

}  // namespace rtcp::storage
