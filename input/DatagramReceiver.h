#pragma once
/// \file DatagramReceiver.h
/// Takes a UDP socket's waiting datagrams in batches: one recvmmsg fills up to a batch of
/// messages. Where the kernel has it, the socket asks for UDP_GRO: a message may then hold
/// several datagrams of one size from one sender, which the kernel kept together (a
/// sender's segmentation offload, or GRO on the receive path) instead of passing each
/// through the network stack on its own; they are split here again. A station's packets
/// then cost the kernel one buffer per group, not one per packet.

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "rtcp/AlignedBuffer.h"

namespace rtcp::ion {

class DatagramReceiver {
 public:
  /// Bytes that hold any valid RSP packet (the largest: 7824); a larger datagram is kept
  /// at this size, so that it is rejected as wrong-sized.
  static constexpr size_t kMaxPacket = 8192;

  /// fd: a bound UDP socket, read without waiting (the caller polls).
  explicit DatagramReceiver(int fd);

  /// The datagrams one recvmmsg took (empty when none waited), valid until the next call;
  /// StreamError naming `name` on a socket error.
  std::span<const std::span<const uint8_t>> receive(const char* name);
  /// Whether the last receive() filled every message: more may be waiting.
  bool filledEveryMessage() const { return filled_; }
  /// Bytes of the datagrams the last receive() took, and the messages that held them.
  size_t bytes() const { return bytes_; }
  size_t messages() const { return messagesTaken_; }
  /// Whether the kernel coalesces datagrams for this socket (UDP_GRO).
  bool coalescing() const { return coalescing_; }

 private:
  /// Adds message i's datagrams (one, or several coalesced ones) to datagrams_.
  void split(size_t i);

  int fd_;
  bool coalescing_ = false, filled_ = false;
  size_t slotSize_ = kMaxPacket, bytes_ = 0, messagesTaken_ = 0;
  AlignedBuffer<uint8_t> slots_;  // [message][slotSize_]
  std::vector<iovec> iov_;        // [message]
  std::vector<mmsghdr> messages_;
  std::vector<uint8_t> control_;  // [message][control bytes]: the UDP_GRO segment size
  std::vector<std::span<const uint8_t>> datagrams_;
};

}  // namespace rtcp::ion
