// Faults of the station input, each with its numbers: packets stamped far in the future
// or ahead of the wall clock are rejected with their reason and cannot move a station's
// buffer window (which would turn all its real packets late); duplicates of samples that
// have arrived are counted and never replace them. What is lost equals what is counted.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "InputTestUtil.h"
#include "StationInput.h"
#include "rtcp/Stream.h"

namespace rtcp::ion {
namespace {

using namespace test;

Packets streamPackets(int nrBeamlets, int64_t from, int64_t to) {
  Packets packets;
  for (int64_t n = from; n < to; n += 16) packets.push_back(makePacket(1, 16, nrBeamlets, n, 0));
  return packets;
}

/// A packet of samples [first, +16) whose samples are all 0x7f7f: loud, not the pattern.
std::vector<uint8_t> forgedPacket(int nrBeamlets, int64_t first) {
  std::vector<uint8_t> p = makePacket(1, 16, nrBeamlets, first, 0);
  std::fill(p.begin() + kRspHeaderSize, p.end(), 0x7f);
  return p;
}

void send(Stream& out, const Packets& packets) {
  for (const auto& p : packets) {
    out.write(p.data(), p.size());
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

/// Number of valid samples of a served block (over all its rows).
int64_t validSamples(const StationBlock& b) {
  int64_t n = 0;
  for (uint64_t w : b.valid) n += std::popcount(w);
  return n;
}

/// Asserts that every sample of a block holds the test pattern and is valid.
void expectComplete(const StationBlock& b, int64_t blockStart) {
  for (int row = 0; row < b.header.nrSubbands; ++row)
    for (int t = 0; t < b.header.nrSamples; ++t) {
      const std::string problem = checkSample(b, row, row, t, blockStart - kHistory + t, true);
      CPPUNIT_ASSERT_MESSAGE("block " + std::to_string(b.header.block) + ": " + problem,
                             problem.empty());
    }
}

std::unique_ptr<Stream> sender(StationInput& input) {
  return openStreamForWriting(
      StreamDescriptor::parse("udp:127.0.0.1:" + std::to_string(input.udpPort(0, 0))));
}

}  // namespace

class InputFaultsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(InputFaultsTest);
  CPPUNIT_TEST(testFarFuturePacketsCannotMoveTheWindow);
  CPPUNIT_TEST(testPacketsAheadOfTheClockAreRejected);
  CPPUNIT_TEST(testDuplicatesNeverReplaceData);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// The fault this guards: ten packets stamped 10^6 s ahead arrive first. Unchecked, they moved
  /// the window and every real packet after them was late (62 % of the baselines flagged).
  void testFarFuturePacketsCannotMoveTheWindow() {
    ObservationSettings s = makeSettings(1, 4, kStart, false);
    s.stations[0].inputs = {"udp:127.0.0.1:0"};
    const int64_t S = s.startSample();
    StationInputOptions options;
    options.stallTimeout = 20;
    StationInput input(s, {}, options);
    input.start();
    auto out = sender(input);
    Packets future;
    for (int i = 0; i < 10; ++i)
      future.push_back(forgedPacket(4, S + int64_t(1e6 * s.subbandWidth()) + 16 * i));
    send(*out, future);
    const Packets real = streamPackets(4, S - kHistory, S + 3 * 256);
    send(*out, real);
    for (int64_t block = 0; block < 2; ++block)
      expectComplete(*getBlock(input, block, 0, 0, 4), s.blockStartSample(block));
    CPPUNIT_ASSERT(eventually(
        [&] { return input.statistics()[0].packetsReceived == future.size() + real.size(); }));
    const StationStatistics st = input.statistics()[0];
    CPPUNIT_ASSERT_EQUAL(uint64_t(10), st.rejected[size_t(RspReject::kAfterObservation)]);
    CPPUNIT_ASSERT_EQUAL(uint64_t(10), st.implausible());
    CPPUNIT_ASSERT_EQUAL(uint64_t(10), st.rejectedTotal());
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.late);
    CPPUNIT_ASSERT_EQUAL(uint64_t(real.size()), st.packetsAccepted);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.samplesFlagged);
  }

  /// Real time: 200 loud packets stamped 2 s ahead of the clock (inside the observation)
  /// arrive before the real ones. They are rejected as ahead of the clock, and the real
  /// packets after them are stored, none late.
  void testPacketsAheadOfTheClockAreRejected() {
    const double start = std::floor(wallClock()) - 1;  // the observation runs
    ObservationSettings s = makeSettings(1, 4, start, true);
    s.stopTime = start + 60;
    s.stations[0].inputs = {"udp:127.0.0.1:0"};
    StationInputOptions options;
    options.maxLatency = 0.01;
    StationInput input(s, {}, options);
    input.start();
    auto out = sender(input);
    const SampleClock clock(200);
    // A block whose samples (with their history) were all taken before now.
    const int64_t now = clock.firstSampleAtOrAfter(wallClock());
    const int64_t block = (now - s.startSample()) / s.samplesPerBlock() - 4;
    const int64_t first = s.blockStartSample(block) - kHistory;
    const int64_t ahead = now + int64_t(2 * s.subbandWidth());
    Packets forged;
    for (int i = 0; i < 200; ++i) forged.push_back(forgedPacket(4, ahead + 16 * i));
    send(*out, forged);
    const Packets real = streamPackets(4, first, s.blockStartSample(block + 1));
    send(*out, real);
    CPPUNIT_ASSERT(eventually(
        [&] { return input.statistics()[0].packetsReceived == forged.size() + real.size(); }));
    auto b = getBlock(input, block, 0, 0, 4);
    expectComplete(*b, s.blockStartSample(block));
    CPPUNIT_ASSERT_EQUAL(int64_t(4) * b->header.nrSamples, validSamples(*b));
    const StationStatistics st = input.statistics()[0];
    CPPUNIT_ASSERT_EQUAL(uint64_t(200), st.rejected[size_t(RspReject::kAheadOfClock)]);
    CPPUNIT_ASSERT_EQUAL(uint64_t(200), st.implausible());
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.late);
    CPPUNIT_ASSERT_EQUAL(uint64_t(real.size()), st.packetsAccepted);
  }

  /// Forged copies of 5 packets arrive after the real ones: counted as duplicates, the
  /// real samples served; the received count excludes them.
  void testDuplicatesNeverReplaceData() {
    ObservationSettings s = makeSettings(1, 4, kStart, false);
    s.stations[0].inputs = {"udp:127.0.0.1:0"};
    const int64_t S = s.startSample();
    StationInputOptions options;
    options.stallTimeout = 20;
    StationInput input(s, {}, options);
    input.start();
    auto out = sender(input);
    Packets packets = streamPackets(4, S - kHistory, S + 3 * 256);
    const size_t nrReal = packets.size();
    for (int i = 0; i < 5; ++i)  // each right after its real twin
      packets.insert(packets.begin() + 21 + 2 * i, forgedPacket(4, S - kHistory + 16 * (20 + i)));
    send(*out, packets);
    for (int64_t block = 0; block < 2; ++block)
      expectComplete(*getBlock(input, block, 0, 0, 4), s.blockStartSample(block));
    CPPUNIT_ASSERT(
        eventually([&] { return input.statistics()[0].packetsReceived == packets.size(); }));
    const StationStatistics st = input.statistics()[0];
    CPPUNIT_ASSERT_EQUAL(uint64_t(5), st.duplicated);
    CPPUNIT_ASSERT_EQUAL(uint64_t(nrReal), st.packetsAccepted);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.rejectedTotal() + st.late);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(InputFaultsTest);

}  // namespace rtcp::ion
