// The beam-formed block on the storage stream (BeamFormedWire.h): the header at its
// documented offsets, the round trip, the CRC, and every bad header field named.
#include <cppunit/extensions/HelperMacros.h>

#include <vector>

#include "rtcp/BeamFormedWire.h"
#include "rtcp/Crc64.h"

using namespace rtcp;

namespace {

BeamFormedData sample() {
  BeamFormedData data(StokesKind::kIQUV, 4, 6);
  data.sap = 1, data.tab = 300, data.subband = 70000, data.block = 5'000'000'000;
  for (size_t i = 0; i < data.samples.size(); ++i) data.samples[i] = float(i) * 0.5f - 3;
  for (size_t i = 0; i < data.validFraction.size(); ++i) data.validFraction[i] = float(i % 5) / 4;
  return data;
}

std::vector<uint8_t> bytesOf(const BeamFormedData& data) {
  std::vector<uint8_t> bytes(beamFormedSerialisedSize(data));
  serialiseBeamFormed(data, 77, bytes);
  return bytes;
}

}  // namespace

class BeamFormedWireTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedWireTest);
  CPPUNIT_TEST(testLayout);
  CPPUNIT_TEST(testRoundTrip);
  CPPUNIT_TEST(testBadHeaders);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testLayout() {
    const std::vector<uint8_t> bytes = bytesOf(sample());
    CPPUNIT_ASSERT_EQUAL(size_t(64 + (4 + 1) * 6 * 4 * 4), bytes.size());
    CPPUNIT_ASSERT_EQUAL(std::string("RTBF"), std::string(bytes.begin(), bytes.begin() + 4));
    CPPUNIT_ASSERT_EQUAL(uint8_t(1), bytes[4]);
    CPPUNIT_ASSERT_EQUAL(uint8_t(64), bytes[6]);
    CPPUNIT_ASSERT_EQUAL(uint8_t(77), bytes[8]);
    CPPUNIT_ASSERT_EQUAL(uint8_t(1), bytes[16]);                                // SAP
    CPPUNIT_ASSERT_EQUAL(300, bytes[18] | bytes[19] << 8);                      // TAB
    CPPUNIT_ASSERT_EQUAL(70000, bytes[20] | bytes[21] << 8 | bytes[22] << 16);  // subband
    CPPUNIT_ASSERT_EQUAL(uint8_t(1), bytes[24]);                                // IQUV
    CPPUNIT_ASSERT_EQUAL(uint8_t(4), bytes[26]);                                // channels
    CPPUNIT_ASSERT_EQUAL(uint8_t(6), bytes[28]);                                // samples
    const BeamFormedHeader h = BeamFormedHeader::read(bytes.data());
    CPPUNIT_ASSERT_EQUAL(uint64_t(5'000'000'000), h.block);
    CPPUNIT_ASSERT_EQUAL(uint64_t(bytes.size() - 64), h.payloadSize);
    CPPUNIT_ASSERT_EQUAL(crc64(bytes.data() + 64, bytes.size() - 64), h.payloadCrc);
  }

  void testRoundTrip() {
    const BeamFormedData data = sample();
    const std::vector<uint8_t> bytes = bytesOf(data);
    const BeamFormedHeader h = BeamFormedHeader::read(bytes.data());
    CPPUNIT_ASSERT(!checkBeamFormedHeader(h));
    const BeamFormedData back = beamFormedFromPayload(h, bytes.data() + 64);
    CPPUNIT_ASSERT(back.kind == data.kind);
    CPPUNIT_ASSERT_EQUAL(data.sap, back.sap);
    CPPUNIT_ASSERT_EQUAL(data.tab, back.tab);
    CPPUNIT_ASSERT_EQUAL(data.subband, back.subband);
    CPPUNIT_ASSERT_EQUAL(data.block, back.block);
    CPPUNIT_ASSERT(std::equal(data.samples.begin(), data.samples.end(), back.samples.begin()));
    CPPUNIT_ASSERT(std::equal(data.validFraction.begin(), data.validFraction.end(),
                              back.validFraction.begin()));
    // A flipped payload bit no longer matches the header's CRC.
    std::vector<uint8_t> flipped = bytes;
    flipped[100] ^= 4;
    CPPUNIT_ASSERT(crc64(flipped.data() + 64, flipped.size() - 64) != h.payloadCrc);
  }

  void testBadHeaders() {
    const BeamFormedHeader good = BeamFormedHeader::read(bytesOf(sample()).data());
    const auto reason = [&](auto edit) {
      BeamFormedHeader h = good;
      edit(h);
      const auto problem = checkBeamFormedHeader(h);
      CPPUNIT_ASSERT(problem);
      return *problem;
    };
    CPPUNIT_ASSERT(reason([](auto& h) { h.magic = 0x50435452; }).find("magic") !=
                   std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.version = 2; }).find("version 2") != std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.headerSize = 48; }).find("header size") !=
                   std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.stokes = 3; }).find("Stokes kind 3") !=
                   std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.nrChannels = 0; }).find("channels") != std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.nrSamples = 1u << 30; }).find("samples") !=
                   std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.payloadSize += 4; }).find("payload size") !=
                   std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.stokes = 0; }).find("payload size") != std::string::npos);
    CPPUNIT_ASSERT(reason([](auto& h) { h.reserved = 1; }).find("reserved") != std::string::npos);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedWireTest);
