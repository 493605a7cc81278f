// A recording replayed over UDP arrives byte-identical and at the real-time pace of its
// timestamps; re-stamped, it starts now, shifted by a whole even number of seconds.
#include <cppunit/extensions/HelperMacros.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

#include "Pacer.h"
#include "RecordingReplayer.h"
#include "SimTestUtil.h"
#include "StationSimulator.h"
#include "rtcp/Stream.h"

namespace rtcp::sim::test {
namespace {

/// Receives datagrams on 127.0.0.1 (a free port) in a thread until `expected` arrived
/// or stop() is called.
class Receiver {
 public:
  explicit Receiver(size_t expected) : expected_(expected) {
    stream_ = openStreamForReading(StreamDescriptor::parse("udp:127.0.0.1:0"));
    sockaddr_in address{};
    socklen_t length = sizeof address;
    getsockname(stream_->fileDescriptor(), reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] {
      std::vector<uint8_t> buffer(9000);
      while (packets_.size() < expected_) {
        const size_t n = stream_->read(buffer.data(), buffer.size());
        if (n == 0) break;
        packets_.emplace_back(buffer.begin(), buffer.begin() + n);
      }
      finished_ = true;
    });
  }
  ~Receiver() { stop(); }
  std::string descriptor() const { return "udp:127.0.0.1:" + std::to_string(port_); }
  /// Waits up to `seconds` for the expected packets, then stops receiving.
  const std::vector<std::vector<uint8_t>>& wait(double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    stop();
    return packets_;
  }

 private:
  bool done() const { return finished_.load(); }
  void stop() {
    if (!thread_.joinable()) return;
    stream_->shutdown();
    thread_.join();
  }

  size_t expected_;
  std::unique_ptr<Stream> stream_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::atomic<bool> finished_{false};
  std::vector<std::vector<uint8_t>> packets_;
};

/// Records `seconds` of CS001 (2 subbands) into dir/CS001LBA.rsp.
std::string recordOne(const TempDir& dir, double seconds) {
  SimulatorOptions options;
  options.recordDirectory = dir.path();
  options.duration = seconds;
  StationSimulator(settingsFrom(makeParset({"CS001"}, "[300, 301]", 16, "")), options).run();
  return dir / "CS001LBA.rsp";
}

}  // namespace

class ReplayTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ReplayTest);
  CPPUNIT_TEST(testReplayIsByteIdenticalAndRealTime);
  CPPUNIT_TEST(testRestampShiftsByEvenSecondsToNow);
  CPPUNIT_TEST(testRestampByShiftsByTheGivenSeconds);
  CPPUNIT_TEST(testRestampByAnOddNumberOfSecondsIsRefused);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testReplayIsByteIdenticalAndRealTime() {
    TempDir dir;
    const std::string recording = recordOne(dir, 0.5);
    const auto sent = readPackets(recording);
    Receiver receiver(sent.size());
    RecordingReplayer replayer({{recording, receiver.descriptor()}}, {});
    const auto start = std::chrono::steady_clock::now();
    const auto totals = replayer.run();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& received = receiver.wait(5.0);
    CPPUNIT_ASSERT_EQUAL(sent.size(), size_t(totals.back().packets));
    CPPUNIT_ASSERT_EQUAL(sent.size(), received.size());
    for (size_t i = 0; i < sent.size(); ++i) CPPUNIT_ASSERT(sent[i] == received[i]);
    // Paced by the timestamps: 0.5 s of data takes about 0.5 s (the last packet is due
    // when its last sample is; slack for a loaded machine on the late side only).
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, totals.back().seconds, 0.001);
    CPPUNIT_ASSERT(elapsed > 0.5 * 0.9);
    CPPUNIT_ASSERT(elapsed < 0.5 * 1.25);
  }

  void testRestampShiftsByEvenSecondsToNow() {
    TempDir dir;
    const std::string recording = recordOne(dir, 0.05);
    const auto sent = readPackets(recording);
    Receiver receiver(sent.size());
    RecordingReplayer::Options options;
    options.restamp = true;
    const double before = Pacer::now();
    const auto totals = RecordingReplayer({{recording, receiver.descriptor()}}, options).run();
    const auto& received = receiver.wait(5.0);
    const int64_t shift = totals.back().timestampShift;
    CPPUNIT_ASSERT_EQUAL(int64_t(0), shift % 2);
    CPPUNIT_ASSERT_EQUAL(sent.size(), received.size());
    const SampleClock clock(200);
    for (size_t i = 0; i < sent.size(); ++i) {
      const RspHeader original = RspHeader::read(sent[i].data()),
                      now = RspHeader::read(received[i].data());
      CPPUNIT_ASSERT_EQUAL(int64_t(original.timestamp) + shift, int64_t(now.timestamp));
      CPPUNIT_ASSERT_EQUAL(original.blockSequenceNumber, now.blockSequenceNumber);
      // The same sample count, moved by a whole number of samples.
      CPPUNIT_ASSERT_EQUAL(clock.sampleNumber(original.stamp()) + shift * 390625 / 2,
                           clock.sampleNumber(now.stamp()));
      CPPUNIT_ASSERT(std::equal(sent[i].begin() + 16, sent[i].end(), received[i].begin() + 16));
    }
    const double firstTime =
        clock.unixTime(clock.sampleNumber(RspHeader::read(received[0].data()).stamp()));
    CPPUNIT_ASSERT(firstTime >= before - 0.01 && firstTime < before + 2.01);
  }

  /// The shift observe --now gave an observation: every timestamp moves by exactly it, and
  /// a packet goes once its time (shifted) has come.
  void testRestampByShiftsByTheGivenSeconds() {
    TempDir dir;
    const std::string recording = recordOne(dir, 0.05);
    const auto sent = readPackets(recording);
    Receiver receiver(sent.size());
    const uint32_t first = RspHeader::read(sent[0].data()).timestamp;
    RecordingReplayer::Options options;
    options.restampBy = 2 * int64_t(std::ceil((Pacer::now() - first) / 2)) + 2;  // 2-4 s ahead
    const auto start = std::chrono::steady_clock::now();
    const auto totals = RecordingReplayer({{recording, receiver.descriptor()}}, options).run();
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const auto& received = receiver.wait(5.0);
    CPPUNIT_ASSERT_EQUAL(*options.restampBy, totals.back().timestampShift);
    CPPUNIT_ASSERT_EQUAL(sent.size(), received.size());
    for (size_t i = 0; i < sent.size(); ++i)
      CPPUNIT_ASSERT_EQUAL(int64_t(RspHeader::read(sent[i].data()).timestamp) + *options.restampBy,
                           int64_t(RspHeader::read(received[i].data()).timestamp));
    CPPUNIT_ASSERT_MESSAGE(std::to_string(elapsed) + " s", elapsed > 1.9);  // waited for it
  }

  /// An odd shift would give every packet a sequence number its second does not have.
  void testRestampByAnOddNumberOfSecondsIsRefused() {
    RecordingReplayer::Options options;
    options.restampBy = 3;
    try {
      RecordingReplayer({}, options);
      CPPUNIT_FAIL("an odd shift was taken");
    } catch (const std::invalid_argument& e) {
      CPPUNIT_ASSERT_MESSAGE(e.what(), std::string(e.what()).find("--restamp-by 3") == 0);
    }
    options.restampBy = 4;
    RecordingReplayer({}, options);  // even: taken
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ReplayTest);

}  // namespace rtcp::sim::test
