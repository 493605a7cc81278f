#include "ConsoleServer.h"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <list>
#include <set>
#include <stdexcept>
#include <thread>

namespace rtcp::console {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::chrono::milliseconds toDuration(double seconds) {
  return std::chrono::milliseconds(int64_t(seconds * 1000));
}

}  // namespace

ConsoleAddress ConsoleAddress::parse(const std::string& text) {
  ConsoleAddress address;
  std::string port = text;
  if (const size_t colon = text.rfind(':'); colon != std::string::npos) {
    address.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (address.host.size() >= 2 && address.host.front() == '[' && address.host.back() == ']')
      address.host = address.host.substr(1, address.host.size() - 2);
  }
  const bool digits = !port.empty() && port.size() <= 5 &&
                      port.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoul(port) > 65535 || address.host.empty())
    throw std::invalid_argument("console address '" + text +
                                "' is not [HOST:]PORT (PORT 0..65535, 0: any free port)");
  address.port = uint16_t(std::stoul(port));
  return address;
}

class Session;

struct ConsoleServer::Impl {
  Impl(const ConsoleAddress& address, Handler h, ConsoleLimits l)
      : handler(std::move(h)), limits(l), acceptor(io) {
    tcp::resolver resolver(io);
    beast::error_code error;
    const auto endpoints =
        resolver.resolve(address.host, std::to_string(address.port), tcp::resolver::passive, error);
    if (error || endpoints.empty())
      throw std::runtime_error("console: cannot listen on " + address.host + ":" +
                               std::to_string(address.port) + ": " + error.message());
    const tcp::endpoint endpoint = endpoints.begin()->endpoint();
    acceptor.open(endpoint.protocol(), error);
    if (!error) acceptor.set_option(asio::socket_base::reuse_address(true), error);
    if (!error) acceptor.bind(endpoint, error);
    if (!error) acceptor.listen(asio::socket_base::max_listen_connections, error);
    if (error)
      throw std::runtime_error("console: cannot listen on " + address.host + ":" +
                               std::to_string(address.port) + ": " + error.message());
    bound = acceptor.local_endpoint();
    loopbackOnly = bound.address().is_loopback();
    const std::string port = std::to_string(bound.port());
    for (const char* name : {"127.0.0.1", "localhost", "[::1]"})
      allowedHosts.insert(std::string(name) + ":" + port);
    accept();
    thread = std::thread([this] { io.run(); });
    pthread_setname_np(thread.native_handle(), "rtcp-console");  // in top, /proc/PID/task
  }

  ~Impl() {
    io.stop();
    if (thread.joinable()) thread.join();
  }

  void accept();
  std::optional<http::response<http::string_body>> refuse(
      const http::request<http::string_body>& request);

  Handler handler;
  ConsoleLimits limits;
  asio::io_context io{1};
  tcp::acceptor acceptor;
  tcp::endpoint bound;
  bool loopbackOnly = true;
  std::set<std::string> allowedHosts;
  /// The connections open, oldest first (the io thread alone touches it).
  std::list<Session*> sessions;
  std::atomic<uint64_t> connections{0}, dropped{0}, requests{0}, bad{0}, timedOut{0};
  std::thread thread;
};

/// One connection: requests read one at a time, each within the limits, each answered.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ConsoleServer::Impl& server)
      : stream_(std::move(socket)), server_(server) {
    server_.sessions.push_back(this);
    entry_ = std::prev(server_.sessions.end());
  }
  ~Session() { server_.sessions.erase(entry_); }

  /// Still waiting for (the rest of) a request: a connection that may be closed to make room.
  bool reading() const { return reading_; }
  /// Closes the connection: its pending read ends, and with it the session.
  void evict() {
    reading_ = false;
    evicted_ = true;
    beast::error_code ignored;
    stream_.socket().close(ignored);
  }
  bool evicted() const { return evicted_; }

  void read() {
    reading_ = true;
    parser_.emplace();
    parser_->header_limit(server_.limits.headerBytes);
    parser_->body_limit(server_.limits.bodyBytes);
    stream_.expires_after(toDuration(server_.limits.requestSeconds));
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code error, size_t) { self->onRead(error); });
  }

 private:
  void onRead(beast::error_code error) {
    reading_ = false;
    if (evicted_) return;  // closed to make room
    if (error == beast::error::timeout) {
      ++server_.timedOut;
      return;  // dropped
    }
    if (error == http::error::end_of_stream || error == asio::error::eof ||
        error == asio::error::connection_reset || error == asio::error::operation_aborted)
      return;
    if (error) {  // malformed or too large: answered, then closed
      ++server_.bad;
      const bool header = error == http::error::header_limit;
      answer(makeResponse(
                 header ? http::status::request_header_fields_too_large : http::status::bad_request,
                 "text/plain; charset=utf-8",
                 header ? "request header too large\n" : "bad request\n", 11, false),
             true);
      return;
    }
    const http::request<http::string_body>& request = parser_->get();
    ++served_;
    const bool close = !request.keep_alive() || served_ >= server_.limits.requestsPerConnection;
    answer(respond(request), close);
  }

  http::response<http::string_body> makeResponse(http::status status,
                                                 const std::string& contentType, std::string body,
                                                 unsigned version, bool keepAlive) {
    http::response<http::string_body> response{status, version};
    response.set(http::field::server, "rtcp-console");
    response.set(http::field::content_type, contentType);
    response.set(http::field::cache_control, "no-store");
    response.set("X-Content-Type-Options", "nosniff");
    response.set("Content-Security-Policy",
                 "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                 "img-src 'self'; connect-src 'self'; frame-ancestors 'none'");
    response.keep_alive(keepAlive);
    response.body() = std::move(body);
    response.prepare_payload();
    return response;
  }

  http::response<http::string_body> respond(const http::request<http::string_body>& request) {
    const unsigned version = request.version();
    const bool keepAlive = request.keep_alive();
    if (request.method() != http::verb::get && request.method() != http::verb::head) {
      ++server_.bad;
      auto response =
          makeResponse(http::status::method_not_allowed, "text/plain; charset=utf-8",
                       "the console is read-only: GET and HEAD only\n", version, keepAlive);
      response.set(http::field::allow, "GET, HEAD");
      return response;
    }
    if (server_.loopbackOnly &&
        !server_.allowedHosts.count(std::string(request[http::field::host]))) {
      ++server_.bad;
      return makeResponse(http::status::forbidden, "text/plain; charset=utf-8",
                          "the console answers requests for 127.0.0.1 or localhost only\n", version,
                          keepAlive);
    }
    std::string path(request.target());
    if (const size_t query = path.find('?'); query != std::string::npos) path.resize(query);
    std::optional<ConsoleResponse> found;
    try {
      found = server_.handler(path);
    } catch (const std::exception& e) {
      found = ConsoleResponse{500, "text/plain; charset=utf-8", std::string(e.what()) + "\n"};
    }
    if (!found) found = ConsoleResponse{404, "text/plain; charset=utf-8", "not found\n"};
    auto response = makeResponse(http::status(found->status), found->contentType,
                                 std::move(found->body), version, keepAlive);
    if (request.method() == http::verb::head) {
      const size_t size = response.body().size();
      response.body().clear();
      response.content_length(size);
    }
    return response;
  }

  void answer(http::response<http::string_body> response, bool close) {
    ++server_.requests;
    response_ = std::move(response);
    stream_.expires_after(toDuration(server_.limits.requestSeconds));
    http::async_write(stream_, response_,
                      [self = shared_from_this(), close](beast::error_code error, size_t) {
                        if (error == beast::error::timeout) ++self->server_.timedOut;
                        if (error || close) {
                          beast::error_code ignored;
                          self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
                          return;
                        }
                        self->read();
                      });
  }

  beast::tcp_stream stream_;
  ConsoleServer::Impl& server_;
  std::list<Session*>::iterator entry_;
  bool reading_ = false;
  bool evicted_ = false;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  int served_ = 0;
};

void ConsoleServer::Impl::accept() {
  acceptor.async_accept([this](beast::error_code error, tcp::socket socket) {
    if (error == asio::error::operation_aborted) return;
    if (!error) {
      // Full: the oldest connection still waiting for its request makes room (a client
      // that holds connections open without asking cannot starve one that asks), or else
      // this one is closed at once.
      auto open = [this] {
        return std::count_if(sessions.begin(), sessions.end(),
                             [](const Session* s) { return !s->evicted(); });
      };
      if (open() >= limits.maxConnections) {
        ++dropped;
        const auto idle = std::find_if(sessions.begin(), sessions.end(),
                                       [](const Session* s) { return s->reading(); });
        if (idle != sessions.end()) (*idle)->evict();
      }
      if (open() < limits.maxConnections) {
        ++connections;
        std::make_shared<Session>(std::move(socket), *this)->read();
      }
    } else if (error == asio::error::no_descriptors) {
      // Out of descriptors (the process's limit): wait for some to close rather than spin.
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    accept();
  });
}

ConsoleServer::ConsoleServer(const ConsoleAddress& address, Handler handler, ConsoleLimits limits)
    : impl_(std::make_unique<Impl>(address, std::move(handler), limits)) {}

ConsoleServer::~ConsoleServer() = default;

uint16_t ConsoleServer::port() const { return impl_->bound.port(); }

std::string ConsoleServer::url() const {
  const asio::ip::address address = impl_->bound.address();
  std::string host = address.to_string();
  if (address.is_unspecified()) {
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    host = name;
  } else if (address.is_v6()) {
    host = "[" + host + "]";
  }
  return "http://" + host + ":" + std::to_string(port()) + "/";
}

std::string pageWithDocument(const std::string& page, std::string json) {
  for (size_t at = json.find("</"); at != std::string::npos; at = json.find("</", at + 3))
    json.replace(at, 2, "<\\/");
  std::string filled = page;
  const std::string marker = "/*RTCP_STATUS*/null";
  if (const size_t at = filled.find(marker); at != std::string::npos)
    filled.replace(at, marker.size(), json);
  return filled;
}

ConsoleServer::Statistics ConsoleServer::statistics() const {
  return {impl_->connections.load(), impl_->dropped.load(), impl_->requests.load(),
          impl_->bad.load(), impl_->timedOut.load()};
}

}  // namespace rtcp::console
