// Tests of the CRC-64/XZ checksum.
#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <random>
#include <vector>

#include "rtcp/Crc64.h"

using namespace rtcp;

class Crc64Test : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(Crc64Test);
  CPPUNIT_TEST(testCheckValue);
  CPPUNIT_TEST(testEmpty);
  CPPUNIT_TEST(testEveryBitFlipChangesTheCrc);
  CPPUNIT_TEST(testAgreesWithBoost);
  CPPUNIT_TEST(testImplementationsAgreeOnRandomData);
  CPPUNIT_TEST(testUpdateInParts);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCheckValue() {
    const char* text = "123456789";
    CPPUNIT_ASSERT_EQUAL(uint64_t(0x995DC9BBDF1939FAULL), crc64(text, std::strlen(text)));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0x995DC9BBDF1939FAULL), crc64Reference(text, std::strlen(text)));
  }

  void testEmpty() {
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), crc64(nullptr, 0));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), crc64Reference(nullptr, 0));
  }

  void testAgreesWithBoost() {
    // Every length 0..100 at every alignment 0..7, and a large block.
    std::vector<uint8_t> data(1 << 20);
    std::mt19937 random(2);
    for (auto& b : data) b = uint8_t(random());
    for (size_t offset = 0; offset < 8; ++offset)
      for (size_t size = 0; size <= 100; ++size)
        CPPUNIT_ASSERT_EQUAL(crc64Reference(&data[offset], size), crc64(&data[offset], size));
    CPPUNIT_ASSERT_EQUAL(crc64Reference(data.data(), data.size()), crc64(data.data(), data.size()));
  }

  void testImplementationsAgreeOnRandomData() {
    // Carry-less folding and slicing-by-8 against Boost on random bytes of random lengths
    // (short ones, those around the 64- and 16-byte folding steps, large ones) at random
    // alignments, each from a random previous CRC as well as from the start.
    CPPUNIT_ASSERT_MESSAGE("this CPU has PCLMULQDQ (the test machines do)", crc64HasClmul());
    std::vector<uint8_t> data((1 << 20) + 64);
    std::mt19937_64 random(3);
    for (auto& b : data) b = uint8_t(random());
    std::uniform_int_distribution<size_t> offsets(0, 63), small(0, 300), large(0, 1 << 20);
    for (int trial = 0; trial < 2000; ++trial) {
      const size_t offset = offsets(random), size = trial % 4 == 3 ? large(random) : small(random);
      const uint8_t* p = &data[offset];
      const uint64_t expected = crc64Reference(p, size);
      CPPUNIT_ASSERT_EQUAL(expected, crc64Clmul(0, p, size));
      CPPUNIT_ASSERT_EQUAL(expected, crc64SlicingBy8(0, p, size));
      CPPUNIT_ASSERT_EQUAL(expected, crc64(p, size));
      const uint64_t previous = random();
      CPPUNIT_ASSERT_EQUAL(crc64SlicingBy8(previous, p, size), crc64Clmul(previous, p, size));
    }
  }

  void testUpdateInParts() {
    // The CRC of a message is that of its parts in order, wherever it is cut.
    std::vector<uint8_t> data(5000);
    std::mt19937 random(4);
    for (auto& b : data) b = uint8_t(random());
    const uint64_t whole = crc64Reference(data.data(), data.size());
    for (size_t cut : {size_t(0), size_t(1), size_t(63), size_t(64), size_t(65), size_t(4999)}) {
      const uint64_t first = crc64Update(0, data.data(), cut);
      CPPUNIT_ASSERT_EQUAL(whole, crc64Update(first, data.data() + cut, data.size() - cut));
    }
  }

  void testEveryBitFlipChangesTheCrc() {
    std::vector<uint8_t> data(256);
    std::mt19937 random(1);
    for (auto& b : data) b = uint8_t(random());
    const uint64_t reference = crc64(data.data(), data.size());
    for (size_t bit = 0; bit < data.size() * 8; ++bit) {
      data[bit / 8] ^= uint8_t(1 << (bit % 8));
      CPPUNIT_ASSERT(crc64(data.data(), data.size()) != reference);
      data[bit / 8] ^= uint8_t(1 << (bit % 8));
    }
    CPPUNIT_ASSERT_EQUAL(reference, crc64(data.data(), data.size()));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(Crc64Test);
