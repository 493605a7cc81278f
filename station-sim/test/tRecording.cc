// Recordings as station-sim writes them: valid packets of the expected station, clock and
// bit mode; consecutive sample counts across second boundaries; subbands spread over the
// ports in order; quantiser levels; and the drop log of simulated packet loss.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "SimTestUtil.h"
#include "StationSimulator.h"

namespace rtcp::sim::test {

class RecordingTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(RecordingTest);
  CPPUNIT_TEST(testSixteenBit);
  CPPUNIT_TEST(testEightBit);
  CPPUNIT_TEST(testFourBit);
  CPPUNIT_TEST(testDropLogListsExactlyTheMissingPackets);
  CPPUNIT_TEST_SUITE_END();

 public:
  static std::string subbandRange(int first, int last) {
    std::ostringstream text;
    text << '[' << first << ".." << last << ']';
    return text.str();
  }

  void testSixteenBit() { checkBitMode(16); }
  void testEightBit() { checkBitMode(8); }
  void testFourBit() { checkBitMode(4); }

  /// Two stations, maxBeamlets + 9 subbands (so two streams each), 0.1 s across the
  /// second boundary 20:00:01; a tone in subband index maxBeamlets + 2 only.
  void checkBitMode(int bits) {
    TempDir dir;
    const int perPacket = maxBeamlets(bits), nrSubbands = perPacket + 9;
    const int toneIndex = perPacket + 2, firstNumber = 100;
    const double fs = 195312.5;
    const double tone = (firstNumber + toneIndex) * fs + 0.2 * fs;  // LBA_30_90: zone 1
    const ObservationSettings settings = settingsFrom(makeParset(
        {"CS001", "RS106"}, subbandRange(firstNumber, firstNumber + nrSubbands - 1), bits,
        "Sim.noisePower = 1\nSim.tone.frequency = " + std::to_string(tone) +
            "\nSim.tone.amplitude = 1\n",
        "2026-11-22 20:00:00.95"));
    SimulatorOptions options;
    options.recordDirectory = dir.path();
    options.duration = 0.1;
    const SimulationSummary summary = StationSimulator(settings, options).run();
    if (bits == 16) CPPUNIT_ASSERT_EQUAL(uint64_t(0), summary.clipped);
    if (bits == 4) CPPUNIT_ASSERT(summary.clipped > 0);  // 2.5 rms against +-7: some clip
    const SampleClock clock(200);
    const int64_t firstSample = clock.firstSampleAtOrAfter(parseUtc("2026-11-22 20:00:00.95"));
    const int64_t nrPackets =
        (clock.firstSampleAtOrAfter(parseUtc("2026-11-22 20:00:01.05")) - firstSample + 15) / 16;

    for (const StationSettings& station : settings.stations)
      for (int port = 0; port < 2; ++port) {
        const std::string name = port ? station.name + "-1.rsp" : station.name + ".rsp";
        const auto packets = readPackets(dir / name);
        CPPUNIT_ASSERT_EQUAL(size_t(nrPackets), packets.size());
        const int beamlets = port == 0 ? perPacket : 9;
        RspExpectation expect{200, bits, beamlets, station.id};
        bool crossedSecond = false;
        for (size_t p = 0; p < packets.size(); ++p) {
          RspHeader h;
          CPPUNIT_ASSERT_EQUAL(std::string("accepted"),
                               std::string(toString(validateRspPacket(packets[p], expect, h))));
          CPPUNIT_ASSERT_EQUAL(port, h.rspBoard());
          CPPUNIT_ASSERT_EQUAL(station.id * 32 + port, int(h.station));
          CPPUNIT_ASSERT_EQUAL(firstSample + int64_t(p) * 16, clock.sampleNumber(h.stamp()));
          crossedSecond |= h.timestamp != RspHeader::read(packets.front().data()).timestamp;
        }
        CPPUNIT_ASSERT(crossedSecond);
        checkSamples(decodeRecording(dir / name), bits, port == 1 ? toneIndex - perPacket : -1);
      }
  }

  /// Every beamlet has the quantiser's rms; only the tone's beamlet has a spectral line.
  void checkSamples(const Decoded& d, int bits, int toneBeamlet) {
    const double target = bits == 16 ? 1024 : bits == 8 ? 20 : 2.5;
    for (int b = 0; b < d.nrBeamlets; ++b) {
      double power = 0;
      std::complex<double> line = 0;  // correlation with the tone at 0.2 fs
      const std::complex<float>* x = d.at(b, 0);
      for (int64_t t = 0; t < d.nrSamples; ++t) {
        power += std::norm(x[t]);
        line += std::complex<double>(x[t]) *
                std::polar(1.0, -2 * M_PI * 0.2 * double(d.firstSample + t));
      }
      const double rms = std::sqrt(power / d.nrSamples / 2);
      const double lineFraction = std::norm(line) / d.nrSamples / power;  // ~ A^2 / P with a tone
      // Each subband's gain brings its total power (noise, plus the tone's) to the target.
      CPPUNIT_ASSERT_DOUBLES_EQUAL(target, rms, 0.1 * target);
      if (b == toneBeamlet)
        CPPUNIT_ASSERT(lineFraction > 0.3);  // half the power is the tone's
      else
        CPPUNIT_ASSERT(lineFraction < 0.01);
    }
  }

  /// Sim.packetLossProbability drops packets at random; the recording and the drop log
  /// together hold every packet exactly once.
  void testDropLogListsExactlyTheMissingPackets() {
    TempDir dir;
    const ObservationSettings settings = settingsFrom(makeParset(
        {"CS001", "RS106"}, "[300..303]", 16, "Sim.packetLossProbability = 0.05\nSim.seed = 5\n"));
    SimulatorOptions options;
    options.recordDirectory = dir.path();
    options.duration = 0.05;
    const SimulationSummary summary = StationSimulator(settings, options).run();
    CPPUNIT_ASSERT_EQUAL(dir / "dropped-packets.txt", summary.dropLogPath);
    using Key =
        std::tuple<std::string, int, uint32_t, uint32_t>;  // station port timestamp sequence
    std::set<Key> dropped, recorded;
    std::ifstream log(summary.dropLogPath);
    for (std::string line; std::getline(log, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      Key key;
      fields >> std::get<0>(key) >> std::get<1>(key) >> std::get<2>(key) >> std::get<3>(key);
      CPPUNIT_ASSERT(fields);
      CPPUNIT_ASSERT(dropped.insert(key).second);
    }
    for (const StationSettings& station : settings.stations)
      for (const auto& packet : readPackets(dir / (station.name + ".rsp"))) {
        const RspHeader h = RspHeader::read(packet.data());
        recorded.insert({station.name, h.rspBoard(), h.timestamp, h.blockSequenceNumber});
      }
    const SampleClock clock(200);
    const int64_t first = settings.startSample();
    const int64_t nrPackets =
        (clock.firstSampleAtOrAfter(settings.startTime + 0.05) - first + 15) / 16;
    CPPUNIT_ASSERT_EQUAL(uint64_t(dropped.size()), summary.dropped);
    const double expected = 0.05 * 2 * nrPackets;
    CPPUNIT_ASSERT(std::abs(double(dropped.size()) - expected) < 5 * std::sqrt(expected));
    for (const StationSettings& station : settings.stations)
      for (int64_t p = 0; p < nrPackets; ++p) {
        const RspStamp stamp = clock.stamp(first + 16 * p);
        const Key key{station.name, 0, stamp.timestamp, stamp.sequence};
        CPPUNIT_ASSERT(dropped.count(key) + recorded.count(key) == 1);
      }
    CPPUNIT_ASSERT_EQUAL(size_t(2 * nrPackets), dropped.size() + recorded.size());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RecordingTest);

}  // namespace rtcp::sim::test
