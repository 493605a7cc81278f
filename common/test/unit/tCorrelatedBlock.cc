// Tests of the correlated-block format (DESIGN §2.4) and StationBlock.
#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <random>

#include "rtcp/Baselines.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/Crc64.h"
#include "rtcp/StationBlock.h"

namespace rtcp {
namespace {

uint64_t le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}
uint32_t le32(const uint8_t* p) { return uint32_t(le64(p) & 0xffffffffu); }

/// Data with distinct values everywhere.
CorrelatedData randomData(int nrStations, int nrChannels, unsigned seed) {
  CorrelatedData data(nrStations, nrChannels);
  std::mt19937 random(seed);
  std::normal_distribution<float> value;
  for (auto& v : data.visibilities) v = {value(random), value(random)};
  for (auto& n : data.validSamples) n = random() % 200000;
  return data;
}

}  // namespace
}  // namespace rtcp

using namespace rtcp;

class CorrelatedBlockTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(CorrelatedBlockTest);
  CPPUNIT_TEST(testShapes);
  CPPUNIT_TEST(testHeaderOffsets);
  CPPUNIT_TEST(testSerialiseRoundTrip);
  CPPUNIT_TEST(testCrcCatchesAFlippedByte);
  CPPUNIT_TEST(testHeaderChecks);
  CPPUNIT_TEST(testAdd);
  CPPUNIT_TEST(testStationBlock);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testShapes() {
    CorrelatedData data(4, 16);
    CPPUNIT_ASSERT_EQUAL(size_t(10 * 16 * 4), data.visibilities.size());
    CPPUNIT_ASSERT_EQUAL(size_t(10 * 16), data.validSamples.size());
    CorrelatedHeader h;
    h.nrStations = 4;
    h.nrChannels = 16;
    CPPUNIT_ASSERT_EQUAL(uint64_t(10 * 16 * 4 * 8 + 10 * 16 * 4), h.expectedPayloadSize());
    // Layout [baseline][channel][pol]: (s1=1, s2=2) is baseline 4.
    data.visibility(baselineIndex(1, 2), 3, 2) = {1, 2};
    CPPUNIT_ASSERT(data.visibilities[(4 * 16 + 3) * 4 + 2] == std::complex<float>(1, 2));
    data.valid(4, 3) = 7;
    CPPUNIT_ASSERT_EQUAL(uint32_t(7), data.validSamples[4 * 16 + 3]);
  }

  void testHeaderOffsets() {
    CorrelatedData data = randomData(3, 8, 1);
    data.subband = 157;
    data.integration = 0x0102030405LL;
    const std::vector<uint8_t> block = data.serialise(0x1122334455667788ULL);
    CPPUNIT_ASSERT_EQUAL(size_t(64 + 6 * 8 * 36), block.size());
    CPPUNIT_ASSERT_EQUAL(std::string("RTCP"), std::string(block.begin(), block.begin() + 4));
    CPPUNIT_ASSERT_EQUAL(1, int(block[4] | block[5] << 8));
    CPPUNIT_ASSERT_EQUAL(64, int(block[6] | block[7] << 8));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0x1122334455667788ULL), le64(&block[8]));
    CPPUNIT_ASSERT_EQUAL(uint32_t(157), le32(&block[16]));
    CPPUNIT_ASSERT_EQUAL(uint32_t(3), le32(&block[20]));
    CPPUNIT_ASSERT_EQUAL(uint32_t(8), le32(&block[24]));
    CPPUNIT_ASSERT_EQUAL(uint32_t(4), le32(&block[28]));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0x0102030405ULL), le64(&block[32]));
    CPPUNIT_ASSERT_EQUAL(uint64_t(block.size() - 64), le64(&block[40]));
    CPPUNIT_ASSERT_EQUAL(crc64(block.data() + 64, block.size() - 64), le64(&block[48]));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), le64(&block[56]));
    // Payload: visibilities as float32 (re, im), then the counts as uint32.
    float re, im;
    std::memcpy(&re, &block[64], 4);
    std::memcpy(&im, &block[68], 4);
    CPPUNIT_ASSERT(std::complex<float>(re, im) == data.visibilities[0]);
    CPPUNIT_ASSERT_EQUAL(data.validSamples[0], le32(&block[64 + 6 * 8 * 4 * 8]));
  }

  void testSerialiseRoundTrip() {
    CorrelatedData data = randomData(5, 32, 2);
    data.subband = 12;
    data.integration = 99;
    const std::vector<uint8_t> block = data.serialise(1001);
    const CorrelatedHeader h = CorrelatedHeader::read(block.data());
    CPPUNIT_ASSERT(!checkCorrelatedHeader(h));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1001), h.observationId);
    CPPUNIT_ASSERT_EQUAL(h.payloadCrc, crc64(block.data() + 64, h.payloadSize));
    uint8_t rewritten[64];
    h.write(rewritten);
    CPPUNIT_ASSERT(std::memcmp(rewritten, block.data(), 64) == 0);
    const CorrelatedData back = CorrelatedData::fromPayload(h, block.data() + 64);
    CPPUNIT_ASSERT_EQUAL(5, back.nrStations);
    CPPUNIT_ASSERT_EQUAL(32, back.nrChannels);
    CPPUNIT_ASSERT_EQUAL(12, back.subband);
    CPPUNIT_ASSERT_EQUAL(int64_t(99), back.integration);
    CPPUNIT_ASSERT(
        std::equal(data.visibilities.begin(), data.visibilities.end(), back.visibilities.begin()));
    CPPUNIT_ASSERT(
        std::equal(data.validSamples.begin(), data.validSamples.end(), back.validSamples.begin()));
  }

  void testCrcCatchesAFlippedByte() {
    const std::vector<uint8_t> block = randomData(2, 4, 3).serialise(1);
    const uint64_t crc = CorrelatedHeader::read(block.data()).payloadCrc;
    for (size_t i = 64; i < block.size(); i += 7) {
      std::vector<uint8_t> damaged = block;
      damaged[i] ^= 0x10;
      CPPUNIT_ASSERT(crc64(damaged.data() + 64, damaged.size() - 64) != crc);
    }
  }

  void testHeaderChecks() {
    const CorrelatedHeader good = CorrelatedHeader::read(randomData(2, 4, 4).serialise(1).data());
    CPPUNIT_ASSERT(!checkCorrelatedHeader(good));
    auto bad = [&](auto change) {
      CorrelatedHeader h = good;
      change(h);
      return checkCorrelatedHeader(h).has_value();
    };
    CPPUNIT_ASSERT(bad([](auto& h) { h.magic = 0x50435453; }));
    CPPUNIT_ASSERT(bad([](auto& h) { h.version = 2; }));
    CPPUNIT_ASSERT(bad([](auto& h) { h.headerSize = 48; }));
    CPPUNIT_ASSERT(bad([](auto& h) { h.nrPolarisations = 2; }));
    CPPUNIT_ASSERT(bad([](auto& h) { h.nrStations = 0; }));
    CPPUNIT_ASSERT(bad([](auto& h) { h.nrChannels = 5; }));  // payload size no longer fits
    CPPUNIT_ASSERT(bad([](auto& h) { h.payloadSize += 4; }));
    CPPUNIT_ASSERT(bad([](auto& h) { h.nrStations = 100000; }));  // absurd shapes
    CPPUNIT_ASSERT(bad([](auto& h) { h.reserved = 1; }));
  }

  void testAdd() {
    CorrelatedData sum = randomData(3, 4, 5);
    const CorrelatedData other = randomData(3, 4, 6);
    const CorrelatedData copy = randomData(3, 4, 5);
    sum.add(other);
    for (size_t i = 0; i < sum.visibilities.size(); ++i)
      CPPUNIT_ASSERT(sum.visibilities[i] == copy.visibilities[i] + other.visibilities[i]);
    for (size_t i = 0; i < sum.validSamples.size(); ++i)
      CPPUNIT_ASSERT_EQUAL(copy.validSamples[i] + other.validSamples[i], sum.validSamples[i]);
    CPPUNIT_ASSERT_THROW(sum.add(CorrelatedData(3, 8)), std::invalid_argument);
    sum.zero();
    CPPUNIT_ASSERT(sum.visibilities[5] == std::complex<float>(0, 0));
    CPPUNIT_ASSERT_EQUAL(uint32_t(0), sum.validSamples[5]);
  }

  void testStationBlock() {
    StationBlock block(3, 100, 8);
    CPPUNIT_ASSERT_EQUAL(3, block.header.nrSubbands);
    CPPUNIT_ASSERT_EQUAL(100, block.header.nrSamples);
    CPPUNIT_ASSERT_EQUAL(8, block.header.bitsPerSample);
    CPPUNIT_ASSERT_EQUAL(size_t(3 * 100 * 4), block.samples.size());
    CPPUNIT_ASSERT_EQUAL(size_t(2), block.wordsPerSubband());
    CPPUNIT_ASSERT_EQUAL(size_t(6), block.valid.size());
    CPPUNIT_ASSERT(block.sample(2, 99) + 4 == block.samples.data() + block.samples.size());
    CPPUNIT_ASSERT(block.sample(1, 0) == block.samples.data() + 400);
    CPPUNIT_ASSERT(!block.isValid(1, 70));
    block.setValid(1, 70, true);
    block.setValid(1, 0, true);
    CPPUNIT_ASSERT(block.isValid(1, 70) && block.isValid(1, 0));
    CPPUNIT_ASSERT(!block.isValid(1, 69) && !block.isValid(0, 70) && !block.isValid(2, 70));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1) << 6, block.valid[1 * 2 + 1]);
    block.setValid(1, 70, false);
    CPPUNIT_ASSERT(!block.isValid(1, 70) && block.isValid(1, 0));
    CPPUNIT_ASSERT_EQUAL(size_t(0), reinterpret_cast<uintptr_t>(block.samples.data()) % 64);
    StationBlock wide(1, 10, 16);
    CPPUNIT_ASSERT_EQUAL(size_t(80), wide.samples.size());
    CPPUNIT_ASSERT_EQUAL(size_t(64), sizeof(StationBlockHeader));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(CorrelatedBlockTest);
