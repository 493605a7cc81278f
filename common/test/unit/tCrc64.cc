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
