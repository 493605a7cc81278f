#include "DatagramReceiver.h"

#include <netinet/in.h>
#include <netinet/udp.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "rtcp/Stream.h"

namespace rtcp::ion {
namespace {

/// Messages per recvmmsg: single datagrams, or groups coalesced by the kernel (up to
/// 64 KiB each, so fewer of them).
constexpr size_t kMessages = 64, kCoalescedMessages = 16;
constexpr size_t kCoalescedSlot = 65536;                  ///< the largest UDP payload fits
constexpr size_t kControlSize = CMSG_SPACE(sizeof(int));  ///< room for UDP_GRO's segment size

}  // namespace

DatagramReceiver::DatagramReceiver(int fd) : fd_(fd) {
  const int on = 1;
  coalescing_ = ::setsockopt(fd_, IPPROTO_UDP, UDP_GRO, &on, sizeof on) == 0;
  const size_t nrMessages = coalescing_ ? kCoalescedMessages : kMessages;
  slotSize_ = coalescing_ ? kCoalescedSlot : kMaxPacket;
  slots_ = AlignedBuffer<uint8_t>(nrMessages * slotSize_);
  iov_.resize(nrMessages);
  messages_.resize(nrMessages);
  control_.resize(nrMessages * kControlSize);
  // A group holds up to 64 datagrams (128 on newer kernels: the vector then grows once).
  datagrams_.reserve(coalescing_ ? nrMessages * 64 : nrMessages);
  for (size_t i = 0; i < nrMessages; ++i) iov_[i] = {slots_.data() + i * slotSize_, slotSize_};
}

std::span<const std::span<const uint8_t>> DatagramReceiver::receive(const char* name) {
  datagrams_.clear();
  bytes_ = messagesTaken_ = 0;
  filled_ = false;
  for (size_t i = 0; i < messages_.size(); ++i) {
    msghdr& header = messages_[i].msg_hdr;
    header = {};
    header.msg_iov = &iov_[i];
    header.msg_iovlen = 1;
    header.msg_control = control_.data() + i * kControlSize;
    header.msg_controllen = kControlSize;
  }
  int n = -1;
  while ((n = ::recvmmsg(fd_, messages_.data(), unsigned(messages_.size()), MSG_DONTWAIT,
                         nullptr)) < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {};
    if (errno != EINTR && errno != ECONNREFUSED)
      throw StreamError(std::string(name) + ": recvmmsg: " + std::strerror(errno));
  }
  messagesTaken_ = size_t(n);
  for (size_t i = 0; i < size_t(n); ++i) split(i);
  filled_ = size_t(n) == messages_.size();
  return datagrams_;
}

void DatagramReceiver::split(size_t i) {
  const msghdr& header = messages_[i].msg_hdr;
  const uint8_t* slot = slots_.data() + i * slotSize_;
  const size_t length = messages_[i].msg_len;
  bytes_ += length;
  if (header.msg_flags & MSG_TRUNC) {  // larger than a slot: no valid packet
    datagrams_.emplace_back(slot, slotSize_);
    return;
  }
  size_t segment = 0;  // the size of each coalesced datagram (the last may be shorter)
  for (const cmsghdr* c = CMSG_FIRSTHDR(&header); c != nullptr;
       c = CMSG_NXTHDR(const_cast<msghdr*>(&header), const_cast<cmsghdr*>(c)))
    if (c->cmsg_level == IPPROTO_UDP && c->cmsg_type == UDP_GRO) {
      int size = 0;
      std::memcpy(&size, CMSG_DATA(c), sizeof size);
      segment = size > 0 ? size_t(size) : 0;
    }
  if (segment == 0 || segment >= length) {
    datagrams_.emplace_back(slot, length);
    return;
  }
  for (size_t offset = 0; offset < length; offset += segment)
    datagrams_.emplace_back(slot + offset, std::min(segment, length - offset));
}

}  // namespace rtcp::ion
