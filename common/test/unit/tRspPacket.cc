// Tests of the RSP packet format (DESIGN §2.1), including the real IE613 capture.
#include <cppunit/extensions/HelperMacros.h>

#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "TestData.h"
#include "rtcp/Files.h"
#include "rtcp/RspPacket.h"

namespace rtcp {
namespace {

using Sample = std::complex<int16_t>;

/// A valid packet: 8-bit, 200 MHz, 122 beamlets, station 214, even second.
std::vector<uint8_t> validPacket(RspHeader* headerOut = nullptr) {
  RspHeader h;
  h.setClockMHz(200);
  h.setBitsPerSample(8);
  h.setStationId(214, 1);
  h.configuration = 0xAA;
  h.nrBeamlets = 122;
  h.timestamp = 1656466200;
  h.blockSequenceNumber = 26;
  std::vector<Sample> samples(size_t(h.nrBeamlets) * kRspSamplesPerPacket * kNrPolarisations,
                              Sample(1, -1));
  std::vector<uint8_t> packet(rspPacketSize(8, h.nrBeamlets));
  encodeRspPacket(h, samples.data(), packet.data());
  if (headerOut) *headerOut = h;
  return packet;
}

const RspExpectation kExpect{200, 8, 122, 214};

RspReject check(const std::vector<uint8_t>& packet, const RspExpectation& expect = kExpect) {
  RspHeader h;
  return validateRspPacket(packet, expect, h);
}

std::vector<uint8_t> readBytes(const std::string& path) {
  const std::string bytes = rtcp::readFile(path);
  return {bytes.begin(), bytes.end()};
}

}  // namespace
}  // namespace rtcp

template <>
struct CppUnit::assertion_traits<rtcp::RspReject> {
  static bool equal(rtcp::RspReject a, rtcp::RspReject b) { return a == b; }
  static std::string toString(rtcp::RspReject r) { return rtcp::toString(r); }
};

using namespace rtcp;

class RspPacketTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(RspPacketTest);
  CPPUNIT_TEST(testSizes);
  CPPUNIT_TEST(testHeaderLayout);
  CPPUNIT_TEST(testRoundTripEveryBitMode);
  CPPUNIT_TEST(testFourBitNibbles);
  CPPUNIT_TEST(testHeaderFaults);
  CPPUNIT_TEST(testOddSizesAndTruncation);
  CPPUNIT_TEST(testUncheckedFields);
  CPPUNIT_TEST(testRealCapture);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSizes() {
    CPPUNIT_ASSERT_EQUAL(size_t(7824), rspPacketSize(16, 61));
    CPPUNIT_ASSERT_EQUAL(size_t(7824), rspPacketSize(8, 122));
    CPPUNIT_ASSERT_EQUAL(size_t(7824), rspPacketSize(4, 244));
    CPPUNIT_ASSERT_EQUAL(61, maxBeamlets(16));
    CPPUNIT_ASSERT_EQUAL(244, maxBeamlets(4));
    CPPUNIT_ASSERT_EQUAL(8, bytesPerDualPolSample(16));
    CPPUNIT_ASSERT_EQUAL(2, bytesPerDualPolSample(4));
    CPPUNIT_ASSERT_EQUAL(32767, maxSampleValue(16));
    CPPUNIT_ASSERT_EQUAL(127, maxSampleValue(8));
    CPPUNIT_ASSERT_EQUAL(7, maxSampleValue(4));
  }

  void testHeaderLayout() {
    RspHeader h;
    h.version = 3;
    h.sourceInfo1 = 0x83;  // board 3
    h.setClockMHz(160);
    h.setBitsPerSample(4);
    h.setStationId(125, 3);
    h.configuration = 0x5A;
    h.nrBeamlets = 200;
    h.timestamp = 0x11223344;
    h.blockSequenceNumber = 0x00050607;
    uint8_t bytes[16];
    h.write(bytes);
    const uint8_t expected[16] = {3,    0x03, 0x02, 0x5A, 0xA3, 0x0F, 200,  16,
                                  0x44, 0x33, 0x22, 0x11, 0x07, 0x06, 0x05, 0x00};
    for (int i = 0; i < 16; ++i) CPPUNIT_ASSERT_EQUAL(int(expected[i]), int(bytes[i]));
    const RspHeader r = RspHeader::read(bytes);
    CPPUNIT_ASSERT_EQUAL(160, r.clockMHz());
    CPPUNIT_ASSERT_EQUAL(4, r.bitsPerSample());
    CPPUNIT_ASSERT_EQUAL(125, r.stationId());
    CPPUNIT_ASSERT_EQUAL(3, r.rspBoard());
    CPPUNIT_ASSERT(r.stamp() == (RspStamp{0x11223344, 0x00050607}));
    h.setClockMHz(200);
    CPPUNIT_ASSERT_EQUAL(0x83, int(h.sourceInfo1));
    CPPUNIT_ASSERT_EQUAL(200, h.clockMHz());
  }

  void testRoundTripEveryBitMode() {
    std::mt19937 random(11);
    for (int bits : {16, 8, 4}) {
      RspHeader h;
      h.setBitsPerSample(bits);
      h.nrBeamlets = uint8_t(maxBeamlets(bits));
      h.setStationId(7);
      h.timestamp = 1656466201;
      h.blockSequenceNumber = 195312 - 16;
      const int max = maxSampleValue(bits);
      std::uniform_int_distribution<int> pick(-max - 1, max);
      std::vector<Sample> in(size_t(h.nrBeamlets) * kRspSamplesPerPacket * kNrPolarisations);
      for (auto& s : in) s = Sample(int16_t(pick(random)), int16_t(pick(random)));
      in[0] = Sample(int16_t(-max - 1), int16_t(max));  // the extremes, surely
      in[1] = Sample(int16_t(max), int16_t(-max - 1));
      std::vector<uint8_t> packet(rspPacketSize(bits, h.nrBeamlets));
      encodeRspPacket(h, in.data(), packet.data());

      RspHeader got;
      CPPUNIT_ASSERT_EQUAL(RspReject::kNone,
                           validateRspPacket(packet, {200, bits, h.nrBeamlets, 7}, got));
      CPPUNIT_ASSERT_EQUAL(bits, got.bitsPerSample());
      std::vector<Sample> out(in.size());
      decodeRspPayload(packet.data() + kRspHeaderSize, bits, h.nrBeamlets, kRspSamplesPerPacket,
                       out.data());
      CPPUNIT_ASSERT(in == out);
      // One dual-pol sample: beamlet 3, time 5.
      Sample x, y;
      const size_t index = size_t(3) * kRspSamplesPerPacket + 5;
      decodeRspSample(packet.data() + kRspHeaderSize + index * bytesPerDualPolSample(bits), bits, x,
                      y);
      CPPUNIT_ASSERT(x == in[2 * index] && y == in[2 * index + 1]);
    }
  }

  void testFourBitNibbles() {
    // Low nibble real, high nibble imaginary, two's complement.
    const uint8_t bytes[2] = {0x8F, 0x17};  // X = (-1, -8), Y = (7, 1)
    Sample x, y;
    decodeRspSample(bytes, 4, x, y);
    CPPUNIT_ASSERT(x == Sample(-1, -8));
    CPPUNIT_ASSERT(y == Sample(7, 1));
    const uint8_t wide[8] = {0x00, 0x80, 0xFF, 0x7F, 0x01, 0x00, 0xFE, 0xFF};  // 16-bit LE
    decodeRspSample(wide, 16, x, y);
    CPPUNIT_ASSERT(x == Sample(-32768, 32767));
    CPPUNIT_ASSERT(y == Sample(1, -2));
  }

  void testHeaderFaults() {
    RspHeader h;
    const std::vector<uint8_t> good = validPacket(&h);
    CPPUNIT_ASSERT_EQUAL(RspReject::kNone, check(good));
    auto mutated = [&](auto change) {
      std::vector<uint8_t> p = good;
      change(p);
      return check(p);
    };
    CPPUNIT_ASSERT_EQUAL(RspReject::kVersion, mutated([](auto& p) { p[0] = 4; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kVersion,
                         mutated([](auto& p) { p[0] = 2; }));  // 2 only with 16 bit
    CPPUNIT_ASSERT_EQUAL(RspReject::kBitMode, mutated([](auto& p) { p[2] = 3; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kBitMode,
                         mutated([](auto& p) { p[2] = 2; }));  // 4 bit, expected 8
    CPPUNIT_ASSERT_EQUAL(RspReject::kClock, mutated([](auto& p) { p[1] &= 0x7f; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kBlockCount, mutated([](auto& p) { p[7] = 15; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kBeamletCount, mutated([](auto& p) { p[6] = 0; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kBeamletCount, mutated([](auto& p) { p[6] = 123; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kBeamletCount, mutated([](auto& p) { p[6] = 100; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kPayloadError, mutated([](auto& p) { p[1] |= 0x40; }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kTimestamp,
                         mutated([](auto& p) { p[8] = p[9] = p[10] = p[11] = 0xFF; }));
    // Sequence 195313 is beyond an even second (195313 samples), 195312 is not.
    CPPUNIT_ASSERT_EQUAL(RspReject::kTimestamp, mutated([](auto& p) {
                           p[12] = 0xF1;
                           p[13] = 0xFA;
                           p[14] = 0x02;
                         }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kNone, mutated([](auto& p) {
                           p[12] = 0xF0;
                           p[13] = 0xFA;
                           p[14] = 0x02;
                         }));
    // ... but 195312 is beyond an odd second.
    CPPUNIT_ASSERT_EQUAL(RspReject::kTimestamp, mutated([](auto& p) {
                           p[8] += 1;
                           p[12] = 0xF0;
                           p[13] = 0xFA;
                           p[14] = 0x02;
                         }));
    CPPUNIT_ASSERT_EQUAL(RspReject::kStation, mutated([](auto& p) { p[5] = 0; }));
    // Without expectations, only the packet's own consistency is checked.
    std::vector<uint8_t> other = good;
    other[1] &= 0x7f;  // 160 MHz
    other[5] = 0;      // another station
    CPPUNIT_ASSERT_EQUAL(RspReject::kNone, check(other, RspExpectation{}));
    // 100 beamlets with a 122-beamlet packet size: the size, not the count, is wrong.
    other = good;
    other[6] = 100;
    CPPUNIT_ASSERT_EQUAL(RspReject::kSize, check(other, RspExpectation{}));
    // The first fault in the documented order wins.
    other = good;
    other[0] = 9;
    other[7] = 3;
    other.pop_back();
    CPPUNIT_ASSERT_EQUAL(RspReject::kVersion, check(other));

    // Version 2 is fine with 16-bit samples.
    RspHeader h16 = h;
    h16.version = 2;
    h16.setBitsPerSample(16);
    h16.nrBeamlets = 61;
    std::vector<Sample> samples(size_t(61) * 16 * 2);
    std::vector<uint8_t> p16(rspPacketSize(16, 61));
    encodeRspPacket(h16, samples.data(), p16.data());
    CPPUNIT_ASSERT_EQUAL(RspReject::kNone, check(p16, {200, 16, 61, 214}));

    // Every reason has its own text.
    std::set<std::string> texts;
    for (int r = 0; r < kNrRspRejects; ++r) texts.insert(toString(RspReject(r)));
    CPPUNIT_ASSERT_EQUAL(size_t(kNrRspRejects), texts.size());
  }

  void testOddSizesAndTruncation() {
    const std::vector<uint8_t> good = validPacket();
    for (size_t size : {size_t(0), size_t(1), size_t(15)}) {
      std::vector<uint8_t> p(good.begin(), good.begin() + long(size));
      CPPUNIT_ASSERT_EQUAL(RspReject::kTruncated, check(p));
    }
    for (size_t size : {size_t(16), size_t(17), good.size() - 1, good.size() - 4}) {
      std::vector<uint8_t> p(good.begin(), good.begin() + long(size));
      CPPUNIT_ASSERT_EQUAL(RspReject::kSize, check(p));
    }
    std::vector<uint8_t> longer = good;
    longer.push_back(0);
    CPPUNIT_ASSERT_EQUAL(RspReject::kSize, check(longer));
  }

  void testUncheckedFields() {
    // The configuration byte and the board bits are never validated.
    for (uint8_t config : {0x00, 0xAA, 0xFF})
      for (uint8_t board : {0, 1, 4, 31}) {
        std::vector<uint8_t> p = validPacket();
        p[3] = config;
        p[1] = uint8_t((p[1] & 0xE0) | board);
        p[4] = uint8_t((p[4] & 0xE0) | board);
        CPPUNIT_ASSERT_EQUAL(RspReject::kNone, check(p));
      }
  }

  void testRealCapture() {
    const SampleClock clock(200);
    const RspExpectation expect{200, 8, 122, 214};
    const size_t packetSize = 7824;
    for (int port = 0; port < 4; ++port) {
      const std::string path =
          test::testDataDir() + "/ie613-capture/udp_1613" + std::to_string(port) + ".rsp";
      const std::vector<uint8_t> file = readBytes(path);
      CPPUNIT_ASSERT_EQUAL(size_t(64) * packetSize, file.size());
      int64_t previous = -1;
      for (size_t offset = 0; offset < file.size(); offset += packetSize) {
        RspHeader h;
        const std::span<const uint8_t> datagram(file.data() + offset, packetSize);
        const RspReject reason = validateRspPacket(datagram, expect, h);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(
            path + " packet " + std::to_string(offset / packetSize) + ": " + toString(reason),
            RspReject::kNone, reason);
        CPPUNIT_ASSERT_EQUAL(6848 + port, int(h.station));
        CPPUNIT_ASSERT_EQUAL(0xAA, int(h.configuration));
        CPPUNIT_ASSERT_EQUAL(uint32_t(1656466200), h.timestamp);
        const int64_t sample = clock.sampleNumber(h.stamp());
        if (previous < 0) {
          CPPUNIT_ASSERT_EQUAL(uint32_t(port == 2 ? 10 : 26), h.blockSequenceNumber);
          CPPUNIT_ASSERT_EQUAL(clock.secondStart(1656466200) + (port == 2 ? 10 : 26), sample);
        } else {
          CPPUNIT_ASSERT_EQUAL(previous + 16, sample);
        }
        previous = sample;
        // A decoded sample equals the raw bytes as signed int8: beamlet 121, time 15.
        const uint8_t* raw = datagram.data() + kRspHeaderSize + (121 * 16 + 15) * 4;
        Sample x, y;
        decodeRspSample(raw, 8, x, y);
        CPPUNIT_ASSERT(x == Sample(int8_t(raw[0]), int8_t(raw[1])));
        CPPUNIT_ASSERT(y == Sample(int8_t(raw[2]), int8_t(raw[3])));
      }
    }
    // The whole payload decodes to the raw bytes, too (first packet of port 0).
    const std::vector<uint8_t> file =
        readBytes(test::testDataDir() + "/ie613-capture/udp_16130.rsp");
    std::vector<Sample> samples(122 * 16 * 2);
    decodeRspPayload(file.data() + kRspHeaderSize, 8, 122, 16, samples.data());
    bool nonZero = false;
    for (size_t i = 0; i < samples.size(); ++i) {
      CPPUNIT_ASSERT(samples[i] == Sample(int8_t(file[16 + 2 * i]), int8_t(file[17 + 2 * i])));
      nonZero |= samples[i] != Sample(0, 0);
    }
    CPPUNIT_ASSERT(nonZero);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RspPacketTest);
