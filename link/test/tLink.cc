// The FCNP link: size negotiation, inline heads, many cores at once, unaligned buffers,
// and a compute rank that disconnects in the middle of a transfer.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>
#include <vector>

#include "LinkClient.h"
#include "LinkServer.h"
#include "rtcp/Handshake.h"

using namespace rtcp::ion;

namespace {

/// The handshake both sides of the tests' links share.
const rtcp::Handshake& testHandshake() {
  static const rtcp::Handshake handshake(rtcp::ObservationSecret::generate(), 1,
                                         rtcp::ConnectionPurpose::kLink);
  return handshake;
}

/// Byte i of the data of (rank, core, transfer).
uint8_t pattern(int rank, int core, int transfer, size_t i) {
  return uint8_t(i * 131 + rank * 17 + core * 7 + transfer * 3 + (i >> 11));
}

/// A service that posts a receive of `writeSize` bytes and a send of `readSize` bytes of
/// the pattern, echoes heads back reversed, and records what arrived.
class TestService : public LinkService {
 public:
  size_t writeSize = 1 << 20;
  size_t readSize = 1 << 20;
  bool capToRequest = false;  ///< post no more than requested (saves big allocations)
  std::atomic<int> badWrites{0}, goodWrites{0};
  std::atomic<int> closed{0};
  std::vector<uint8_t> lastHead;
  size_t lastAgreed = 0;
  std::mutex mutex;

  LinkPosting post(const LinkRequest& r) override {
    LinkPosting p;
    p.head.assign(r.head.rbegin(), r.head.rend());
    const int transfer = r.head.empty() ? 0 : r.head[0];
    if (r.op == LinkOp::kWrite) {
      auto buffer = std::make_shared<std::vector<uint8_t>>(
          capToRequest ? std::min<size_t>(writeSize, r.size) : writeSize);
      p.data = {{buffer->data(), buffer->size()}};
      p.done = [this, buffer, r, transfer,
                head = std::vector<uint8_t>(r.head.begin(), r.head.end())](size_t agreed) {
        bool ok = true;
        for (size_t i = 0; i < agreed; ++i)
          ok = ok && (*buffer)[i] == pattern(r.rank, r.core, transfer, i);
        ++(ok ? goodWrites : badWrites);
        std::lock_guard lock(mutex);
        lastHead = head;
        lastAgreed = agreed;
      };
    } else {
      auto buffer = std::make_shared<std::vector<uint8_t>>(readSize);
      for (size_t i = 0; i < readSize; ++i) (*buffer)[i] = pattern(r.rank, r.core, transfer, i);
      p.data = {{buffer->data(), buffer->size()}};
      p.done = [buffer](size_t) {};
    }
    return p;
  }
  void connectionClosed(uint64_t) override { ++closed; }
};

std::vector<uint8_t> patternData(int rank, int core, int transfer, size_t size) {
  std::vector<uint8_t> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = pattern(rank, core, transfer, i);
  return data;
}

bool matches(const uint8_t* data, size_t size, int rank, int core, int transfer) {
  for (size_t i = 0; i < size; ++i)
    if (data[i] != pattern(rank, core, transfer, i)) return false;
  return true;
}

LinkEndpoint tcpAnyPort() { return LinkEndpoint::parse("tcp:127.0.0.1:0"); }

}  // namespace

class LinkTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(LinkTest);
  CPPUNIT_TEST(testEndpoints);
  CPPUNIT_TEST(testWriteSizeIsTheSmaller);
  CPPUNIT_TEST(testReadSizeIsTheSmaller);
  CPPUNIT_TEST(testHeads);
  CPPUNIT_TEST(testUnalignedBuffers);
  CPPUNIT_TEST(testManyCoresAtOnce);
  CPPUNIT_TEST(testUnixTransport);
  CPPUNIT_TEST(testDisconnectMidTransfer);
  CPPUNIT_TEST(testRefusal);
  CPPUNIT_TEST(testConnectionWithoutTheSecret);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEndpoints() {
    const LinkEndpoint t = LinkEndpoint::parse("tcp:node1:4200");
    CPPUNIT_ASSERT(t.kind == LinkEndpoint::Kind::kTcp);
    CPPUNIT_ASSERT_EQUAL(std::string("node1"), t.host);
    CPPUNIT_ASSERT_EQUAL(uint16_t(4200), t.port);
    CPPUNIT_ASSERT_EQUAL(std::string("/tmp/x.sock"), LinkEndpoint::parse("unix:/tmp/x.sock").path);
    CPPUNIT_ASSERT_THROW(LinkEndpoint::parse("udp:a:1"), LinkError);
    CPPUNIT_ASSERT_THROW(LinkEndpoint::parse("tcp:a:70000"), LinkError);
    CPPUNIT_ASSERT_THROW(LinkEndpoint::parse("tcp:a"), LinkError);
  }

  void testWriteSizeIsTheSmaller() {
    TestService service;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    LinkClient client(server.endpoint(), 3, 1, testHandshake());
    const uint8_t head[] = {5};
    // Compute side offers more than ionproc posted: ionproc's size wins.
    service.writeSize = 1000;
    auto data = patternData(3, 1, 5, 5000);
    CPPUNIT_ASSERT_EQUAL(size_t(1000), client.write(head, data.data(), data.size()));
    // ionproc posted more than offered: the compute side's size wins.
    service.writeSize = 1 << 20;
    CPPUNIT_ASSERT_EQUAL(size_t(5000), client.write(head, data.data(), data.size()));
    // The link keeps working after either (no bytes left over in the stream).
    CPPUNIT_ASSERT_EQUAL(size_t(0), client.write(head, data.data(), 0));
    server.stop();
    CPPUNIT_ASSERT_EQUAL(3, service.goodWrites.load());
    CPPUNIT_ASSERT_EQUAL(0, service.badWrites.load());
  }

  void testReadSizeIsTheSmaller() {
    TestService service;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    LinkClient client(server.endpoint(), 0, 0, testHandshake());
    const uint8_t head[] = {9};
    std::vector<uint8_t> buffer(10000, 0xEE);
    service.readSize = 3000;
    CPPUNIT_ASSERT_EQUAL(size_t(3000), client.read(head, buffer.data(), buffer.size()));
    CPPUNIT_ASSERT(matches(buffer.data(), 3000, 0, 0, 9));
    CPPUNIT_ASSERT_EQUAL(uint8_t(0xEE), buffer[3000]);  // nothing beyond the agreed size
    service.readSize = 1 << 20;
    CPPUNIT_ASSERT_EQUAL(size_t(10000), client.read(head, buffer.data(), buffer.size()));
    CPPUNIT_ASSERT(matches(buffer.data(), 10000, 0, 0, 9));
  }

  void testHeads() {
    TestService service;
    service.writeSize = 64;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    LinkClient client(server.endpoint(), 1, 2, testHandshake());
    std::vector<uint8_t> head(kMaxHeadSize);
    std::iota(head.begin(), head.end(), uint8_t(1));
    std::vector<uint8_t> ackHead;
    auto data = patternData(1, 2, 1, 64);
    client.write(head, data.data(), data.size(), &ackHead);
    CPPUNIT_ASSERT(std::equal(head.rbegin(), head.rend(), ackHead.begin(), ackHead.end()));
    std::vector<uint8_t> tooLong(kMaxHeadSize + 1);
    CPPUNIT_ASSERT_THROW(client.write(tooLong, data.data(), 1), LinkError);
    server.stop();  // the service has seen everything
    CPPUNIT_ASSERT(service.lastHead == head);
  }

  void testUnalignedBuffers() {
    TestService service;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    LinkClient client(server.endpoint(), 2, 0, testHandshake());
    std::vector<uint8_t> storage(300001 + 64);
    for (size_t offset : {1, 3, 7, 33}) {
      const uint8_t head[] = {uint8_t(offset)};
      const size_t size = 300001 - offset;
      uint8_t* unaligned = storage.data() + offset;
      for (size_t i = 0; i < size; ++i) unaligned[i] = pattern(2, 0, int(offset), i);
      CPPUNIT_ASSERT_EQUAL(size, client.write(head, unaligned, size));
      std::memset(storage.data(), 0, storage.size());
      CPPUNIT_ASSERT_EQUAL(size, client.read(head, unaligned, size));
      CPPUNIT_ASSERT(matches(unaligned, size, 2, 0, int(offset)));
      CPPUNIT_ASSERT_EQUAL(uint8_t(0), storage[offset - 1]);
    }
    // Gathered from several unaligned pieces.
    const auto whole = patternData(2, 0, 50, 1000);
    const iovec parts[3] = {{const_cast<uint8_t*>(whole.data()), 3},
                            {const_cast<uint8_t*>(whole.data() + 3), 500},
                            {const_cast<uint8_t*>(whole.data() + 503), 497}};
    const uint8_t head[] = {50};
    CPPUNIT_ASSERT_EQUAL(size_t(1000), client.write(head, parts));
    server.stop();
    CPPUNIT_ASSERT_EQUAL(0, service.badWrites.load());
    CPPUNIT_ASSERT_EQUAL(5, service.goodWrites.load());
  }

  void testManyCoresAtOnce() {
    TestService service;
    service.writeSize = service.readSize = 256 << 10;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    constexpr int kRanks = 2, kCores = 4, kTransfers = 10;
    std::atomic<int> goodReads{0}, failures{0};
    std::vector<std::thread> cores;
    for (int rank = 0; rank < kRanks; ++rank)
      for (int core = 0; core < kCores; ++core)
        cores.emplace_back([&, rank, core] {
          try {
            LinkClient client(server.endpoint(), rank, core, testHandshake());
            std::vector<uint8_t> in(256 << 10);
            for (int t = 0; t < kTransfers; ++t) {
              const uint8_t head[] = {uint8_t(t)};
              const auto out = patternData(rank, core, t, 256 << 10);
              client.write(head, out.data(), out.size());
              client.read(head, in.data(), in.size());
              if (matches(in.data(), in.size(), rank, core, t)) ++goodReads;
            }
          } catch (const std::exception&) {
            ++failures;
          }
        });
    for (auto& t : cores) t.join();
    server.stop();
    CPPUNIT_ASSERT_EQUAL(0, failures.load());
    CPPUNIT_ASSERT_EQUAL(kRanks * kCores * kTransfers, goodReads.load());
    CPPUNIT_ASSERT_EQUAL(kRanks * kCores * kTransfers, service.goodWrites.load());
    const auto s = server.statistics();
    CPPUNIT_ASSERT_EQUAL(uint64_t(kRanks * kCores * kTransfers), s.reads);
    CPPUNIT_ASSERT_EQUAL(uint64_t(kRanks * kCores * kTransfers) * (256 << 10), s.bytesWritten);
  }

  void testUnixTransport() {
    const std::string path = (std::filesystem::temp_directory_path() /
                              ("rtcp-link-test-" + std::to_string(getpid()) + ".sock"))
                                 .string();
    TestService service;
    {
      LinkServer server(LinkEndpoint::parse("unix:" + path), service, testHandshake());
      {
        LinkClient client(server.endpoint(), 0, 0, testHandshake());
        const uint8_t head[] = {4};
        auto data = patternData(0, 0, 4, 1 << 20);
        CPPUNIT_ASSERT_EQUAL(size_t(1 << 20), client.write(head, data.data(), data.size()));
        std::vector<uint8_t> in(1 << 20);
        CPPUNIT_ASSERT_EQUAL(size_t(1 << 20), client.read(head, in.data(), in.size()));
        CPPUNIT_ASSERT(matches(in.data(), in.size(), 0, 0, 4));
        CPPUNIT_ASSERT_EQUAL(uint64_t(1), server.statistics().connectionsOpen);
      }
      // The rank hung up (ionproc waits for that before it ends).
      for (int i = 0; i < 200 && server.statistics().connectionsOpen != 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      CPPUNIT_ASSERT_EQUAL(uint64_t(0), server.statistics().connectionsOpen);
      CPPUNIT_ASSERT_EQUAL(uint64_t(1), server.statistics().connections);
    }
    CPPUNIT_ASSERT_EQUAL(1, service.goodWrites.load());
    CPPUNIT_ASSERT(!std::filesystem::exists(path));  // the listener cleans up
  }

  void testDisconnectMidTransfer() {
    TestService service;
    service.writeSize = 64 << 20;
    service.capToRequest = true;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    std::atomic<bool> stop{false};
    std::atomic<int> others{0}, failures{0};
    // Other ranks keep transferring all along.
    std::vector<std::thread> cores;
    for (int rank = 1; rank <= 2; ++rank)
      cores.emplace_back([&, rank] {
        try {
          LinkClient client(server.endpoint(), rank, 0, testHandshake());
          std::vector<uint8_t> in(128 << 10);
          for (int t = 0; !stop || t < 20; ++t) {
            const uint8_t head[] = {uint8_t(t)};
            const auto out = patternData(rank, 0, t, 128 << 10);
            client.write(head, out.data(), out.size());
            client.read(head, in.data(), in.size());
            if (!matches(in.data(), in.size(), rank, 0, t)) ++failures;
            ++others;
          }
        } catch (const std::exception&) {
          ++failures;
        }
      });
    {
      // Rank 0 offers 64 MiB, sends a quarter of it, and dies.
      std::unique_ptr<LinkSocket> dying = connectLink(server.endpoint());
      testHandshake().proveToPeer(dying->fileDescriptor());
      const uint8_t head[] = {1};
      std::vector<uint8_t> data = patternData(0, 0, 1, 16 << 20);
      RequestHeader request;
      request.op = uint8_t(LinkOp::kWrite);
      request.headSize = 1;
      request.size = 64 << 20;
      const iovec parts[2] = {{&request, sizeof request}, {const_cast<uint8_t*>(head), 1}};
      LinkSocket& socket = *dying;
      socket.send(parts);
      AckHeader ack;
      socket.receive(&ack, sizeof ack);
      uint8_t ackHead[1];
      socket.receive(ackHead, ack.headSize);
      CPPUNIT_ASSERT_EQUAL(uint64_t(64 << 20), ack.size);
      socket.send(data.data(), data.size());
      socket.shutdown();
    }
    for (int i = 0; i < 200 && server.statistics().connectionsLost == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const int before = others.load();
    stop = true;
    for (auto& t : cores) t.join();
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), server.statistics().connectionsLost);
    CPPUNIT_ASSERT_EQUAL(0, failures.load());
    CPPUNIT_ASSERT(others.load() >= before);
    CPPUNIT_ASSERT(others.load() >= 40);
    // The link is free again: a new rank 0 connects and transfers.
    service.writeSize = 1000;
    LinkClient again(server.endpoint(), 0, 0, testHandshake());
    const uint8_t head[] = {2};
    const auto data = patternData(0, 0, 2, 1000);
    CPPUNIT_ASSERT_EQUAL(size_t(1000), again.write(head, data.data(), data.size()));
    server.stop();
    CPPUNIT_ASSERT_EQUAL(0, service.badWrites.load());
  }

  void testRefusal() {
    class Refusing : public LinkService {
      LinkPosting post(const LinkRequest&) override {
        LinkPosting p;
        p.refused = true;
        const std::string why = "not today";
        p.head.assign(why.begin(), why.end());
        return p;
      }
    } service;
    LinkServer server(tcpAnyPort(), service, testHandshake());
    LinkClient client(server.endpoint(), 0, 0, testHandshake());
    uint8_t buffer[16];
    try {
      client.read({}, buffer, sizeof buffer);
      CPPUNIT_FAIL("a refused read must throw");
    } catch (const LinkError& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find("not today") != std::string::npos);
    }
  }

  /// A rank with another secret, and a raw request without the handshake, over TCP and a
  /// unix socket (mode 0600): refused before any request is served, counted; a rank with
  /// the secret is served afterwards.
  void testConnectionWithoutTheSecret() {
    const std::string path = "/tmp/rtcp-link-test-" + std::to_string(::getpid());
    for (const LinkEndpoint& endpoint : {tcpAnyPort(), LinkEndpoint::parse("unix:" + path)}) {
      TestService service;
      LinkServer server(endpoint, service, testHandshake());
      if (endpoint.kind == LinkEndpoint::Kind::kUnix) {
        struct stat status {};
        CPPUNIT_ASSERT_EQUAL(0, ::stat(path.c_str(), &status));
        CPPUNIT_ASSERT_EQUAL(0600u, unsigned(status.st_mode & 0777));
      }
      const rtcp::Handshake other(rtcp::ObservationSecret::generate(), 1,
                                  rtcp::ConnectionPurpose::kLink);
      try {
        LinkClient intruder(server.endpoint(), 0, 0, other);
        CPPUNIT_FAIL("a rank without the secret must be refused");
      } catch (const LinkError& e) {
        CPPUNIT_ASSERT_MESSAGE(e.what(),
                               std::string(e.what()).find("refused") != std::string::npos);
      }
      {  // a request straight away
        std::unique_ptr<LinkSocket> raw = connectLink(server.endpoint(), 5);
        const uint8_t request[64] = {'F'};
        raw->send(request, sizeof request);
        uint8_t answer[128];
        try {
          raw->receive(answer, sizeof answer);  // the challenge and a verdict, then the end
        } catch (const LinkError&) {
        }
      }
      for (int i = 0; i < 500 && server.statistics().connectionsRefused < 2; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      CPPUNIT_ASSERT_EQUAL(uint64_t(2), server.statistics().connectionsRefused);
      LinkClient rank(server.endpoint(), 0, 0, testHandshake());
      uint8_t buffer[16];
      CPPUNIT_ASSERT_EQUAL(sizeof buffer, rank.read({}, buffer, sizeof buffer));
      CPPUNIT_ASSERT_EQUAL(uint64_t(2), server.statistics().connectionsRefused);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(LinkTest);
