#include "LinkClient.h"

namespace rtcp::ion {

LinkClient::LinkClient(const LinkEndpoint& endpoint, int rank, int core, const Handshake& handshake,
                       double connectTimeout)
    : socket_(connectLink(endpoint, connectTimeout)), rank_(rank), core_(core) {
  try {
    handshake.proveToPeer(socket_->fileDescriptor());
  } catch (const HandshakeError& e) {
    throw LinkError(endpoint.toString() + ": " + e.what());
  }
}

AckHeader LinkClient::request(LinkOp op, std::span<const uint8_t> head, size_t size,
                              std::vector<uint8_t>& ackHead) {
  if (head.size() > kMaxHeadSize)
    throw LinkError("link request head of " + std::to_string(head.size()) + " bytes exceeds " +
                    std::to_string(kMaxHeadSize));
  RequestHeader header;
  header.op = uint8_t(op);
  header.headSize = uint8_t(head.size());
  header.rank = rank_;
  header.core = core_;
  header.size = size;
  const iovec parts[2] = {{&header, sizeof header},
                          {const_cast<uint8_t*>(head.data()), head.size()}};
  socket_->send(parts);

  AckHeader ack;
  socket_->receive(&ack, sizeof ack);
  if (ack.magic != 'A' || ack.op != uint8_t(op) || ack.headSize > kMaxHeadSize || ack.size > size)
    throw LinkError(socket_->name() + ": bad acknowledgement of a " + toString(op) + " request");
  ackHead.resize(ack.headSize);
  socket_->receive(ackHead.data(), ackHead.size());
  if (ack.status != uint8_t(LinkStatus::kOk))
    throw LinkError(socket_->name() + ": ionproc refused a " + toString(op) + " of rank " +
                    std::to_string(rank_) + " core " + std::to_string(core_) + ": " +
                    std::string(ackHead.begin(), ackHead.end()));
  return ack;
}

size_t LinkClient::write(std::span<const uint8_t> head, std::span<const iovec> data,
                         std::vector<uint8_t>* ackHead) {
  std::vector<uint8_t> ownHead;
  std::vector<uint8_t>& replyHead = ackHead ? *ackHead : ownHead;
  const AckHeader ack = request(LinkOp::kWrite, head, totalSize(data), replyHead);
  socket_->send(truncated(data, ack.size));
  return ack.size;
}

size_t LinkClient::write(std::span<const uint8_t> head, const void* data, size_t size,
                         std::vector<uint8_t>* ackHead) {
  const iovec part{const_cast<void*>(data), size};
  return write(head, {&part, 1}, ackHead);
}

size_t LinkClient::read(std::span<const uint8_t> head, size_t size, const Scatter& scatter) {
  std::vector<uint8_t> ackHead;
  const AckHeader ack = request(LinkOp::kRead, head, size, ackHead);
  const std::vector<iovec> parts = scatter(ackHead, ack.size);
  if (totalSize(parts) < ack.size)
    throw LinkError(socket_->name() + ": no room for the " + std::to_string(ack.size) +
                    " bytes read");
  socket_->receive(truncated(parts, ack.size));
  return ack.size;
}

size_t LinkClient::read(std::span<const uint8_t> head, void* data, size_t size,
                        std::vector<uint8_t>* ackHead) {
  return read(head, size, [&](std::span<const uint8_t> replyHead, size_t) {
    if (ackHead) ackHead->assign(replyHead.begin(), replyHead.end());
    return std::vector<iovec>{{data, size}};
  });
}

}  // namespace rtcp::ion
