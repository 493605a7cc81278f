// Tests of streams: descriptors, files, UDP, TCP, listeners, shutdown.
#include <cppunit/extensions/HelperMacros.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "rtcp/Stream.h"

namespace rtcp {
namespace {

/// A fresh temporary directory, removed with its contents on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tStream-XXXXXX").string();
    CPPUNIT_ASSERT(mkdtemp(pattern.data()));
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// The local port a socket stream is bound to.
uint16_t boundPort(const Stream& stream) {
  sockaddr_in address{};
  socklen_t len = sizeof address;
  CPPUNIT_ASSERT_EQUAL(
      0, getsockname(stream.fileDescriptor(), reinterpret_cast<sockaddr*>(&address), &len));
  return ntohs(address.sin_port);
}

std::vector<uint8_t> pattern(size_t size, int seed) {
  std::vector<uint8_t> data(size);
  for (size_t i = 0; i < size; ++i) data[i] = uint8_t(i * 7 + seed);
  return data;
}

/// Asserts that parsing fails with a message naming the descriptor and the reason.
void expectBad(const std::string& text, const std::string& reason) {
  try {
    StreamDescriptor::parse(text);
    CPPUNIT_FAIL("accepted bad descriptor '" + text + "'");
  } catch (const StreamError& e) {
    const std::string message = e.what();
    CPPUNIT_ASSERT_MESSAGE(message, message.find("'" + text + "'") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(message, message.find(reason) != std::string::npos);
  }
}

}  // namespace
}  // namespace rtcp

using namespace rtcp;

class StreamTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StreamTest);
  CPPUNIT_TEST(testParseDescriptors);
  CPPUNIT_TEST(testBadDescriptors);
  CPPUNIT_TEST(testFileRoundTrip);
  CPPUNIT_TEST(testMissingFile);
  CPPUNIT_TEST(testUdpRoundTrip);
  CPPUNIT_TEST(testWriteEachSendsEachRecordAsOneDatagram);
  CPPUNIT_TEST(testWriteEachToAFileWritesTheRecordsInOrder);
  CPPUNIT_TEST(testUdpPortInUse);
  CPPUNIT_TEST(testShutdownWakesUdpReader);
  CPPUNIT_TEST(testTcpRoundTrip);
  CPPUNIT_TEST(testTcpListenerTwoConnections);
  CPPUNIT_TEST(testListenerShutdownWakesAccept);
  CPPUNIT_TEST(testTcpWriteToClosedPeer);
  CPPUNIT_TEST(testFinishWritingDeliversEverythingToASlowPeerThatReplied);
  CPPUNIT_TEST(testConnectTimesOut);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testParseDescriptors() {
    StreamDescriptor d = StreamDescriptor::parse("udp:127.0.0.1:10010");
    CPPUNIT_ASSERT(d.kind == StreamDescriptor::Kind::kUdp);
    CPPUNIT_ASSERT_EQUAL(std::string("127.0.0.1"), d.host);
    CPPUNIT_ASSERT_EQUAL(uint16_t(10010), d.port);
    CPPUNIT_ASSERT_EQUAL(std::string("udp:127.0.0.1:10010"), d.toString());
    d = StreamDescriptor::parse("tcp:localhost:4100");
    CPPUNIT_ASSERT(d.kind == StreamDescriptor::Kind::kTcp);
    CPPUNIT_ASSERT_EQUAL(std::string("localhost"), d.host);
    CPPUNIT_ASSERT_EQUAL(uint16_t(4100), d.port);
    d = StreamDescriptor::parse("file:recordings/CS001:a.rsp");
    CPPUNIT_ASSERT(d.kind == StreamDescriptor::Kind::kFile);
    CPPUNIT_ASSERT_EQUAL(std::string("recordings/CS001:a.rsp"), d.path);
    CPPUNIT_ASSERT_EQUAL(std::string("file:recordings/CS001:a.rsp"), d.toString());
    CPPUNIT_ASSERT_EQUAL(uint16_t(65535), StreamDescriptor::parse("udp:h:65535").port);
  }

  void testBadDescriptors() {
    expectBad("xyz", "expected");
    expectBad("sctp:host:1", "unknown kind");
    expectBad("udp:host", "missing port");
    expectBad("tcp:host:", "missing port");
    expectBad("udp:host:port", "not a number");
    expectBad("udp:host:-1", "not a number");
    expectBad("udp:host:65536", "out of range");
    expectBad("tcp:host:123456789012", "out of range");
    expectBad("file:", "empty path");
  }

  void testFileRoundTrip() {
    TempDir dir;
    const StreamDescriptor d = StreamDescriptor::parse("file:" + (dir.path / "data.bin").string());
    const std::vector<uint8_t> first = pattern(7824, 1), second = pattern(100000, 2);
    {
      auto out = openStreamForWriting(d);
      out->write(first.data(), first.size());
      out->write(second.data(), second.size());
    }
    CPPUNIT_ASSERT_EQUAL(uintmax_t(first.size() + second.size()),
                         std::filesystem::file_size(dir.path / "data.bin"));
    auto in = openStreamForReading(d);
    std::vector<uint8_t> a(first.size()), b(second.size());
    CPPUNIT_ASSERT(in->readExact(a.data(), a.size()));
    CPPUNIT_ASSERT(in->readExact(b.data(), b.size()));
    CPPUNIT_ASSERT(a == first && b == second);
    CPPUNIT_ASSERT(!in->readExact(a.data(), a.size()));  // clean end
    CPPUNIT_ASSERT_EQUAL(size_t(0), in->read(a.data(), a.size()));

    // An end in the middle of a record is an error.
    auto again = openStreamForReading(d);
    std::vector<uint8_t> big(first.size() + second.size() + 1);
    try {
      again->readExact(big.data(), big.size());
      CPPUNIT_FAIL("a truncated record passed");
    } catch (const StreamError& e) {
      CPPUNIT_ASSERT_MESSAGE(
          e.what(), std::string(e.what()).find(d.toString() + ": ended in the middle") == 0);
    }
  }

  void testMissingFile() {
    TempDir dir;
    const std::string path = (dir.path / "absent.rsp").string();
    try {
      openStreamForReading(StreamDescriptor::parse("file:" + path));
      CPPUNIT_FAIL("opened a missing file");
    } catch (const StreamError& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find(path) != std::string::npos);
    }
  }

  void testUdpRoundTrip() {
    auto in = openStreamForReading(StreamDescriptor::parse("udp:127.0.0.1:0"));
    const uint16_t port = boundPort(*in);
    CPPUNIT_ASSERT(port != 0);
    auto out =
        openStreamForWriting(StreamDescriptor::parse("udp:localhost:" + std::to_string(port)));
    std::vector<std::vector<uint8_t>> sent;
    for (int i = 0; i < 20; ++i) {
      sent.push_back(pattern(7824 - i, i));
      out->write(sent.back().data(), sent.back().size());
    }
    std::vector<uint8_t> buffer(9000);
    for (int i = 0; i < 20; ++i) {  // one datagram per read, in order on loopback
      const size_t n = in->read(buffer.data(), buffer.size());
      CPPUNIT_ASSERT_EQUAL(sent[i].size(), n);
      CPPUNIT_ASSERT(std::equal(sent[i].begin(), sent[i].end(), buffer.begin()));
    }
  }

  /// Records sent in segmented groups (more than one group's worth, and a remainder)
  /// reach a plain receiver as the same datagrams, whole and in order.
  void testWriteEachSendsEachRecordAsOneDatagram() {
    auto in = openStreamForReading(StreamDescriptor::parse("udp:127.0.0.1:0"));
    auto out = openStreamForWriting(
        StreamDescriptor::parse("udp:127.0.0.1:" + std::to_string(boundPort(*in))));
    for (const size_t size : {size_t(7824), size_t(400)}) {
      const size_t count = size == 400 ? 150 : 19;  // 400 B: more than 64 to a send
      std::vector<uint8_t> records(size * count);
      for (size_t i = 0; i < records.size(); ++i) records[i] = uint8_t(i / size * 31 + i);
      out->writeEach(records.data(), size, count);
      std::vector<uint8_t> buffer(70000);
      for (size_t r = 0; r < count; ++r) {
        const size_t n = in->read(buffer.data(), buffer.size());
        CPPUNIT_ASSERT_EQUAL(size, n);
        CPPUNIT_ASSERT_MESSAGE(
            "record " + std::to_string(r),
            std::equal(buffer.begin(), buffer.begin() + long(n), records.begin() + long(r * size)));
      }
    }
  }

  void testWriteEachToAFileWritesTheRecordsInOrder() {
    TempDir dir;
    const StreamDescriptor d = StreamDescriptor::parse("file:" + (dir.path / "r.rsp").string());
    const std::vector<uint8_t> records = pattern(3 * 1000, 5);
    openStreamForWriting(d)->writeEach(records.data(), 1000, 3);
    std::vector<uint8_t> back(records.size());
    CPPUNIT_ASSERT(openStreamForReading(d)->readExact(back.data(), back.size()));
    CPPUNIT_ASSERT(back == records);
  }

  void testUdpPortInUse() {
    auto first = openStreamForReading(StreamDescriptor::parse("udp:127.0.0.1:0"));
    const std::string descriptor = "udp:127.0.0.1:" + std::to_string(boundPort(*first));
    try {
      openStreamForReading(StreamDescriptor::parse(descriptor));
      CPPUNIT_FAIL("bound a port in use");
    } catch (const StreamError& e) {
      const std::string message = e.what();
      CPPUNIT_ASSERT_MESSAGE(message, message.find(descriptor) != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(message, message.find("address already in use") != std::string::npos);
    }
  }

  void testShutdownWakesUdpReader() {
    auto in = openStreamForReading(StreamDescriptor::parse("udp:127.0.0.1:0"));
    auto reader = std::async(std::launch::async, [&] {
      std::vector<uint8_t> buffer(9000);
      return in->read(buffer.data(), buffer.size());
    });
    CPPUNIT_ASSERT(reader.wait_for(std::chrono::milliseconds(200)) == std::future_status::timeout);
    in->shutdown();
    CPPUNIT_ASSERT(reader.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CPPUNIT_ASSERT_EQUAL(size_t(0), reader.get());
  }

  void testTcpRoundTrip() {
    // A free port: a listener on port 0 tells us one, then lets go of it.
    uint16_t port;
    {
      TcpListener probe("127.0.0.1", 0);
      port = probe.port();
    }
    const std::vector<uint8_t> data = pattern(5 << 20, 3);  // beyond any socket buffer
    auto reader = std::async(std::launch::async, [&] {
      auto in =
          openStreamForReading(StreamDescriptor::parse("tcp:127.0.0.1:" + std::to_string(port)));
      std::vector<uint8_t> got(data.size());
      const bool complete = in->readExact(got.data(), got.size());
      uint8_t extra;
      const bool more = in->readExact(&extra, 1);
      return complete && !more && got == data;
    });
    auto out = connectTcp("localhost", port, 10.0);  // retries until the reader listens
    out->write(data.data(), data.size());
    out.reset();  // close: the reader sees the end
    CPPUNIT_ASSERT(reader.get());
  }

  void testTcpListenerTwoConnections() {
    TcpListener listener("127.0.0.1", 0);
    auto a = connectTcp("127.0.0.1", listener.port());
    auto b = connectTcp("127.0.0.1", listener.port());
    auto first = listener.accept();
    auto second = listener.accept();
    CPPUNIT_ASSERT(first && second);
    a->write("from a", 6);
    b->write("from b", 6);
    char bufferA[6], bufferB[6];
    CPPUNIT_ASSERT(first->readExact(bufferA, 6));
    CPPUNIT_ASSERT(second->readExact(bufferB, 6));
    CPPUNIT_ASSERT_EQUAL(std::string("from a"), std::string(bufferA, 6));
    CPPUNIT_ASSERT_EQUAL(std::string("from b"), std::string(bufferB, 6));
    // And back.
    first->write("ok", 2);
    char reply[2];
    CPPUNIT_ASSERT(a->readExact(reply, 2));
    CPPUNIT_ASSERT_EQUAL(std::string("ok"), std::string(reply, 2));
  }

  void testListenerShutdownWakesAccept() {
    TcpListener listener("127.0.0.1", 0);
    auto acceptor = std::async(std::launch::async, [&] { return listener.accept() == nullptr; });
    CPPUNIT_ASSERT(acceptor.wait_for(std::chrono::milliseconds(200)) ==
                   std::future_status::timeout);
    listener.shutdown();
    CPPUNIT_ASSERT(acceptor.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CPPUNIT_ASSERT(acceptor.get());
    CPPUNIT_ASSERT(listener.accept() == nullptr);
  }

  void testTcpWriteToClosedPeer() {
    TcpListener listener("127.0.0.1", 0);
    auto out = connectTcp("127.0.0.1", listener.port());
    listener.accept().reset();  // the peer closes at once
    const std::vector<uint8_t> data = pattern(1 << 20, 4);
    // The first writes may still land in buffers; a closed peer must surface as an error
    // (EPIPE/ECONNRESET), never as SIGPIPE killing the process.
    bool failed = false;
    for (int i = 0; i < 100 && !failed; ++i) {
      try {
        out->write(data.data(), data.size());
      } catch (const StreamError& e) {
        failed = std::string(e.what()).find("tcp:127.0.0.1:") != std::string::npos;
      }
    }
    CPPUNIT_ASSERT(failed);
  }

  void testFinishWritingDeliversEverythingToASlowPeerThatReplied() {
    // As storage-sink does: the reader replies while it reads, slowly, and the writer never
    // reads the replies. Closed at once, the writer's socket would reset the connection and
    // throw away the megabytes still in its send buffer.
    TcpListener listener("127.0.0.1", 0);
    const std::vector<uint8_t> data = pattern(8 << 20, 5);
    auto reader = std::async(std::launch::async, [&] {
      auto in = listener.accept();
      in->write("noted", 5);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the writer is done by now
      std::vector<uint8_t> got(data.size());
      const bool complete = in->readExact(got.data(), got.size());
      uint8_t extra;
      const bool more = in->readExact(&extra, 1);
      return complete && !more && got == data;
    });
    auto out = connectTcp("127.0.0.1", listener.port());
    out->write(data.data(), data.size());
    CPPUNIT_ASSERT(out->finishWriting(30));
    out.reset();
    CPPUNIT_ASSERT(reader.get());
  }

  void testConnectTimesOut() {
    uint16_t port;
    {
      TcpListener probe("127.0.0.1", 0);
      port = probe.port();
    }
    const auto start = std::chrono::steady_clock::now();
    CPPUNIT_ASSERT_THROW(connectTcp("127.0.0.1", port, 0.3), StreamError);
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CPPUNIT_ASSERT(waited >= 0.3 && waited < 3.0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StreamTest);
