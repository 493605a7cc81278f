// ReceiveBuffer: every byte of a stream that arrives in pieces of any size comes out once
// and in order, through buffered and straight reads, and the stream's end is told apart
// from a piece that is still to come.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "ReceiveBuffer.h"

namespace rtcp::storage::test {

/// A stream of given bytes that hands out at most a random number of them per read (as
/// a socket does), and counts the reads.
class PiecewiseStream : public Stream {
 public:
  PiecewiseStream(std::vector<uint8_t> bytes, size_t maxPiece, unsigned seed)
      : bytes_(std::move(bytes)), pieces_(1, maxPiece), random_(seed) {}
  size_t read(void* data, size_t size) override {
    ++reads;
    const size_t n = std::min({size, bytes_.size() - position_, pieces_(random_)});
    std::memcpy(data, bytes_.data() + position_, n);
    position_ += n;
    return n;
  }
  void write(const void*, size_t) override {}
  size_t reads = 0;

 private:
  std::vector<uint8_t> bytes_;
  size_t position_ = 0;
  std::uniform_int_distribution<size_t> pieces_;
  std::mt19937 random_;
};

class ReceiveBufferTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ReceiveBufferTest);
  CPPUNIT_TEST(testEveryByteOnceInOrder);
  CPPUNIT_TEST(testManySmallRecordsFewReads);
  CPPUNIT_TEST(testEndOfStream);
  CPPUNIT_TEST_SUITE_END();

 public:
  static std::vector<uint8_t> randomBytes(size_t n, unsigned seed) {
    std::vector<uint8_t> bytes(n);
    std::mt19937 random(seed);
    for (uint8_t& b : bytes) b = uint8_t(random());
    return bytes;
  }

  void testEveryByteOnceInOrder() {
    // Records of a 64-byte header and a payload from 0 bytes to 3x the buffer (small ones
    // copied from the buffer, large ones read straight into place), some skipped, over
    // pieces from 1 byte to more than the buffer holds.
    constexpr size_t kCapacity = 4096;
    for (size_t maxPiece : {size_t(1), size_t(100), size_t(3000), size_t(20000)}) {
      const std::vector<uint8_t> source = randomBytes(400000, unsigned(maxPiece));
      PiecewiseStream stream(source, maxPiece, 7);
      ReceiveBuffer input(stream, kCapacity);
      std::mt19937 random(unsigned(maxPiece) + 1);
      std::uniform_int_distribution<size_t> sizes(0, 3 * kCapacity);
      size_t position = 0;
      for (int record = 0; position + 64 <= source.size(); ++record) {
        CPPUNIT_ASSERT(input.fill(64));
        CPPUNIT_ASSERT(std::equal(input.data(), input.data() + 64, &source[position]));
        input.consume(64);
        position += 64;
        const size_t size = std::min(sizes(random) >> (record % 3 * 4), source.size() - position);
        if (record % 5 == 4) {
          CPPUNIT_ASSERT(input.skip(size));
        } else {
          std::vector<uint8_t> payload(size + 1, 0xA5);  // one guard byte
          CPPUNIT_ASSERT(input.read(payload.data(), size));
          CPPUNIT_ASSERT(std::equal(payload.begin(), payload.end() - 1, &source[position]));
          CPPUNIT_ASSERT_EQUAL(uint8_t(0xA5), payload.back());
        }
        position += size;
      }
    }
  }

  void testManySmallRecordsFewReads() {
    // 1000 records of 64 + 576 bytes (one station, 16 channels) that the socket holds at
    // once: a read for each 256 KiB, not two per record.
    const std::vector<uint8_t> source = randomBytes(1000 * 640, 3);
    PiecewiseStream stream(source, source.size(), 4);
    ReceiveBuffer input(stream);
    std::vector<uint8_t> payload(576);
    for (int record = 0; record < 1000; ++record) {
      CPPUNIT_ASSERT(input.fill(64));
      input.consume(64);
      CPPUNIT_ASSERT(input.read(payload.data(), payload.size()));
      CPPUNIT_ASSERT(std::equal(payload.begin(), payload.end(), &source[record * 640 + 64]));
    }
    CPPUNIT_ASSERT(stream.reads <= 4);
  }

  void testEndOfStream() {
    const std::vector<uint8_t> source = randomBytes(100, 5);
    {  // a clean end: nothing buffered
      PiecewiseStream stream(source, 7, 6);
      ReceiveBuffer input(stream, 64);
      std::vector<uint8_t> all(100);
      CPPUNIT_ASSERT(input.read(all.data(), all.size()));
      CPPUNIT_ASSERT(!input.fill(64));
      CPPUNIT_ASSERT_EQUAL(size_t(0), input.available());
    }
    {  // an end inside a header: what came is available
      PiecewiseStream stream(source, 7, 6);
      ReceiveBuffer input(stream, 64);
      CPPUNIT_ASSERT(input.fill(64));
      input.consume(64);
      CPPUNIT_ASSERT(!input.fill(64));
      CPPUNIT_ASSERT_EQUAL(size_t(36), input.available());
    }
    {  // an end inside a payload, buffered or read straight
      for (size_t capacity : {size_t(64), size_t(1024)}) {
        PiecewiseStream stream(source, 7, 6);
        ReceiveBuffer input(stream, capacity);
        std::vector<uint8_t> payload(200);
        CPPUNIT_ASSERT(!input.read(payload.data(), payload.size()));
        PiecewiseStream again(source, 7, 6);
        ReceiveBuffer skipping(again, capacity);
        CPPUNIT_ASSERT(!skipping.skip(200));
      }
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ReceiveBufferTest);

}  // namespace rtcp::storage::test
