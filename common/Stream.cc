#include "rtcp/Stream.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "rtcp/Logger.h"

namespace rtcp {
namespace {

constexpr int kUdpReceiveBuffer = 16 << 20;  ///< bytes of kernel buffer per UDP input
constexpr size_t kFileBuffer = 4 << 20;      ///< stdio buffer of file streams
/// What one segmentation-offload send may carry: at most 64 datagrams (UDP_MAX_SEGMENTS
/// of older kernels) and 64 KiB less the IP and UDP headers.
constexpr size_t kMaxSegments = 64, kMaxSegmentedBytes = 65000;

std::string errnoText(int error) { return std::strerror(error); }

/// A getaddrinfo result, freed on scope exit. Prefers IPv4 (so that 'localhost' means
/// the same address to a sender and a receiver), falls back to any family.
struct AddressInfo {
  addrinfo* list = nullptr;
  AddressInfo(const std::string& name, const std::string& host, uint16_t port, int socktype,
              bool passive) {
    addrinfo hints{};
    hints.ai_socktype = socktype;
    hints.ai_flags = passive ? AI_PASSIVE : 0;
    const std::string service = std::to_string(port);
    const char* node = host.empty() ? nullptr : host.c_str();
    int rc = EAI_FAMILY;
    for (int family : {AF_INET, AF_UNSPEC}) {
      hints.ai_family = family;
      rc = getaddrinfo(node, service.c_str(), &hints, &list);
      if (rc == 0) return;
    }
    throw StreamError(name + ": cannot resolve host '" + host + "': " + gai_strerror(rc));
  }
  ~AddressInfo() { freeaddrinfo(list); }
};

/// Closes a file descriptor on scope exit unless released.
struct FdGuard {
  int fd;
  ~FdGuard() {
    if (fd >= 0) ::close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

/// A socket stream: reads wait in poll() on the socket and an eventfd that shutdown()
/// signals, so a blocked reader wakes without spinning.
class SocketStream : public Stream {
 public:
  SocketStream(int fd, std::string name, bool datagram)
      : fd_(fd), wake_(eventfd(0, EFD_CLOEXEC)), name_(std::move(name)), datagram_(datagram) {
    if (wake_ < 0) throw StreamError(name_ + ": eventfd: " + errnoText(errno));
  }
  ~SocketStream() override {
    ::close(fd_);
    ::close(wake_);
  }

  size_t read(void* data, size_t size) override {
    // Try first, wait only when nothing is there: one system call per datagram under load.
    while (!shut_) {
      const ssize_t n = ::recv(fd_, data, size, MSG_DONTWAIT);
      if (n >= 0) return size_t(n);
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        waitReadable();
        continue;
      }
      // A connected UDP socket reports an earlier ICMP "port unreachable" here.
      if (datagram_ && errno == ECONNREFUSED) continue;
      throw StreamError(name_ + ": receive failed: " + errnoText(errno));
    }
    return 0;
  }

  void write(const void* data, size_t size) override {
    const char* p = static_cast<const char*>(data);
    size_t done = 0;
    do {
      if (shut_) throw StreamError(name_ + ": write after shutdown");
      const ssize_t n = ::send(fd_, p + done, size - done, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        // UDP, like the network, loses datagrams nobody listens for.
        if (datagram_ && errno == ECONNREFUSED) return;
        if (errno == EPIPE || errno == ECONNRESET)
          throw StreamError(name_ + ": connection closed by the peer (" + errnoText(errno) + ")");
        throw StreamError(name_ + ": send failed: " + errnoText(errno));
      }
      done += size_t(n);
    } while (!datagram_ && done < size);
  }

  void writeEach(const void* data, size_t size, size_t count) override {
    if (!datagram_) return write(data, size * count);  // a byte stream: one write
    const size_t perSend = datagramsPerSegmentedSend(size);
    const auto* p = static_cast<const uint8_t*>(data);
    while (count > 0) {
      const size_t n = std::min(count, perSend);
      if (n < 2 || !segmenting_ || !sendSegmented(p, size, n)) {
        write(p, size);
        p += size;
        --count;
        continue;
      }
      p += n * size;
      count -= n;
    }
  }

  void shutdown() override {
    shut_ = true;
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_, &one, sizeof one);
    ::shutdown(fd_, SHUT_RDWR);
  }

  bool finishWriting(double timeoutSeconds) override {
    if (datagram_ || shut_) return true;
    if (::shutdown(fd_, SHUT_WR) != 0) return false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
    for (;;) {
      char discarded[4096];
      ssize_t n = 0;
      while ((n = ::recv(fd_, discarded, sizeof discarded, MSG_DONTWAIT)) > 0) {
      }
      const bool peerGone = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
      int unacknowledged = 0;  // bytes written, and the end, not yet acknowledged
      if (::ioctl(fd_, SIOCOUTQ, &unacknowledged) != 0 || unacknowledged == 0) return true;
      if (peerGone || std::chrono::steady_clock::now() > deadline) return false;
      pollfd readable{fd_, POLLIN, 0};
      ::poll(&readable, 1, 2);  // wakes for what the peer sends, else checks again in 2 ms
    }
  }

  int fileDescriptor() const override { return fd_; }
  std::string name() const override { return name_; }

 private:
  /// Blocks until the socket is readable or shutdown() was called.
  void waitReadable() {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {wake_, POLLIN, 0}};
    while (::poll(fds, 2, -1) < 0)
      if (errno != EINTR) throw StreamError(name_ + ": poll: " + errnoText(errno));
  }

  /// Sends n datagrams of size bytes at p in one sendmsg (UDP_SEGMENT); false, sending
  /// nothing, where the kernel or the route cannot segment (then never tried again).
  bool sendSegmented(const uint8_t* p, size_t size, size_t n) {
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(uint16_t))] = {};
    iovec bytes{const_cast<uint8_t*>(p), n * size};
    msghdr message{};
    message.msg_iov = &bytes;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof control;
    cmsghdr* segment = CMSG_FIRSTHDR(&message);
    segment->cmsg_level = SOL_UDP;
    segment->cmsg_type = UDP_SEGMENT;
    segment->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    const uint16_t segmentSize = uint16_t(size);
    std::memcpy(CMSG_DATA(segment), &segmentSize, sizeof segmentSize);
    for (;;) {
      if (shut_) throw StreamError(name_ + ": write after shutdown");
      if (::sendmsg(fd_, &message, MSG_NOSIGNAL) >= 0) return true;
      if (errno == EINTR) continue;
      if (errno == ECONNREFUSED) return true;  // as write(): nobody listens, they are lost
      if (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT || errno == EOPNOTSUPP) {
        segmenting_ = false;  // e.g. a device without checksum offload: one send each
        return false;
      }
      throw StreamError(name_ + ": send failed: " + errnoText(errno));
    }
  }

  int fd_;
  int wake_;
  std::string name_;
  bool datagram_;
  bool segmenting_ = true;  // UDP_SEGMENT works on this socket (until a send says not)
  std::atomic<bool> shut_{false};
};

/// A file stream through stdio with a large buffer.
class FileStream : public Stream {
 public:
  FileStream(const std::string& path, bool forWriting)
      : name_("file:" + path), file_(std::fopen(path.c_str(), forWriting ? "wb" : "rb")) {
    if (!file_)
      throw StreamError(name_ + ": cannot open for " + (forWriting ? "writing" : "reading") + ": " +
                        errnoText(errno));
    std::setvbuf(file_, nullptr, _IOFBF, kFileBuffer);
  }
  ~FileStream() override {
    if (std::fclose(file_) != 0)
      RTCP_LOG_ERROR("stream", name_ << ": close failed: " << errnoText(errno));
  }

  size_t read(void* data, size_t size) override {
    if (shut_) return 0;
    const size_t n = std::fread(data, 1, size, file_);
    if (n == 0 && std::ferror(file_))
      throw StreamError(name_ + ": read failed: " + errnoText(errno));
    return n;
  }
  void write(const void* data, size_t size) override {
    if (shut_) throw StreamError(name_ + ": write after shutdown");
    if (std::fwrite(data, 1, size, file_) != size)
      throw StreamError(name_ + ": write failed: " + errnoText(errno));
  }
  void writeEach(const void* data, size_t size, size_t count) override {
    write(data, size * count);  // records one after another, as on the wire
  }
  void shutdown() override {
    shut_ = true;
    std::fflush(file_);
  }
  int fileDescriptor() const override { return fileno(file_); }
  std::string name() const override { return name_; }

 private:
  std::string name_;
  std::FILE* file_;
  std::atomic<bool> shut_{false};
};

std::string describe(const char* kind, const std::string& host, uint16_t port) {
  return std::string(kind) + ":" + host + ":" + std::to_string(port);
}

void setReceiveBuffer(int fd, const std::string& name) {
  const int size = kUdpReceiveBuffer;
  if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof size) == 0) return;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof size);
  int granted = 0;
  socklen_t len = sizeof granted;
  getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &granted, &len);
  if (granted < size)
    RTCP_LOG_WARN("stream", name << ": receive buffer only " << granted
                                 << " bytes (raise net.core.rmem_max); packets may be lost");
}

/// Creates a socket for the first usable address: bound (passive) or connected.
int openSocket(const std::string& name, const std::string& host, uint16_t port, int socktype,
               bool passive, bool reuseAddress) {
  AddressInfo info(name, host, port, socktype, passive);
  int lastError = 0;
  for (addrinfo* a = info.list; a; a = a->ai_next) {
    FdGuard fd{::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol)};
    if (fd.fd < 0) {
      lastError = errno;
      continue;
    }
    const int on = 1;
    if (reuseAddress) setsockopt(fd.fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (passive && socktype == SOCK_DGRAM) setReceiveBuffer(fd.fd, name);
    const int rc = passive ? ::bind(fd.fd, a->ai_addr, a->ai_addrlen)
                           : ::connect(fd.fd, a->ai_addr, a->ai_addrlen);
    if (rc == 0) return fd.release();
    lastError = errno;
  }
  const std::string what =
      lastError == EADDRINUSE ? "address already in use (port in use)" : errnoText(lastError);
  throw StreamError(name + ": cannot " + (passive ? "bind" : "connect") + ": " + what);
}

uint16_t localPort(int fd) {
  sockaddr_storage address{};
  socklen_t len = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &len);
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

StreamDescriptor StreamDescriptor::parse(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return StreamError("bad stream descriptor '" + text + "': " + why);
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos) throw bad("expected udp:HOST:PORT, tcp:HOST:PORT or file:PATH");
  const std::string kind = text.substr(0, colon);
  const std::string rest = text.substr(colon + 1);
  StreamDescriptor d;
  if (kind == "file") {
    if (rest.empty()) throw bad("empty path");
    d.kind = Kind::kFile;
    d.path = rest;
    return d;
  }
  if (kind != "udp" && kind != "tcp") throw bad("unknown kind '" + kind + "' (udp, tcp or file)");
  d.kind = kind == "udp" ? Kind::kUdp : Kind::kTcp;
  const size_t portColon = rest.rfind(':');
  if (portColon == std::string::npos) throw bad("missing port (expected " + kind + ":HOST:PORT)");
  d.host = rest.substr(0, portColon);
  if (d.host.size() >= 2 && d.host.front() == '[' && d.host.back() == ']')
    d.host = d.host.substr(1, d.host.size() - 2);  // [IPv6]
  const std::string port = rest.substr(portColon + 1);
  if (port.empty()) throw bad("missing port");
  if (port.find_first_not_of("0123456789") != std::string::npos)
    throw bad("port '" + port + "' is not a number");
  if (port.size() > 5 || std::stoi(port) > 65535) throw bad("port " + port + " out of range");
  d.port = uint16_t(std::stoi(port));
  return d;
}

std::string StreamDescriptor::toString() const {
  switch (kind) {
    case Kind::kUdp:
      return describe("udp", host, port);
    case Kind::kTcp:
      return describe("tcp", host, port);
    case Kind::kFile:
      return "file:" + path;
  }
  return "?";
}

size_t datagramsPerSegmentedSend(size_t size) {
  return std::clamp<size_t>(kMaxSegmentedBytes / std::max<size_t>(size, 1), 1, kMaxSegments);
}

void Stream::writeEach(const void* data, size_t size, size_t count) {
  for (size_t i = 0; i < count; ++i) write(static_cast<const uint8_t*>(data) + i * size, size);
}

bool Stream::readExact(void* data, size_t size) {
  char* p = static_cast<char*>(data);
  size_t done = 0;
  while (done < size) {
    const size_t n = read(p + done, size - done);
    if (n == 0) {
      if (done == 0) return false;
      throw StreamError(name() + ": ended in the middle of a record (" + std::to_string(done) +
                        " of " + std::to_string(size) + " bytes)");
    }
    done += n;
  }
  return true;
}

std::unique_ptr<Stream> openStreamForReading(const StreamDescriptor& d) {
  const std::string name = d.toString();
  switch (d.kind) {
    case StreamDescriptor::Kind::kFile:
      return std::make_unique<FileStream>(d.path, false);
    case StreamDescriptor::Kind::kUdp:
      // No SO_REUSEADDR: a second reader of the same port is an error, not a silent split.
      return std::make_unique<SocketStream>(
          openSocket(name, d.host, d.port, SOCK_DGRAM, true, false), name, true);
    case StreamDescriptor::Kind::kTcp: {
      TcpListener listener(d.host, d.port);
      auto stream = listener.accept();
      if (!stream) throw StreamError(name + ": no connection accepted");
      return stream;
    }
  }
  throw StreamError(name + ": unknown stream kind");
}

std::unique_ptr<Stream> openStreamForWriting(const StreamDescriptor& d) {
  const std::string name = d.toString();
  switch (d.kind) {
    case StreamDescriptor::Kind::kFile:
      return std::make_unique<FileStream>(d.path, true);
    case StreamDescriptor::Kind::kUdp:
      return std::make_unique<SocketStream>(
          openSocket(name, d.host.empty() ? "localhost" : d.host, d.port, SOCK_DGRAM, false, false),
          name, true);
    case StreamDescriptor::Kind::kTcp:
      return connectTcp(d.host, d.port);
  }
  throw StreamError(name + ": unknown stream kind");
}

TcpListener::TcpListener(const std::string& host, uint16_t port) {
  const std::string name = describe("tcp", host, port);
  FdGuard fd{openSocket(name, host, port, SOCK_STREAM, true, true)};
  if (::listen(fd.fd, 64) != 0) throw StreamError(name + ": listen failed: " + errnoText(errno));
  port_ = localPort(fd.fd);
  fd_ = fd.release();
}

TcpListener::~TcpListener() {
  if (fd_ >= 0) ::close(fd_);
}

std::unique_ptr<Stream> TcpListener::accept() {
  for (;;) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    const int fd = ::accept4(fd_, reinterpret_cast<sockaddr*>(&peer), &len, SOCK_CLOEXEC);
    if (fd >= 0) {
      char host[NI_MAXHOST] = "?", service[NI_MAXSERV] = "?";
      getnameinfo(reinterpret_cast<sockaddr*>(&peer), len, host, sizeof host, service,
                  sizeof service, NI_NUMERICHOST | NI_NUMERICSERV);
      return std::make_unique<SocketStream>(fd, std::string("tcp:") + host + ":" + service, false);
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    // Linux wakes a blocked accept() with EINVAL once the socket was shut down.
    if (errno == EINVAL || errno == EBADF) return nullptr;
    throw StreamError("tcp listener on port " + std::to_string(port_) +
                      ": accept failed: " + errnoText(errno));
  }
}

void TcpListener::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

std::unique_ptr<Stream> connectTcp(const std::string& host, uint16_t port, double timeoutSeconds) {
  const std::string name = describe("tcp", host, port);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutSeconds);
  for (;;) {
    try {
      return std::make_unique<SocketStream>(
          openSocket(name, host.empty() ? "localhost" : host, port, SOCK_STREAM, false, false),
          name, false);
    } catch (const StreamError& e) {
      if (std::chrono::steady_clock::now() >= deadline)
        throw StreamError(std::string(e.what()) +
                          (timeoutSeconds > 0
                               ? " (gave up after " + std::to_string(timeoutSeconds) + " s)"
                               : ""));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace rtcp
