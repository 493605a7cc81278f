#pragma once
/// \file LinkSocket.h
/// The byte pipes under the link: a connected stream socket (TCP or Unix domain) that
/// sends and receives gathered/scattered buffers in place (sendmsg/recvmsg straight from
/// and into the caller's memory, no copy in user space), and a listener.

#include <sys/uio.h>

#include <atomic>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "LinkProtocol.h"

namespace rtcp::ion {

class LinkSocket {
 public:
  LinkSocket(int fd, std::string name);
  ~LinkSocket();
  LinkSocket(const LinkSocket&) = delete;
  LinkSocket& operator=(const LinkSocket&) = delete;

  /// Sends every byte of the parts, in order; LinkError when the peer is gone or stopped
  /// reading for longer than the send timeout.
  void send(std::span<const iovec> parts);
  void send(const void* data, size_t size);
  /// Receives exactly the parts' bytes; LinkError on an end of stream in between.
  void receive(std::span<const iovec> parts);
  void receive(void* data, size_t size);
  /// As receive(), but false on a clean end of stream before the first byte.
  bool receiveOrEnd(void* data, size_t size);
  /// Wakes blocked calls (they fail or see the end) and stops further I/O.
  void shutdown();
  /// Gives up a send that makes no progress for this long (0: never).
  void setSendTimeout(double seconds);
  const std::string& name() const { return name_; }
  int fileDescriptor() const { return fd_; }

 private:
  int fd_;
  std::string name_;
  std::atomic<bool> shut_{false};
};

/// Listens on an endpoint (a unix: path is replaced if it exists, and removed at the end).
class LinkListener {
 public:
  explicit LinkListener(const LinkEndpoint& endpoint);
  ~LinkListener();
  LinkListener(const LinkListener&) = delete;
  LinkListener& operator=(const LinkListener&) = delete;
  /// Blocks until a connection arrives; nullptr once shutdown() was called.
  std::unique_ptr<LinkSocket> accept();
  void shutdown();
  /// The endpoint as bound (a tcp port 0 replaced by the port chosen).
  const LinkEndpoint& endpoint() const { return endpoint_; }

 private:
  int fd_ = -1;
  LinkEndpoint endpoint_;
  std::atomic<bool> shut_{false};
};

/// Connects to an endpoint, retrying until timeoutSeconds have passed; LinkError.
std::unique_ptr<LinkSocket> connectLink(const LinkEndpoint& endpoint, double timeoutSeconds = 0);

/// Socket buffer sizes the link uses (also applied to raw sockets in the benchmark).
void tuneLinkSocket(int fd);

/// Bytes of all the parts.
size_t totalSize(std::span<const iovec> parts);
/// The first `size` bytes of the parts (the last of them cut short).
std::vector<iovec> truncated(std::span<const iovec> parts, size_t size);

}  // namespace rtcp::ion
