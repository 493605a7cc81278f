#include "LinkSocket.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

namespace rtcp::ion {
namespace {

constexpr int kSocketBuffer = 4 << 20;  ///< bytes of kernel buffer per direction

std::string errnoText() { return std::strerror(errno); }

struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

/// Advances an iovec list past `done` bytes; returns the first part not yet complete.
size_t advance(std::vector<iovec>& parts, size_t first, size_t done) {
  while (first < parts.size() && done >= parts[first].iov_len) {
    done -= parts[first].iov_len;
    ++first;
  }
  if (first < parts.size()) {
    parts[first].iov_base = static_cast<char*>(parts[first].iov_base) + done;
    parts[first].iov_len -= done;
  }
  return first;
}

sockaddr_un unixAddress(const std::string& path) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  return address;
}

/// A socket of the endpoint's family: bound and listening, or connected.
int openSocket(LinkEndpoint& e, bool listening) {
  const std::string name = e.toString();
  const std::string verb = listening ? "listen on " : "connect to ";
  if (e.kind == LinkEndpoint::Kind::kUnix) {
    FdGuard fd{::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)};
    if (fd.fd < 0) throw LinkError(name + ": socket: " + errnoText());
    const sockaddr_un address = unixAddress(e.path);
    if (listening) {
      ::unlink(e.path.c_str());
      // Only this user may connect (connecting needs write permission on the socket file);
      // every connection proves it belongs to the observation anyway (Handshake.h).
      if (::bind(fd.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 ||
          ::chmod(e.path.c_str(), 0600) != 0 || ::listen(fd.fd, 256) != 0)
        throw LinkError("cannot " + verb + name + ": " + errnoText());
    } else if (::connect(fd.fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
      throw LinkError("cannot " + verb + name + ": " + errnoText());
    }
    return fd.release();
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = listening ? AI_PASSIVE : 0;
  addrinfo* list = nullptr;
  const std::string host = e.host.empty() && !listening ? "localhost" : e.host;
  const int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(e.port).c_str(),
                             &hints, &list);
  if (rc != 0) throw LinkError(name + ": cannot resolve host '" + host + "': " + gai_strerror(rc));
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(list, freeaddrinfo);
  FdGuard fd{::socket(list->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)};
  if (fd.fd < 0) throw LinkError(name + ": socket: " + errnoText());
  const int on = 1;
  if (listening) {
    setsockopt(fd.fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd.fd, list->ai_addr, list->ai_addrlen) != 0 || ::listen(fd.fd, 256) != 0)
      throw LinkError("cannot " + verb + name + ": " + errnoText());
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    getsockname(fd.fd, reinterpret_cast<sockaddr*>(&bound), &len);
    e.port = ntohs(bound.sin_port);
  } else if (::connect(fd.fd, list->ai_addr, list->ai_addrlen) != 0) {
    throw LinkError("cannot " + verb + name + ": " + errnoText());
  }
  return fd.release();
}

}  // namespace

void tuneLinkSocket(int fd) {
  const int size = kSocketBuffer, on = 1;
  setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);  // fails harmlessly on unix
}

size_t totalSize(std::span<const iovec> parts) {
  size_t total = 0;
  for (const iovec& part : parts) total += part.iov_len;
  return total;
}

std::vector<iovec> truncated(std::span<const iovec> parts, size_t size) {
  std::vector<iovec> result;
  for (const iovec& part : parts) {
    if (size == 0) break;
    result.push_back({part.iov_base, std::min(part.iov_len, size)});
    size -= result.back().iov_len;
  }
  return result;
}

LinkSocket::LinkSocket(int fd, std::string name) : fd_(fd), name_(std::move(name)) {
  tuneLinkSocket(fd_);
}

LinkSocket::~LinkSocket() { ::close(fd_); }

void LinkSocket::send(std::span<const iovec> partsIn) {
  std::vector<iovec> parts(partsIn.begin(), partsIn.end());
  size_t first = advance(parts, 0, 0);
  while (first < parts.size()) {
    if (shut_) throw LinkError(name_ + ": link shut down");
    msghdr message{};
    message.msg_iov = parts.data() + first;
    message.msg_iovlen = std::min<size_t>(parts.size() - first, IOV_MAX);
    const ssize_t n = ::sendmsg(fd_, &message, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK)
        throw LinkError(name_ + ": peer stopped reading (send timed out)");
      throw LinkError(name_ + ": connection lost while sending (" + errnoText() + ")");
    }
    first = advance(parts, first, size_t(n));
  }
}

void LinkSocket::send(const void* data, size_t size) {
  const iovec part{const_cast<void*>(data), size};
  send({&part, 1});
}

void LinkSocket::receive(std::span<const iovec> partsIn) {
  std::vector<iovec> parts(partsIn.begin(), partsIn.end());
  size_t first = advance(parts, 0, 0);
  while (first < parts.size()) {
    msghdr message{};
    message.msg_iov = parts.data() + first;
    message.msg_iovlen = std::min<size_t>(parts.size() - first, IOV_MAX);
    const ssize_t n = ::recvmsg(fd_, &message, MSG_WAITALL);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw LinkError(name_ + ": connection lost while receiving (" + errnoText() + ")");
    }
    if (n == 0)
      throw LinkError(name_ + ": connection closed by the peer in the middle of a message");
    first = advance(parts, first, size_t(n));
  }
}

void LinkSocket::receive(void* data, size_t size) {
  const iovec part{data, size};
  receive({&part, 1});
}

bool LinkSocket::receiveOrEnd(void* data, size_t size) {
  if (size == 0) return true;
  ssize_t n;
  do n = ::recv(fd_, data, size, MSG_WAITALL);
  while (n < 0 && errno == EINTR);
  if (n == 0 || (n < 0 && (errno == ECONNRESET || shut_))) return false;
  if (n < 0) throw LinkError(name_ + ": connection lost while receiving (" + errnoText() + ")");
  if (size_t(n) < size) receive(static_cast<char*>(data) + n, size - size_t(n));
  return true;
}

void LinkSocket::shutdown() {
  shut_ = true;
  ::shutdown(fd_, SHUT_RDWR);
}

void LinkSocket::setSendTimeout(double seconds) {
  timeval timeout{};
  timeout.tv_sec = time_t(seconds);
  timeout.tv_usec = suseconds_t((seconds - double(timeout.tv_sec)) * 1e6);
  setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
}

LinkListener::LinkListener(const LinkEndpoint& endpoint) : endpoint_(endpoint) {
  fd_ = openSocket(endpoint_, true);
}

LinkListener::~LinkListener() {
  ::close(fd_);
  if (endpoint_.kind == LinkEndpoint::Kind::kUnix) ::unlink(endpoint_.path.c_str());
}

std::unique_ptr<LinkSocket> LinkListener::accept() {
  for (;;) {
    const int fd = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0)
      return std::make_unique<LinkSocket>(
          fd, endpoint_.toString() + " (peer " + std::to_string(fd) + ")");
    if (shut_ || errno == EINVAL || errno == EBADF) return nullptr;
    if (errno == EINTR || errno == ECONNABORTED) continue;
    throw LinkError(endpoint_.toString() + ": accept failed: " + errnoText());
  }
}

void LinkListener::shutdown() {
  shut_ = true;
  ::shutdown(fd_, SHUT_RDWR);
}

std::unique_ptr<LinkSocket> connectLink(const LinkEndpoint& endpoint, double timeoutSeconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  for (;;) {
    try {
      LinkEndpoint e = endpoint;
      return std::make_unique<LinkSocket>(openSocket(e, false), e.toString());
    } catch (const LinkError&) {
      if (std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

}  // namespace rtcp::ion
