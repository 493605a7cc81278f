#include "DurableReplies.h"

#include <sys/socket.h>

#include <cerrno>

#include "BeamFormedWriter.h"

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
  replyDue();
}

void DurableReplies::stagedBeamFormed(const DurableStream& stream) {
  if (socket_ < 0 || !beamFormed_) return;
  beamFormedSent_.try_emplace(stream, -1);
  replyDue();
}

void DurableReplies::replyDue() {
  const auto now = std::chrono::steady_clock::now();
  if (now < nextCheck_) return;
  nextCheck_ = now + kInterval;
  for (auto& [out, sent] : outputs_) {
    const int64_t durable = marks_.durable(out);
    if (durable <= sent.durable || pending_.size() >= kMaxPendingBytes) continue;
    sent.durable = durable;
    add({DurableStream::Kind::kIntegrations, 0, 0, sent.subband}, durable);
  }
  for (auto& [stream, sent] : beamFormedSent_) {
    const int64_t durable =
        beamFormed_->durableBlock(int(stream.sap), int(stream.tab), int(stream.subband));
    if (durable <= sent || pending_.size() >= kMaxPendingBytes) continue;
    sent = durable;
    add(stream, durable);
  }
  sendPending();
}

void DurableReplies::add(const DurableStream& stream, int64_t mark) {
  const size_t at = pending_.size();
  pending_.resize(at + DurableReply::kSize);
  DurableReply{stream, uint64_t(mark)}.write(pending_.data() + at);
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
