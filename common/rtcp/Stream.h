#pragma once
/// \file Stream.h
/// Byte streams named by descriptors: `udp:HOST:PORT`, `tcp:HOST:PORT`, `file:PATH`,
/// opened uniformly for reading or writing. Waiting calls block; none spin.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace rtcp {

class StreamError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StreamDescriptor {
  enum class Kind { kUdp, kTcp, kFile };
  Kind kind = Kind::kFile;
  std::string host;   ///< udp/tcp
  uint16_t port = 0;  ///< udp/tcp
  std::string path;   ///< file

  /// Parses a descriptor; throws StreamError naming the descriptor and the problem.
  static StreamDescriptor parse(const std::string& text);
  std::string toString() const;
};

class Stream {
 public:
  virtual ~Stream() = default;
  /// Reads up to size bytes (one datagram for UDP); returns 0 at end of stream.
  virtual size_t read(void* data, size_t size) = 0;
  /// Writes all bytes (one datagram for UDP).
  virtual void write(const void* data, size_t size) = 0;
  /// write() of count records of size bytes each that lie one after another at data. UDP
  /// sends them as count datagrams in as few system calls as the kernel's segmentation
  /// offload (UDP_SEGMENT) takes: a send per datagram cost a paced station most of its CPU
  /// (in the kernel, per datagram). A receiver that asks for it (UDP_GRO) gets such a
  /// group in one receive, else the kernel splits it into the datagrams.
  virtual void writeEach(const void* data, size_t size, size_t count);
  /// Reads exactly size bytes; false on a clean end of stream before the first byte,
  /// StreamError on an end in the middle.
  bool readExact(void* data, size_t size);
  /// Wakes a reader blocked in read() (it then returns 0) and stops further I/O.
  virtual void shutdown() {}
  /// Ends the writing half and waits, up to timeoutSeconds, until the peer's TCP stack
  /// has acknowledged every byte and the end, discarding what the peer sends meanwhile.
  /// Closing a socket that holds unread bytes from its peer resets the connection and
  /// throws away what was written but not yet sent; after this nothing is lost. False
  /// when the time ran out; true at once for streams that are not TCP.
  virtual bool finishWriting(double /*timeoutSeconds*/) { return true; }
  virtual int fileDescriptor() const { return -1; }
  /// The descriptor (or peer) this stream reads or writes, for messages.
  virtual std::string name() const { return "stream"; }
};

/// Datagrams of size bytes that one segmented send (Stream::writeEach) carries: at most
/// 64 (UDP_MAX_SEGMENTS of older kernels) and 64 KiB less the headers.
size_t datagramsPerSegmentedSend(size_t size);

/// Opens for reading: udp binds HOST:PORT (port 0: any free port, see
/// fileDescriptor()/getsockname; a 16 MiB receive buffer; a port already bound is an
/// error), tcp listens on HOST:PORT and accepts one connection, file opens PATH.
/// Throws StreamError naming the descriptor (e.g. "udp:...: cannot bind: address
/// already in use (port in use)").
std::unique_ptr<Stream> openStreamForReading(const StreamDescriptor& descriptor);
/// Opens for writing: udp sends to HOST:PORT (datagrams nobody receives are lost
/// silently, as on a network), tcp connects to HOST:PORT, file creates PATH.
/// Writing to a TCP peer that has gone raises StreamError (no SIGPIPE).
std::unique_ptr<Stream> openStreamForWriting(const StreamDescriptor& descriptor);

/// A TCP server socket that accepts many connections.
class TcpListener {
 public:
  TcpListener(const std::string& host, uint16_t port);
  ~TcpListener();
  TcpListener(const TcpListener&) = delete;
  TcpListener& operator=(const TcpListener&) = delete;
  /// Blocks until a connection arrives; nullptr once shutdown() was called.
  std::unique_ptr<Stream> accept();
  void shutdown();
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

/// Connects to a TCP server, retrying until timeoutSeconds; throws StreamError.
std::unique_ptr<Stream> connectTcp(const std::string& host, uint16_t port,
                                   double timeoutSeconds = 0);

}  // namespace rtcp
