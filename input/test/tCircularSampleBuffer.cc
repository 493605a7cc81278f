// The circular sample buffer alone: packets written directly, blocks read back with the
// exact flags for lost, reordered, duplicated, late and far-ahead packets.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <utility>

#include "CircularSampleBuffer.h"
#include "InputTestUtil.h"

namespace rtcp::ion {
namespace {

using test::checkSample;
using test::makePacket;

constexpr int64_t kBase = 330000000000000;  ///< a sample number of today's size, 64-aligned
constexpr int kBeamlets = 5;

/// Two streams of 5 and 3 subbands (the last one narrower); 16-bit. With a mirror, in
/// memory of its own and placed with that shift and mirror (lend()).
struct Fixture {
  explicit Fixture(int64_t capacity = 1024, bool blockWhenFull = false, int bits = 16,
                   int64_t shift = 0, int64_t mirror = 0)
      : bits(bits),
        ring(mirror ? CircularSampleBuffer::bytesFor(8, bits, capacity, mirror) : 0),
        buffer(8, bits, capacity, {{0, kBeamlets}, {kBeamlets, 3}}, blockWhenFull,
               {mirror ? ring.data() : nullptr, shift, mirror}) {}

  /// Writes stream 0 packets starting at kBase + 16 * index.
  WriteCounts write(std::vector<int64_t> indices, int stream = 0) {
    std::vector<std::vector<uint8_t>> packets;
    std::vector<PacketRef> refs;
    const StreamSubbands& sub = buffer.streamSubbands(stream);
    for (int64_t i : indices) {
      // Packets carry one beamlet more than the stream needs: it must be ignored.
      packets.push_back(makePacket(1, bits, sub.count + 1, kBase + 16 * i, sub.first));
    }
    for (size_t i = 0; i < packets.size(); ++i)
      refs.push_back({kBase + 16 * indices[i], packets[i].data() + kRspHeaderSize, sub.count + 1});
    return buffer.write(stream, refs);
  }
  /// Reads subbands of stream 0 for samples [kBase + first, +count).
  ReadResult read(int64_t first, int count, int stream = 0) {
    const StreamSubbands& sub = buffer.streamSubbands(stream);
    block = StationBlock(sub.count, count, bits);
    return buffer.read(stream, kBase + first, count, sub.first, sub.count, block, 0);
  }
  /// Asserts that sample t of the last read is valid exactly when arrived(t).
  template <typename Arrived>
  void expect(int64_t first, Arrived arrived, int stream = 0) {
    const StreamSubbands& sub = buffer.streamSubbands(stream);
    for (int row = 0; row < sub.count; ++row)
      for (int t = 0; t < block.header.nrSamples; ++t) {
        const std::string problem =
            checkSample(block, row, sub.first + row, t, kBase + first + t, arrived(first + t));
        CPPUNIT_ASSERT_MESSAGE(problem, problem.empty());
      }
  }

  /// Lends what read() copies: subbands of stream 0 for samples [kBase + first, +count).
  ReadResult lend(int64_t first, int count) {
    const StreamSubbands& sub = buffer.streamSubbands(0);
    table = AlignedBuffer<uint8_t>(StationBlock::bytesOfRowTable(sub.count, count));
    lent = StationBlock::overRowTable(table.data(), sub.count, count, bits);
    lent.rowBase = ring.data();
    return buffer.lend(0, kBase + first, count, sub.first, sub.count, lent, 0);
  }
  /// Asserts that the lent block has the last read's valid bits and valid samples.
  void expectLentIsRead() {
    const size_t bytes = bytesPerDualPolSample(bits);
    for (int row = 0; row < block.header.nrSubbands; ++row)
      for (int t = 0; t < block.header.nrSamples; ++t) {
        CPPUNIT_ASSERT_EQUAL(block.isValid(row, t), lent.isValid(row, t));
        if (block.isValid(row, t))
          CPPUNIT_ASSERT(std::memcmp(block.sample(row, t), lent.sample(row, t), bytes) == 0);
      }
  }

  int bits;
  AlignedBuffer<uint8_t> ring;  ///< the buffer's memory when placed
  CircularSampleBuffer buffer;
  StationBlock block;
  AlignedBuffer<uint8_t> table;
  StationBlock lent;
};

bool packetIn(int64_t sampleOffset, std::initializer_list<int> packets) {
  for (int p : packets)
    if (sampleOffset >= 16 * p && sampleOffset < 16 * p + 16) return true;
  return false;
}

}  // namespace

class CircularSampleBufferTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(CircularSampleBufferTest);
  CPPUNIT_TEST(testLostReorderedDuplicated);
  CPPUNIT_TEST(testReadAcrossTheRingEnd);
  CPPUNIT_TEST(testLatePackets);
  CPPUNIT_TEST(testFarAheadMovesWindow);
  CPPUNIT_TEST(testOverlapKeepsFirstArrival);
  CPPUNIT_TEST(testReadBeyondHead);
  CPPUNIT_TEST(testStreamsAreIndependent);
  CPPUNIT_TEST(testFourBitLayout);
  CPPUNIT_TEST(testWriterWaitsForRetention);
  CPPUNIT_TEST(testGapDoesNotDeadlock);
  CPPUNIT_TEST(testWaitUntilPassed);
  CPPUNIT_TEST(testLentRowsAreTheRead);
  CPPUNIT_TEST(testLentRowsStayUntilUnpinned);
  CPPUNIT_TEST(testLendPastTheMirrorRefused);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testLostReorderedDuplicated() {
    Fixture f;
    // Packet 3 lost; 2 before 1; 1 twice; 5 before 4.
    const WriteCounts c = f.write({0, 2, 1, 1, 5, 4, 6});
    CPPUNIT_ASSERT_EQUAL(uint64_t(6), c.written);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), c.duplicated);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), c.late);
    // A read starting mid-packet and ending mid-packet.
    const ReadResult r = f.read(8, 96);
    CPPUNIT_ASSERT(!r.gone);
    CPPUNIT_ASSERT_EQUAL(int64_t(16), r.flagged);
    f.expect(8, [](int64_t s) { return packetIn(s, {0, 1, 2, 4, 5, 6}); });
  }

  void testReadAcrossTheRingEnd() {
    Fixture f(256);
    std::vector<int64_t> all;
    for (int i = 10; i < 26; ++i) all.push_back(i);  // samples [160, 416): wraps at 256
    f.write(all);
    CPPUNIT_ASSERT_EQUAL(kBase + 416, f.buffer.head(0));
    const ReadResult r = f.read(168, 240);
    CPPUNIT_ASSERT_EQUAL(int64_t(0), r.flagged);
    f.expect(168, [](int64_t) { return true; });
  }

  void testLatePackets() {
    Fixture f(256);
    f.write({0, 1, 3});
    f.read(0, 40);  // serves [0, 40): later packets for it are late
    // 2 is partly late (samples 32..39 served, 40..47 still wanted); 1 is wholly late.
    const WriteCounts c = f.write({2, 1});
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), c.late);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), c.written);
    f.read(32, 32);
    f.expect(32, [](int64_t s) { return s >= 40; });
    // Older than the buffer holds: head is at 64 + 16 * 20, capacity 256.
    f.write({20});
    const WriteCounts old = f.write({4});
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), old.late);
  }

  void testFarAheadMovesWindow() {
    Fixture f(256);
    f.write({0, 2});
    // Head jumps to 16 * 18 = 288: the window is [32, 288); sample 0..15 leave it, and the
    // slots of 256..271 (which held 0..15) must not pass for arrived.
    f.write({17});
    CPPUNIT_ASSERT(f.read(0, 64).gone);
    f.read(32, 256);
    f.expect(32, [](int64_t s) { return packetIn(s, {2, 17}); });
  }

  void testOverlapKeepsFirstArrival() {
    Fixture f;
    f.write({0, 1});  // samples [0, 32)
    // Forged packets of loud samples: one straddling packets 0 and 1, one reaching past them.
    const StreamSubbands& sub = f.buffer.streamSubbands(0);
    std::vector<std::vector<uint8_t>> forged;
    std::vector<PacketRef> refs;
    for (int64_t first : {8, 24}) {
      forged.push_back(makePacket(1, 16, sub.count, kBase + first, sub.first));
      std::fill(forged.back().begin() + kRspHeaderSize, forged.back().end(), 0x7f);
    }
    for (size_t i = 0; i < forged.size(); ++i)
      refs.push_back({kBase + (i ? 24 : 8), forged[i].data() + kRspHeaderSize, sub.count});
    const WriteCounts c = f.buffer.write(0, refs);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), c.duplicated);  // both overlapped what had arrived
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), c.written);     // the second one's new half
    // What arrived first is untouched: samples [0, 32) hold packets 0 and 1.
    f.read(0, 32);
    f.expect(0, [](int64_t) { return true; });
    // Samples [32, 40) arrived first in the forged packet: stored, valid, loud.
    const ReadResult r = f.read(32, 16);
    CPPUNIT_ASSERT_EQUAL(int64_t(8), r.flagged);
    CPPUNIT_ASSERT(f.block.isValid(0, 7) && !f.block.isValid(0, 8));
    CPPUNIT_ASSERT_EQUAL(uint8_t(0x7f), *test::blockSample(f.block, 0, 7));
  }

  void testReadBeyondHead() {
    Fixture f(256);
    std::vector<int64_t> all;
    for (int i = 0; i < 16; ++i) all.push_back(i);  // the whole ring: samples [0, 256)
    f.write(all);
    // Samples 256.. have not arrived, although their slots hold arrived samples 0..
    const ReadResult r = f.read(240, 48);
    CPPUNIT_ASSERT_EQUAL(int64_t(32), r.flagged);
    f.expect(240, [](int64_t s) { return s < 256; });
  }

  void testStreamsAreIndependent() {
    Fixture f;
    f.write({0, 1}, 0);
    f.write({1}, 1);
    f.read(0, 32, 1);
    f.expect(
        0, [](int64_t s) { return s >= 16; }, 1);
    f.read(0, 32, 0);
    f.expect(
        0, [](int64_t) { return true; }, 0);
  }

  void testFourBitLayout() {
    Fixture f(1024, false, 4);
    f.write({0, 1, 3});
    f.read(0, 64);
    f.expect(0, [](int64_t s) { return packetIn(s, {0, 1, 3}); });
  }

  void testWriterWaitsForRetention() {
    Fixture f(256, true);
    f.buffer.setRetentionFloor(kBase);
    f.write({0, 1, 2});
    // Packet 16 ends at 272 > floor + 256: the writer waits until the floor moves.
    auto writer = std::async(std::launch::async, [&] { return f.write({16}); });
    CPPUNIT_ASSERT(writer.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
    f.buffer.setRetentionFloor(kBase + 16);
    CPPUNIT_ASSERT(writer.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), writer.get().written);
    f.read(16, 256);
    f.expect(16, [](int64_t s) { return packetIn(s, {1, 2, 16}); });
  }

  /// A recording with a gap: the writer holds a packet far ahead and waits for room, a
  /// reader waits for samples in the gap. The reader must go on (flagging the gap) and
  /// release room, not wait for the writer that waits for it.
  void testGapDoesNotDeadlock() {
    using Clock = std::chrono::steady_clock;
    Fixture f(256, true);
    f.buffer.setRetentionFloor(kBase);
    f.write({0, 1, 2});
    auto writer = std::async(std::launch::async, [&] { return f.write({40}); });
    CPPUNIT_ASSERT(writer.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
    // Samples [0, 640) precede the waiting packet: they have passed.
    CPPUNIT_ASSERT(
        f.buffer.waitUntilPassed(0, kBase + 640, -1, Clock::now() + std::chrono::seconds(5)));
    const ReadResult r = f.read(0, 128);
    CPPUNIT_ASSERT_EQUAL(int64_t(128 - 48), r.flagged);
    f.buffer.setRetentionFloor(kBase + 656 - 256);  // room for the packet's end
    CPPUNIT_ASSERT(writer.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), writer.get().written);
    // Not beyond it: samples after the packet's start have not arrived.
    CPPUNIT_ASSERT(!f.buffer.waitUntilPassed(0, kBase + 16 * 42, -1,
                                             Clock::now() + std::chrono::milliseconds(20)));
  }

  void testWaitUntilPassed() {
    Fixture f;
    using Clock = std::chrono::steady_clock;
    CPPUNIT_ASSERT(
        !f.buffer.waitUntilPassed(0, kBase + 32, -1, Clock::now() + std::chrono::milliseconds(20)));
    auto waiter = std::async(std::launch::async, [&] {
      return f.buffer.waitUntilPassed(0, kBase + 32, -1, Clock::now() + std::chrono::seconds(10));
    });
    f.write({0});
    CPPUNIT_ASSERT(waiter.wait_for(std::chrono::milliseconds(50)) == std::future_status::timeout);
    f.write({1});
    CPPUNIT_ASSERT(waiter.get());
    // A stream without progress passes after the stall timeout.
    CPPUNIT_ASSERT(
        f.buffer.waitUntilPassed(1, kBase + 32, 0.05, Clock::now() + std::chrono::seconds(10)));
    f.buffer.markEnded(0);
    CPPUNIT_ASSERT(
        f.buffer.waitUntilPassed(0, kBase + 1000, -1, Clock::now() + std::chrono::seconds(10)));
  }

  /// Rows lent in place hold what a read copies, across the ring's end too (through
  /// the mirror), with lost packets flagged the same.
  void testLentRowsAreTheRead() {
    Fixture f(256, false, 16, 40, 96);  // sample s in slot (s + 40) mod 256
    std::vector<int64_t> packets;
    for (int i = 8; i < 50; ++i)
      if (i != 40) packets.push_back(i);  // samples [128, 800), packet 40 lost
    f.write(packets);
    // From slot 80 and 128 (through 24 and 72 mirrored slots), and at slot 0.
    for (const auto& [first, count] :
         {std::pair(552, 200), std::pair(600, 200), std::pair(728, 64)}) {
      const ReadResult lent = f.lend(first, count);
      f.buffer.unpin(0, kBase + first);
      const ReadResult read = f.read(first, count);
      CPPUNIT_ASSERT(!lent.gone && !read.gone);
      CPPUNIT_ASSERT_EQUAL(read.flagged, lent.flagged);
      f.expectLentIsRead();
    }
    CPPUNIT_ASSERT_EQUAL(int64_t(16), f.read(552, 200).flagged);  // packet 40
  }

  /// A lent range is pinned: a write that would overwrite it waits until unpin().
  void testLentRowsStayUntilUnpinned() {
    Fixture f(256, false, 16, 0, 64);
    f.write({0, 1, 2, 3});
    CPPUNIT_ASSERT(!f.lend(0, 64).gone);
    // Packet 16 would take the slots of samples [0, 16).
    auto writer = std::async(std::launch::async, [&] { return f.write({16}); });
    CPPUNIT_ASSERT(writer.wait_for(std::chrono::milliseconds(100)) == std::future_status::timeout);
    f.read(0, 64);  // reads do not end the pin
    f.expectLentIsRead();
    f.buffer.unpin(0, kBase);
    CPPUNIT_ASSERT(writer.wait_for(std::chrono::seconds(5)) == std::future_status::ready);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), writer.get().written);
    CPPUNIT_ASSERT_THROW(f.buffer.unpin(0, kBase), std::logic_error);
  }

  /// A range that would wrap past the mirror cannot be lent in one piece.
  void testLendPastTheMirrorRefused() {
    Fixture f(256, false, 16, 0, 64);
    f.write({10, 11, 12, 13, 14, 15, 16, 17, 18});
    CPPUNIT_ASSERT_THROW(f.lend(160, 200), std::logic_error);  // slots 160..360 > 256 + 64
    CPPUNIT_ASSERT(!f.lend(160, 96).gone);                     // slots 160..256 + 0
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(CircularSampleBufferTest);

}  // namespace rtcp::ion
