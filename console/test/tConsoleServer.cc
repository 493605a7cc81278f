// The console server (ConsoleServer.h): pages and JSON served, nothing but GET and HEAD,
// its address parsed; and hostile clients (connections left idle far beyond its limit, a
// header that never ends, one that trickles in, garbage) are dropped or answered while a
// good request is still answered at once.
#include <arpa/inet.h>
#include <cppunit/extensions/HelperMacros.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "ConsoleServer.h"

namespace rtcp::console::test {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// A connected TCP socket to 127.0.0.1:port (blocking), -1 when refused.
int connectTo(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// Everything the server sends until it closes the connection or timeoutSeconds pass.
std::string readAll(int fd, double timeoutSeconds) {
  std::string text;
  const auto start = Clock::now();
  char buffer[4096];
  while (secondsSince(start) < timeoutSeconds) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 50) <= 0) continue;
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    text.append(buffer, size_t(n));
  }
  return text;
}

/// Sends a request and returns the whole response (the request asks to close).
std::string exchange(uint16_t port, const std::string& request, double timeoutSeconds = 3) {
  const int fd = connectTo(port);
  if (fd < 0) return "";
  CPPUNIT_ASSERT(write(fd, request.data(), request.size()) == ssize_t(request.size()));
  std::string response = readAll(fd, timeoutSeconds);
  close(fd);
  return response;
}

std::string get(uint16_t port, const std::string& path, const std::string& host = "127.0.0.1") {
  return exchange(port, "GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + std::to_string(port) +
                            "\r\nConnection: close\r\n\r\n");
}

std::string statusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

}  // namespace

class ConsoleServerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ConsoleServerTest);
  CPPUNIT_TEST(testAddresses);
  CPPUNIT_TEST(testServesPagesAndJson);
  CPPUNIT_TEST(testChangesNothing);
  CPPUNIT_TEST(testHostileClients);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    server_ = std::make_unique<ConsoleServer>(
        ConsoleAddress::parse("0"),
        [this](const std::string& path) -> std::optional<ConsoleResponse> {
          if (path == "/")
            return ConsoleResponse{200, "text/html; charset=utf-8", observationPage()};
          if (path == "/status.json")
            return ConsoleResponse{200, "application/json", *document_.get()};
          return std::nullopt;
        },
        ConsoleLimits{16, 1.0, 8192, 1024, 100});
  }
  void tearDown() override { server_.reset(); }

  void testAddresses() {
    const ConsoleAddress local = ConsoleAddress::parse("8080");
    CPPUNIT_ASSERT_EQUAL(std::string("127.0.0.1"), local.host);  // this machine only
    CPPUNIT_ASSERT_EQUAL(uint16_t(8080), local.port);
    CPPUNIT_ASSERT_EQUAL(std::string("0.0.0.0"), ConsoleAddress::parse("0.0.0.0:80").host);
    CPPUNIT_ASSERT_EQUAL(std::string("::1"), ConsoleAddress::parse("[::1]:0").host);
    for (const char* bad : {"", "http", "65536", "host:", ":80", "1:2:x"})
      CPPUNIT_ASSERT_THROW_MESSAGE(bad, ConsoleAddress::parse(bad), std::invalid_argument);
    CPPUNIT_ASSERT(server_->url().starts_with("http://127.0.0.1:"));
  }

  void testServesPagesAndJson() {
    document_.set("{\"stations\": [\"CS001\"]}");
    const std::string page = get(server_->port(), "/");
    CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 200 OK"), statusLine(page));
    CPPUNIT_ASSERT(page.find("<title>rtcp console</title>") != std::string::npos);
    CPPUNIT_ASSERT(page.find("Cache-Control: no-store") != std::string::npos);
    const std::string json = get(server_->port(), "/status.json?t=1");
    CPPUNIT_ASSERT(json.ends_with("\r\n\r\n{\"stations\": [\"CS001\"]}"));
    CPPUNIT_ASSERT(json.find("Content-Type: application/json") != std::string::npos);
    document_.set("{}");
    CPPUNIT_ASSERT(get(server_->port(), "/status.json").ends_with("\r\n\r\n{}"));
    CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 404 Not Found"),
                         statusLine(get(server_->port(), "/../etc/passwd")));
    // Keep-alive: two requests on one connection.
    const std::string twice =
        exchange(server_->port(),
                 "GET /status.json HTTP/1.1\r\nHost: localhost:" + std::to_string(server_->port()) +
                     "\r\n\r\nGET /status.json HTTP/1.1\r\nHost: localhost:" +
                     std::to_string(server_->port()) + "\r\nConnection: close\r\n\r\n");
    CPPUNIT_ASSERT_EQUAL(size_t(2), count(twice, "HTTP/1.1 200 OK"));
  }

  void testChangesNothing() {
    const std::string port = std::to_string(server_->port());
    for (const char* method : {"POST", "PUT", "DELETE", "PATCH"}) {
      const std::string response = exchange(
          server_->port(), std::string(method) +
                               " /status.json HTTP/1.1\r\nHost: "
                               "127.0.0.1:" +
                               port + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
      CPPUNIT_ASSERT_EQUAL_MESSAGE(method, std::string("HTTP/1.1 405 Method Not Allowed"),
                                   statusLine(response));
    }
    // A page of another origin that reached the console by DNS rebinding names its own host.
    CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 403 Forbidden"),
                         statusLine(get(server_->port(), "/status.json", "attacker.example")));
  }

  void testHostileClients() {
    const uint16_t port = server_->port();
    // Far more idle connections than the server keeps open (16): the oldest make room for
    // the newest, and a good request is answered at once.
    std::vector<int> idle;
    for (int i = 0; i < 400; ++i)
      if (const int fd = connectTo(port); fd >= 0) idle.push_back(fd);
    CPPUNIT_ASSERT(idle.size() >= 300);
    const auto start = Clock::now();
    std::string good;
    while (good.empty() && secondsSince(start) < 3) good = get(port, "/status.json");
    CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 200 OK"), statusLine(good));
    CPPUNIT_ASSERT_MESSAGE(std::to_string(secondsSince(start)), secondsSince(start) < 0.5);
    CPPUNIT_ASSERT(server_->statistics().dropped >= 300);
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));  // the rest timed out
    CPPUNIT_ASSERT(server_->statistics().timedOut > 0);
    for (const int fd : idle) close(fd);

    // A header that never ends: answered 431 and closed long before a gigabyte is sent.
    const int huge = connectTo(port);
    std::string request = "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                          "\r\nX-Huge: " + std::string(65536, 'a');
    size_t sent = 0;
    for (int k = 0; k < 16384 && sent < (size_t(1) << 30); ++k) {  // up to 1 GB
      const ssize_t n = send(huge, request.data(), request.size(), MSG_NOSIGNAL);
      if (n <= 0) break;
      sent += size_t(n);
      request.assign(65536, 'a');
    }
    CPPUNIT_ASSERT_MESSAGE(std::to_string(sent) + " bytes taken", sent < (size_t(64) << 20));
    close(huge);
    const uint64_t badBefore = server_->statistics().bad;
    CPPUNIT_ASSERT(badBefore >= 1);
    // Garbage (a TLS hello): answered 400 and closed.
    const std::string garbage =
        exchange(port, std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 15));
    CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 400 Bad Request"), statusLine(garbage));
    // A request that trickles in, a byte every 0.2 s: dropped after the server's second.
    const int slow = connectTo(port);
    const auto slowStart = Clock::now();
    std::string trickled;
    for (const char c : std::string("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n\r\n")) {
      if (send(slow, &c, 1, MSG_NOSIGNAL) <= 0) break;
      pollfd p{slow, POLLIN, 0};
      if (poll(&p, 1, 200) > 0) break;  // closed (or answered): no more
    }
    const double slowSeconds = secondsSince(slowStart);
    close(slow);
    CPPUNIT_ASSERT_MESSAGE(std::to_string(slowSeconds), slowSeconds < 2);
    CPPUNIT_ASSERT(server_->statistics().bad > badBefore);
    CPPUNIT_ASSERT_EQUAL(std::string("HTTP/1.1 200 OK"), statusLine(get(port, "/")));
  }

 private:
  static size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  ConsoleDocument document_;
  std::unique_ptr<ConsoleServer> server_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(ConsoleServerTest);

}  // namespace rtcp::console::test
