// The real IE613 capture (test/data/ie613-capture: 4 ports, 8-bit, 122 beamlets, subbands
// 12..499, port 2 starting 16 samples early) served as blocks: every valid sample equals
// the packet payload bytes, and what a port did not send is flagged.
#include <cppunit/extensions/HelperMacros.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <map>

#include "InputTestUtil.h"
#include "StationInput.h"
#include "TestData.h"
#include "rtcp/Files.h"

namespace rtcp::ion {
namespace {

constexpr int kPorts = 4;
constexpr int kBeamlets = 122;

std::string capture(int port) {
  return rtcp::test::testDataDir() + "/ie613-capture/udp_1613" + std::to_string(port) + ".rsp";
}

/// The samples a port sent: first sample number -> payload [beamlet][time] bytes.
std::map<int64_t, const uint8_t*> packetsOf(const std::vector<uint8_t>& file) {
  const SampleClock clock(200);
  const size_t size = rspPacketSize(8, kBeamlets);
  std::map<int64_t, const uint8_t*> packets;
  for (size_t offset = 0; offset + size <= file.size(); offset += size) {
    const RspHeader h = RspHeader::read(file.data() + offset);
    packets[clock.sampleNumber(h.stamp())] = file.data() + offset + kRspHeaderSize;
  }
  return packets;
}

}  // namespace

class Ie613CaptureTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(Ie613CaptureTest);
  CPPUNIT_TEST(testServedBlocksEqualPayload);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testServedBlocksEqualPayload() {
    test::TempDir dir;
    {
      std::ofstream parset(dir.file("ie613.parset"));
      parset << "Observation.ObsID = 613\n"
                "Observation.startTime = '2022-06-29 01:30:00'\n"
                "Observation.stopTime = '2022-06-29 01:30:01'\n"
                "Observation.sampleClock = 200\n"
                "Observation.nrBitsPerSample = 8\n"
                "Observation.antennaSet = HBA_JOINED\n"
                "Observation.bandFilter = HBA_110_190\n"
                "Observation.VirtualInstrument.stationList = [IE613]\n"
                "Observation.channelsPerSubband = 16\n"
                "Observation.nrBeams = 1\n"
                "Observation.Beam[0].angle1 = 5.530512067257031\n"
                "Observation.Beam[0].angle2 = 0.45553093477052004\n"
                "Observation.Beam[0].subbandList = [12..499]\n"
                "PIC.Core.IE613HBA.RSP.ports = [file:"
             << capture(0) << ", file:" << capture(1) << ", file:" << capture(2)
             << ", file:" << capture(3) << "]\n"
             << "OLAP.CNProc.integrationSteps = 4\n"
                "OLAP.realTime = F\n"
                "OLAP.nrSecondsOfBuffer = 0.05\n";
    }
    const ObservationSettings s = ObservationSettings::fromFile(dir.file("ie613.parset"));
    CPPUNIT_ASSERT_EQUAL(214, s.stations.at(0).id);
    std::vector<std::vector<uint8_t>> files;
    std::vector<std::map<int64_t, const uint8_t*>> sent;
    for (int port = 0; port < kPorts; ++port) {
      const std::string bytes = rtcp::readFile(capture(port));
      files.emplace_back(bytes.begin(), bytes.end());
      sent.push_back(packetsOf(files.back()));
      CPPUNIT_ASSERT_EQUAL(size_t(64), sent.back().size());
    }

    StationInput input(s);
    input.start();
    const int history = nrHistorySamples(s);
    // The capture covers [start + 10, start + 1050): blocks of 64 samples, up to one past the end.
    for (int64_t block = 0; block < 22; ++block) {
      auto b = test::getBlock(input, block, 0, 0, s.nrSubbands());
      CPPUNIT_ASSERT_EQUAL(0, b->delays[0].coarse);
      int validCount[kPorts] = {};
      for (int subband = 0; subband < s.nrSubbands(); ++subband) {
        const int port = subband / kBeamlets, beamlet = subband % kBeamlets;
        for (int t = 0; t < b->header.nrSamples; ++t) {
          const int64_t n = s.blockStartSample(block) - history + t;
          auto packet = sent[size_t(port)].upper_bound(n);
          const uint8_t* expected = nullptr;
          if (packet != sent[size_t(port)].begin() && (--packet)->first + 16 > n)
            expected = packet->second + (size_t(beamlet) * 16 + size_t(n - packet->first)) * 4;
          CPPUNIT_ASSERT_EQUAL(expected != nullptr, b->isValid(subband, t));
          if (expected) {
            CPPUNIT_ASSERT(std::memcmp(expected, test::blockSample(*b, subband, t), 4) == 0);
            if (beamlet == 0) ++validCount[port];
          }
        }
      }
      if (block == 0) {  // port 2 started 16 samples earlier than the others
        CPPUNIT_ASSERT_EQUAL(64 - 26, validCount[0]);
        CPPUNIT_ASSERT_EQUAL(validCount[0] + 16, validCount[2]);
        CPPUNIT_ASSERT_EQUAL(validCount[0], validCount[3]);
      }
      if (block == 21) CPPUNIT_ASSERT_EQUAL(0, validCount[0] + validCount[2]);
    }
    const StationStatistics st = input.statistics().at(0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(kPorts * 64), st.packetsReceived);
    CPPUNIT_ASSERT_EQUAL(uint64_t(kPorts * 64), st.packetsAccepted);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.rejectedTotal() + st.late + st.duplicated);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(Ie613CaptureTest);

}  // namespace rtcp::ion
