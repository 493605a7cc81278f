// Tests of DatagramReceiver: datagrams that the kernel coalesced (a sender's segmented
// groups, UDP_GRO) come out as the datagrams that were sent, whole and in order.
#include <cppunit/extensions/HelperMacros.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <string>
#include <vector>

#include "DatagramReceiver.h"
#include "rtcp/Stream.h"

using namespace rtcp;
using namespace rtcp::ion;

namespace {

uint16_t boundPort(const Stream& stream) {
  sockaddr_in address{};
  socklen_t len = sizeof address;
  getsockname(stream.fileDescriptor(), reinterpret_cast<sockaddr*>(&address), &len);
  return ntohs(address.sin_port);
}

/// count records of size bytes, each its own byte pattern (seed: which group).
std::vector<uint8_t> records(size_t size, size_t count, int seed) {
  std::vector<uint8_t> bytes(size * count);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i / size * 13 + i + seed);
  return bytes;
}

}  // namespace

class DatagramReceiverTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DatagramReceiverTest);
  CPPUNIT_TEST(testGroupsComeOutAsTheDatagramsSent);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testGroupsComeOutAsTheDatagramsSent() {
    auto socket = openStreamForReading(StreamDescriptor::parse("udp:127.0.0.1:0"));
    DatagramReceiver receiver(socket->fileDescriptor());
    CPPUNIT_ASSERT_MESSAGE("the kernel (Linux >= 5.0) coalesces for UDP_GRO sockets",
                           receiver.coalescing());
    auto out = openStreamForWriting(
        StreamDescriptor::parse("udp:127.0.0.1:" + std::to_string(boundPort(*socket))));
    // A group of full packets, a single one, a group of small ones (more than a send
    // takes), then two in one send followed by a shorter one on its own.
    struct Sent {
      size_t size, count;
      std::vector<uint8_t> bytes;
    };
    std::vector<Sent> sent;
    sent.push_back({7824, 8, records(7824, 8, 1)});
    sent.push_back({100, 1, records(100, 1, 2)});
    sent.push_back({400, 70, records(400, 70, 3)});
    for (const Sent& s : sent) out->writeEach(s.bytes.data(), s.size, s.count);
    std::vector<uint8_t> tail = records(1000, 3, 4);
    tail.resize(2500);
    out->writeEach(tail.data(), 1000, 2);
    out->write(tail.data() + 2000, 500);

    std::vector<std::vector<uint8_t>> received;
    size_t messages = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (received.size() < 8 + 1 + 70 + 3 && std::chrono::steady_clock::now() < deadline) {
      pollfd readable{socket->fileDescriptor(), POLLIN, 0};
      ::poll(&readable, 1, 100);
      for (const auto& datagram : receiver.receive("test"))
        received.emplace_back(datagram.begin(), datagram.end());
      messages += receiver.messages();
    }
    CPPUNIT_ASSERT_EQUAL(size_t(8 + 1 + 70 + 3), received.size());
    size_t next = 0;
    for (const Sent& s : sent)
      for (size_t r = 0; r < s.count; ++r, ++next) {
        const std::vector<uint8_t> expected(s.bytes.begin() + long(r * s.size),
                                            s.bytes.begin() + long((r + 1) * s.size));
        CPPUNIT_ASSERT_MESSAGE("datagram " + std::to_string(next), received[next] == expected);
      }
    for (size_t part : {0, 1}) {
      const std::vector<uint8_t> expected(tail.begin() + long(part * 1000),
                                          tail.begin() + long((part + 1) * 1000));
      CPPUNIT_ASSERT(received[next++] == expected);
    }
    CPPUNIT_ASSERT(received[next] == std::vector<uint8_t>(tail.begin() + 2000, tail.end()));
    // Coalesced: far fewer messages than datagrams (a group of 8, two of 64 and 6, ...).
    CPPUNIT_ASSERT_MESSAGE(std::to_string(messages) + " messages", messages <= 8);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(DatagramReceiverTest);
