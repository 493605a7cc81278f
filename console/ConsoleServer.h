#pragma once
/// \file ConsoleServer.h
/// The operator's console: a small read-only HTTP/1.1 server (Boost.Beast) for a web page
/// and the JSON it shows, served by observe (the observation) and nightly (the schedule).
///
/// One thread runs every connection asynchronously (Boost.Asio), so that what a client does
/// costs the observation a bounded share of one core and a bounded number of descriptors:
/// - at most ConsoleLimits::maxConnections open at once; when full, the oldest connection
///   still waiting for its request is closed to make room for a new one (dropped), so that
///   connections held open without a request cannot starve a client that asks;
/// - each request must arrive whole within requestSeconds of the connection becoming ready
///   for it (a slow or idle client is dropped), each response leave within the same time;
/// - a request header over headerBytes, a body over bodyBytes or malformed HTTP is answered
///   400 (431: a header too large) and the connection closed;
/// - only GET and HEAD (405 otherwise): no endpoint changes anything;
/// - bound to a loopback address, a request whose Host header does not name a loopback
///   address (a web page of another origin reaching the console by DNS rebinding) is
///   answered 403.

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace rtcp::console {

/// `[HOST:]PORT` of --console: the host (default 127.0.0.1: this machine only) and port
/// (0: any free one).
struct ConsoleAddress {
  std::string host = "127.0.0.1";
  uint16_t port = 0;
  /// Parses "8080", "127.0.0.1:8080", "0.0.0.0:8080", "[::1]:8080", "localhost:0". Throws
  /// std::invalid_argument naming the text when it is not one.
  static ConsoleAddress parse(const std::string& text);
};

struct ConsoleLimits {
  int maxConnections = 64;    ///< open at once (then the oldest waiting one is closed)
  double requestSeconds = 2;  ///< to read one request, or to write one response
  uint32_t headerBytes = 8192;
  uint32_t bodyBytes = 1024;
  int requestsPerConnection = 100;  ///< then the connection is closed (keep-alive)
};

/// What a GET of a path returns.
struct ConsoleResponse {
  int status = 200;
  std::string contentType = "text/plain; charset=utf-8";
  std::string body;
};

/// The current text of a document, replaced whole by its writer (observe's follow loop)
/// and read by the server's thread.
class ConsoleDocument {
 public:
  explicit ConsoleDocument(std::string text = "{}")
      : text_(std::make_shared<const std::string>(std::move(text))) {}
  void set(std::string text) {
    auto next = std::make_shared<const std::string>(std::move(text));
    std::lock_guard lock(mutex_);
    text_ = std::move(next);
  }
  std::shared_ptr<const std::string> get() const {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> text_;
};

class ConsoleServer {
 public:
  /// The response to GET of a path (without its query); nullopt: 404. Called on the
  /// server's thread: it must be quick (copy a document, read a small file).
  using Handler = std::function<std::optional<ConsoleResponse>(const std::string& path)>;

  /// Listens on the address at once and serves on a thread of its own. Throws
  /// std::runtime_error naming the address when it cannot listen there.
  ConsoleServer(const ConsoleAddress& address, Handler handler, ConsoleLimits limits = {});
  ~ConsoleServer();  ///< stops serving; open connections are closed
  ConsoleServer(const ConsoleServer&) = delete;
  ConsoleServer& operator=(const ConsoleServer&) = delete;

  /// The port listened on (the one chosen, for port 0).
  uint16_t port() const;
  /// http://HOST:PORT/ (an unspecified address, 0.0.0.0 or ::, as this host's name).
  std::string url() const;

  struct Statistics {
    uint64_t connections = 0;  ///< accepted and served
    uint64_t dropped = 0;      ///< closed to make room (maxConnections were open)
    uint64_t requests = 0;     ///< answered (any status)
    uint64_t bad = 0;          ///< malformed, too large, wrong method or Host: answered 4xx
    uint64_t timedOut = 0;     ///< closed because a request or response took too long
  };
  Statistics statistics() const;

  struct Impl;  ///< the io thread, acceptor and connections (ConsoleServer.cc)

 private:
  std::unique_ptr<Impl> impl_;
};

/// The pages shipped with rtcp (console/pages/, embedded by the build).
const std::string& observationPage();
const std::string& schedulePage();
/// A page with the current JSON document in place of its `/*RTCP_STATUS*/null`, so that it
/// shows at once (and to a reader of its first DOM) before it polls; "</" in the JSON
/// escaped as "<\/" so that no text in it ends the script.
std::string pageWithDocument(const std::string& page, std::string json);

}  // namespace rtcp::console
