// Tests of ObservationSettings (the parset turned into typed settings, with every
// validation rule) and of the station table it draws positions and IDs from.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <utility>

#include "SettingsTestUtil.h"
#include "TestData.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/SampleTime.h"

namespace {

using rtcp::ObservationSettings;
using rtcp::Parset;
using rtcp::ParsetError;
using rtcp::StationTable;
using namespace rtcp::test::settings;

void assertSameSettings(const ObservationSettings& a, const ObservationSettings& b) {
  CPPUNIT_ASSERT_EQUAL(a.observationId, b.observationId);
  CPPUNIT_ASSERT_EQUAL(a.startTime, b.startTime);
  CPPUNIT_ASSERT_EQUAL(a.stopTime, b.stopTime);
  CPPUNIT_ASSERT_EQUAL(a.clockMHz, b.clockMHz);
  CPPUNIT_ASSERT_EQUAL(a.bitsPerSample, b.bitsPerSample);
  CPPUNIT_ASSERT_EQUAL(a.antennaSet, b.antennaSet);
  CPPUNIT_ASSERT_EQUAL(a.antennaField, b.antennaField);
  CPPUNIT_ASSERT_EQUAL(a.bandFilter, b.bandFilter);
  CPPUNIT_ASSERT_EQUAL(a.nyquistZone, b.nyquistZone);
  CPPUNIT_ASSERT(a.stations == b.stations);
  CPPUNIT_ASSERT(a.beams == b.beams);
  CPPUNIT_ASSERT(a.subbands == b.subbands);
  CPPUNIT_ASSERT(a.referencePhaseCenter == b.referencePhaseCenter);
  CPPUNIT_ASSERT_EQUAL(a.channelsPerSubband, b.channelsPerSubband);
  CPPUNIT_ASSERT_EQUAL(a.spectraPerBlock, b.spectraPerBlock);
  CPPUNIT_ASSERT_EQUAL(a.blocksPerIntegration, b.blocksPerIntegration);
  CPPUNIT_ASSERT_EQUAL(a.delayCompensation, b.delayCompensation);
  CPPUNIT_ASSERT_EQUAL(a.correctBandPass, b.correctBandPass);
  CPPUNIT_ASSERT_EQUAL(a.realTime, b.realTime);
  CPPUNIT_ASSERT_EQUAL(a.secondsOfBuffer, b.secondsOfBuffer);
  CPPUNIT_ASSERT_EQUAL(a.maxNetworkDelay, b.maxNetworkDelay);
  CPPUNIT_ASSERT(a.tiedArrayStationNames == b.tiedArrayStationNames);
  CPPUNIT_ASSERT(a.correlatedOutput == b.correlatedOutput);
  CPPUNIT_ASSERT(a.computeNodes == b.computeNodes);
  CPPUNIT_ASSERT(a.sim == b.sim);
  CPPUNIT_ASSERT(a.flagging == b.flagging);
  CPPUNIT_ASSERT(a.campaign == b.campaign);
  CPPUNIT_ASSERT(a.beamTargets == b.beamTargets);
  CPPUNIT_ASSERT(a.analogBeam == b.analogBeam);
  CPPUNIT_ASSERT(b.unknownKeys.empty());
}

}  // namespace

class ObservationSettingsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ObservationSettingsTest);
  CPPUNIT_TEST(testStationTableIds);
  CPPUNIT_TEST(testStationTableErrors);
  CPPUNIT_TEST(testDataDirectory);
  CPPUNIT_TEST(testDemoParset);
  CPPUNIT_TEST(testDemoTiming);
  CPPUNIT_TEST(testChannelFrequencies);
  CPPUNIT_TEST(testDefaults);
  CPPUNIT_TEST(testPositions);
  CPPUNIT_TEST(testHbaAndClock160);
  CPPUNIT_TEST(testBeamsAndOutput);
  CPPUNIT_TEST(testSim);
  CPPUNIT_TEST(testSimPolarisationAndPulsar);
  CPPUNIT_TEST(testRoundTripDemo);
  CPPUNIT_TEST(testRoundTripEverything);
  CPPUNIT_TEST(testUnknownKeyReported);
  CPPUNIT_TEST(testMissingRequiredKeys);
  CPPUNIT_TEST(testUnknownStation);
  CPPUNIT_TEST(testStopNotAfterStart);
  CPPUNIT_TEST(testBadInstrument);
  CPPUNIT_TEST(testBadSubbands);
  CPPUNIT_TEST(testTooManySubbandsForPorts);
  CPPUNIT_TEST(testBadProcessing);
  CPPUNIT_TEST(testBadOutput);
  CPPUNIT_TEST(testBadSim);
  CPPUNIT_TEST(testDescriptionKeys);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testStationTableIds() {
    const StationTable& t = StationTable::shipped();
    CPPUNIT_ASSERT(t.size() > 100);
    CPPUNIT_ASSERT_EQUAL(1, t.stationId("CS001").value());
    CPPUNIT_ASSERT_EQUAL(106, t.stationId("RS106").value());
    CPPUNIT_ASSERT_EQUAL(125, t.stationId("RS205").value());
    CPPUNIT_ASSERT_EQUAL(214, t.stationId("IE613").value());
    CPPUNIT_ASSERT(!t.stationId("XX999"));
    const auto lba = t.find("CS001", "LBA");
    CPPUNIT_ASSERT(lba);
    // LOFAR's CS001-AntennaField.conf (ITRF2005, 2015.5): 3826923.50275 460915.488115 5064643.517
    CPPUNIT_ASSERT_EQUAL(3826923.503, lba->position[0]);
    CPPUNIT_ASSERT_EQUAL(460915.488, lba->position[1]);
    CPPUNIT_ASSERT_EQUAL(5064643.517, lba->position[2]);
    CPPUNIT_ASSERT_EQUAL(-529021.899, t.find("IE613", "LBA")->position[1]);
    CPPUNIT_ASSERT(t.find("CS001", "HBA1"));
    CPPUNIT_ASSERT(!t.find("IE613", "HBA0"));
  }

  void testStationTableErrors() {
    TempDir dir;
    const std::string header = "# comment\nSTATION,ID,FIELD,X,Y,Z\n";
    const std::string good =
        dir.write("good.csv", header + "AB001,7,LBA,1,2,3\r\n\n# x\nAB001,7,HBA,4,5,6\n");
    const StationTable t = StationTable::fromFile(good);
    CPPUNIT_ASSERT_EQUAL(size_t(2), t.size());
    CPPUNIT_ASSERT_EQUAL(6.0, t.find("AB001", "HBA")->position[2]);
    const auto errorOf = [&](const std::string& name, const std::string& text) -> std::string {
      const std::string path = dir.write(name, text);
      try {
        StationTable::fromFile(path);
      } catch (const ParsetError& e) {
        CPPUNIT_ASSERT(contains(e.what(), path));
        return e.what();
      }
      CPPUNIT_FAIL("bad table accepted: " + name);
      return {};
    };
    CPPUNIT_ASSERT(
        contains(errorOf("number.csv", header + "AB001,7,LBA,1,2,3\nAB002,8,LBA,1,x,3\n"),
                 "number.csv:4: bad coordinate 'x'"));
    CPPUNIT_ASSERT(
        contains(errorOf("id.csv", header + "AB001,q,LBA,1,2,3\n"), "id.csv:3: bad station ID"));
    CPPUNIT_ASSERT(contains(errorOf("cells.csv", header + "AB001,7,LBA,1,2\n"),
                            "cells.csv:3: expected 6 fields"));
    CPPUNIT_ASSERT(
        contains(errorOf("header.csv", "STATION,X,Y\n"), "header.csv:1: expected the header"));
    CPPUNIT_ASSERT(contains(errorOf("twice.csv", header + "AB001,7,LBA,1,2,3\nAB001,7,LBA,1,2,3\n"),
                            "twice.csv:4: field AB001 LBA listed twice"));
    CPPUNIT_ASSERT(contains(errorOf("empty.csv", "# nothing\n"), "no header"));
    CPPUNIT_ASSERT_THROW(StationTable::fromFile(dir.path() + "/absent.csv"), ParsetError);
  }

  void testDataDirectory() {
    const char* old = std::getenv("RTCP_DATA_DIR");
    const std::string saved = old ? old : "";
    setenv("RTCP_DATA_DIR", "/some/where", 1);
    CPPUNIT_ASSERT_EQUAL(std::string("/some/where"), rtcp::dataDirectory());
    unsetenv("RTCP_DATA_DIR");
    const std::string dir = rtcp::dataDirectory();
    if (!saved.empty()) setenv("RTCP_DATA_DIR", saved.c_str(), 1);
    CPPUNIT_ASSERT(std::filesystem::exists(dir + "/StationPositions.csv"));
  }

  void testDemoParset() {
    const ObservationSettings s =
        ObservationSettings::fromFile(rtcp::test::sourceDir() + "/parsets/demo.parset");
    CPPUNIT_ASSERT_EQUAL(int64_t(1001), s.observationId);
    CPPUNIT_ASSERT_EQUAL(8, s.nrStations());
    CPPUNIT_ASSERT_EQUAL(8, s.nrSubbands());
    CPPUNIT_ASSERT_EQUAL(std::string("LBA"), s.antennaField);
    CPPUNIT_ASSERT_EQUAL(1, s.nyquistZone);
    CPPUNIT_ASSERT_EQUAL(64, s.channelsPerSubband);
    const rtcp::StationSettings& cs001 = s.stations[0];
    CPPUNIT_ASSERT_EQUAL(std::string("CS001LBA"), cs001.name);
    CPPUNIT_ASSERT_EQUAL(std::string("CS001"), cs001.station);
    CPPUNIT_ASSERT_EQUAL(std::string("LBA"), cs001.field);
    CPPUNIT_ASSERT_EQUAL(1, cs001.id);
    CPPUNIT_ASSERT(cs001.position == table().find("CS001", "LBA")->position);
    CPPUNIT_ASSERT((cs001.inputs == std::vector<std::string>{"udp:127.0.0.1:10010"}));
    CPPUNIT_ASSERT_EQUAL(106, s.stations[7].id);
    CPPUNIT_ASSERT_EQUAL(7, s.stationIndex("RS106"));
    CPPUNIT_ASSERT_EQUAL(-1, s.stationIndex("RS205"));
    CPPUNIT_ASSERT_EQUAL(3826577.066, s.referencePhaseCenter[0]);
    CPPUNIT_ASSERT_EQUAL(300, s.subbands[0].number);
    CPPUNIT_ASSERT_EQUAL(58593750.0, s.subbands[0].frequency);  // 200e6 / 1024 * 300
    CPPUNIT_ASSERT_EQUAL(7, s.subbands[7].index);
    CPPUNIT_ASSERT_EQUAL(307, s.subbands[7].number);
    CPPUNIT_ASSERT_EQUAL(std::string("L1001_SAP000_SB000_uv.MS"), s.correlatedOutput.filenames[0]);
    CPPUNIT_ASSERT_EQUAL(std::string("localhost"), s.correlatedOutput.hosts[7]);
    CPPUNIT_ASSERT_EQUAL(std::string("demo-output/L1001"), s.correlatedOutput.directories[7]);
    CPPUNIT_ASSERT_EQUAL(4100, s.correlatedOutput.storagePort);
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.sim.sources.size());
    CPPUNIT_ASSERT_EQUAL(4.0, s.sim.sources[0].flux);
    CPPUNIT_ASSERT_EQUAL(5.2569, s.sim.sources[0].direction.ra);
    CPPUNIT_ASSERT(s.unknownKeys.empty());
    CPPUNIT_ASSERT(s.warnings.empty());
    CPPUNIT_ASSERT(contains(s.parsetText, "# rtcp demo observation"));
  }

  void testDemoTiming() {
    const ObservationSettings s =
        ObservationSettings::fromFile(rtcp::test::sourceDir() + "/parsets/demo.parset");
    CPPUNIT_ASSERT_EQUAL(1795377600.0, s.startTime);  // 2026-11-22 20:00:00 UTC
    CPPUNIT_ASSERT_EQUAL(1795377630.0, s.stopTime);
    // An even second starts exactly on a sample: 1795377600 * 195312.5.
    CPPUNIT_ASSERT_EQUAL(int64_t(350659687500000), s.startSample());
    CPPUNIT_ASSERT_EQUAL(int64_t(3052 * 64), s.samplesPerBlock());
    CPPUNIT_ASSERT_EQUAL(int64_t(29), s.nrBlocks());  // 30 s * 195312.5 / 195328 = 29.998
    CPPUNIT_ASSERT_EQUAL(int64_t(350659687500000 + 2 * 195328), s.blockStartSample(2));
    CPPUNIT_ASSERT_EQUAL(61, s.beamletsPerPacket());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(195328 / 195312.5, s.blockDuration(), 1e-12);
  }

  void testChannelFrequencies() {
    const ObservationSettings s = settingsOf(Keys());
    const double f = 195312.5 * 300;
    CPPUNIT_ASSERT_EQUAL(f, s.channelFrequency(0, 32));  // DC at channel C/2
    CPPUNIT_ASSERT_EQUAL(f - 32 * 3051.7578125, s.channelFrequency(0, 0));
    CPPUNIT_ASSERT_EQUAL(f + 3051.7578125, s.channelFrequency(0, 33));
    CPPUNIT_ASSERT_EQUAL(195312.5 * 302 + 31 * 3051.7578125, s.channelFrequency(2, 63));
    const ObservationSettings one = settingsOf(Keys().set("Observation.channelsPerSubband", "1"));
    CPPUNIT_ASSERT_EQUAL(f, one.channelFrequency(0, 0));
    CPPUNIT_ASSERT_EQUAL(195312.5, one.channelWidth());
  }

  void testDefaults() {
    const ObservationSettings s = settingsOf(Keys());
    CPPUNIT_ASSERT_EQUAL(200, s.clockMHz);
    CPPUNIT_ASSERT_EQUAL(16, s.bitsPerSample);
    CPPUNIT_ASSERT_EQUAL(64, s.channelsPerSubband);
    CPPUNIT_ASSERT_EQUAL(3072, s.spectraPerBlock);  // COBALT's Cobalt.blockSize 196608
    CPPUNIT_ASSERT_EQUAL(1, s.blocksPerIntegration);
    CPPUNIT_ASSERT(s.delayCompensation && s.correctBandPass && s.realTime && s.correctClocks);
    CPPUNIT_ASSERT_EQUAL(2.5, s.secondsOfBuffer);
    CPPUNIT_ASSERT_EQUAL(0.25, s.maxNetworkDelay);  // LOFAR's default
    CPPUNIT_ASSERT(s.tiedArrayStationNames.empty());
    CPPUNIT_ASSERT(s.correlatedOutput.enabled);
    CPPUNIT_ASSERT((s.correlatedOutput.filenames ==
                    std::vector<std::string>{"L42_SAP000_SB000_uv.MS", "L42_SAP000_SB001_uv.MS",
                                             "L42_SAP000_SB002_uv.MS"}));
    CPPUNIT_ASSERT((s.correlatedOutput.hosts == std::vector<std::string>(3, "localhost")));
    CPPUNIT_ASSERT((s.correlatedOutput.directories == std::vector<std::string>(3, ".")));
    CPPUNIT_ASSERT(s.sim.sources.empty());
    CPPUNIT_ASSERT_EQUAL(1.0, s.sim.noisePower);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), s.sim.seed);
    CPPUNIT_ASSERT_EQUAL(0.0, s.stations[1].clockCorrection);
    CPPUNIT_ASSERT_EQUAL(std::string("L7_SAP002_SB005_uv.MS"),
                         ObservationSettings::defaultFilename(7, 2, 5));
  }

  void testPositions() {
    const ObservationSettings s =
        settingsOf(Keys()
                       .set("PIC.Core.RS106LBA.phaseCenter", "[1.5, -2, 3e6]")
                       .set("PIC.Core.RS106LBA.clockCorrectionTime", "2.5e-6"));
    CPPUNIT_ASSERT(s.stations[0].position == table().find("CS001", "LBA")->position);
    CPPUNIT_ASSERT((s.stations[1].position == std::array<double, 3>{1.5, -2, 3e6}));
    CPPUNIT_ASSERT_EQUAL(106, s.stations[1].id);
    CPPUNIT_ASSERT_EQUAL(2.5e-6, s.stations[1].clockCorrection);
    // Without Observation.referencePhaseCenter the first station is the reference.
    CPPUNIT_ASSERT(s.referencePhaseCenter == s.stations[0].position);
    const Keys bad = Keys().set("PIC.Core.RS106LBA.phaseCenter", "[1, 2]");
    CPPUNIT_ASSERT(
        contains(errorOf(bad, "PIC.Core.RS106LBA.phaseCenter"), "expected 3 ITRF coordinates"));
  }

  void testHbaAndClock160() {
    Keys keys;
    keys.set("Observation.antennaSet", "HBA_JOINED")
        .set("Observation.bandFilter", "HBA_110_190")
        .set("Observation.sampleClock", "160")
        .set("Observation.VirtualInstrument.stationList", "[CS001, IE613]")
        .set("PIC.Core.CS001HBA.RSP.ports", "[udp:127.0.0.1:10010]")
        .set("PIC.Core.IE613HBA.RSP.ports", "[file:../recordings/IE613.rsp]")
        .erase("PIC.Core.CS001LBA.RSP.ports")
        .erase("PIC.Core.RS106LBA.RSP.ports")
        .set("Observation.Beam[0].subbandList", "[100]");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(std::string("HBA"), s.antennaField);
    CPPUNIT_ASSERT_EQUAL(std::string("HBA"), s.stations[1].field);
    CPPUNIT_ASSERT_EQUAL(2, s.nyquistZone);
    CPPUNIT_ASSERT_EQUAL(156250.0, s.subbandWidth());
    CPPUNIT_ASSERT_EQUAL(156250.0 * (100 + 512), s.subbands[0].frequency);
    CPPUNIT_ASSERT(s.stations[0].position == table().find("CS001", "HBA")->position);
    CPPUNIT_ASSERT(s.stations[1].position == table().find("IE613", "HBA")->position);
    CPPUNIT_ASSERT_EQUAL(214, s.stations[1].id);
    CPPUNIT_ASSERT_EQUAL(std::string("file:../recordings/IE613.rsp"), s.stations[1].inputs[0]);
    // 160 MHz: sample n at n * 1024 / 160e6; an even second starts on a sample.
    CPPUNIT_ASSERT_EQUAL(int64_t(1795377600) * 156250, s.startSample());
    CPPUNIT_ASSERT_EQUAL(3,
                         settingsOf(keys.set("Observation.bandFilter", "HBA_210_250")).nyquistZone);
  }

  void testBeamsAndOutput() {
    Keys keys;
    keys.set("Observation.nrBeams", "2")
        .set("Observation.Beam[0].directionType", "J2000")
        .set("Observation.Beam[1].angle1", "1.0")
        .set("Observation.Beam[1].angle2", "-0.5")
        .set("Observation.Beam[1].subbandList", "[10, 2*20]")
        .set("Observation.DataProducts.Output_Correlated.filenames",
             "[a.MS, b.MS, c.MS, d.MS, e.MS, f.MS]")
        .set("Observation.DataProducts.Output_Correlated.locations",
             "[n1:/d1, n1:/d1, n1:/d1, n2:/d2, n2:/d2, n3:/d3]")
        .set("OLAP.Storage.port", "5100");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(6, s.nrSubbands());
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.beams.size());
    CPPUNIT_ASSERT_EQUAL(-0.5, s.beams[1].dec);
    CPPUNIT_ASSERT_EQUAL(1, s.subbands[3].beam);
    CPPUNIT_ASSERT_EQUAL(20, s.subbands[5].number);
    CPPUNIT_ASSERT_EQUAL(5, s.subbands[5].index);
    CPPUNIT_ASSERT_EQUAL(std::string("n2"), s.correlatedOutput.hosts[4]);
    CPPUNIT_ASSERT_EQUAL(std::string("/d3"), s.correlatedOutput.directories[5]);
    CPPUNIT_ASSERT_EQUAL(std::string("f.MS"), s.correlatedOutput.filenames[5]);
    CPPUNIT_ASSERT_EQUAL(5100, s.correlatedOutput.storagePort);
    // LOFAR's default names: the beam and the index in the whole subband list.
    keys.erase("Observation.DataProducts.Output_Correlated.filenames")
        .erase("Observation.DataProducts.Output_Correlated.locations");
    const ObservationSettings named = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(std::string("L42_SAP000_SB002_uv.MS"),
                         named.correlatedOutput.filenames[2]);
    CPPUNIT_ASSERT_EQUAL(std::string("L42_SAP001_SB005_uv.MS"),
                         named.correlatedOutput.filenames[5]);
    // Two subbands into one MS is an error.
    keys.set("Observation.DataProducts.Output_Correlated.filenames",
             "[a.MS, b.MS, c.MS, d.MS, e.MS, a.MS]");
    CPPUNIT_ASSERT(contains(errorOf(keys, "Observation.DataProducts.Output_Correlated.filenames"),
                            "two subbands would write localhost:./a.MS"));
  }

  void testSim() {
    Keys keys;
    keys.set("Sim.nrSources", "2")
        .set("Sim.Source[0].angle1", "5.25")
        .set("Sim.Source[0].angle2", "0.72")
        .set("Sim.Source[0].flux", "2.0")
        .set("Sim.Source[1].angle1", "1")
        .set("Sim.Source[1].angle2", "0")
        .set("Sim.noisePower", "0.5")
        .set("Sim.tone.frequency", "29.3e6")
        .set("Sim.tone.amplitude", "0.25")
        .set("Sim.packetLossProbability", "0.01")
        .set("Sim.seed", "12345");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.sim.sources.size());
    CPPUNIT_ASSERT_EQUAL(0.72, s.sim.sources[0].direction.dec);
    CPPUNIT_ASSERT_EQUAL(2.0, s.sim.sources[0].flux);
    CPPUNIT_ASSERT_EQUAL(1.0, s.sim.sources[1].flux);  // default
    CPPUNIT_ASSERT_EQUAL(0.5, s.sim.noisePower);
    CPPUNIT_ASSERT_EQUAL(29.3e6, s.sim.toneFrequency);
    CPPUNIT_ASSERT_EQUAL(0.25, s.sim.toneAmplitude);
    CPPUNIT_ASSERT_EQUAL(0.01, s.sim.packetLossProbability);
    CPPUNIT_ASSERT_EQUAL(uint64_t(12345), s.sim.seed);
    CPPUNIT_ASSERT(s.unknownKeys.empty());
  }

  void testSimPolarisationAndPulsar() {
    Keys keys;
    keys.set("Sim.nrSources", "3")
        .set("Sim.Source[0].angle1", "5.25")
        .set("Sim.Source[0].angle2", "0.72")
        .set("Sim.Source[0].Q", "0.6")
        .set("Sim.Source[0].V", "-0.8")
        .set("Sim.Source[0].pulsar.period", "0.714")
        .set("Sim.Source[0].pulsar.width", "0.01")
        .set("Sim.Source[0].pulsar.epoch", "61366.5")
        .set("Sim.Source[0].pulsar.dispersionMeasure", "26.8")
        .set("Sim.Source[1].angle1", "1")
        .set("Sim.Source[1].angle2", "0")
        .set("Sim.Source[1].pulsar.period", "1.5")
        .set("Sim.Source[1].pulsar.width", "0.1")
        .set("Sim.Source[2].angle1", "1")
        .set("Sim.Source[2].angle2", "0")
        .set("Sim.Source[2].pulsar.period", "1.5")
        .set("Sim.Source[2].pulsar.width", "0.1")
        .set("Sim.Source[2].pulsar.epoch", "'2026-11-22 21:00:00'");
    const ObservationSettings s = settingsOf(keys);
    const rtcp::SimSource& pulsar = s.sim.sources[0];
    CPPUNIT_ASSERT(pulsar.q == 0.6 && pulsar.u == 0 && pulsar.v == -0.8);
    CPPUNIT_ASSERT(pulsar.pulsar == (rtcp::SimPulsar{0.714, 0.01, 61366.5, 26.8}));
    // The epoch defaults to the start (2026-11-22 20:00 UTC); a date is read as UTC.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(61366 + 20.0 / 24, s.sim.sources[1].pulsar.epochMjd, 1e-9);
    CPPUNIT_ASSERT_EQUAL(0.0, s.sim.sources[1].pulsar.dispersionMeasure);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(61366 + 21.0 / 24, s.sim.sources[2].pulsar.epochMjd, 1e-9);
    CPPUNIT_ASSERT(s.unknownKeys.empty());
    assertSameSettings(s, ObservationSettings::fromParset(s.toParset(), table()));
    assertSameSettings(
        s, ObservationSettings::fromParset(Parset::fromString(s.toParset().toString()), table()));

    CPPUNIT_ASSERT(contains(errorOf(Keys(keys).set("Sim.Source[0].U", "0.1"), "Sim.Source[0].Q"),
                            "more than 1"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys(keys).set("Sim.Source[1].V", "1.5"), "Sim.Source[1].V"), "-1..1"));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys(keys).set("Sim.Source[1].pulsar.width", "2"), "Sim.Source[1].pulsar.width"),
        "at most the period"));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys(keys).erase("Sim.Source[1].pulsar.period"), "Sim.Source[1].pulsar.width"),
        "without Sim.Source[1].pulsar.period"));
    CPPUNIT_ASSERT(contains(errorOf(Keys(keys).set("Sim.Source[0].pulsar.dispersionMeasure", "-1"),
                                    "Sim.Source[0].pulsar.dispersionMeasure"),
                            "must not be negative"));
    errorOf(Keys(keys).set("Sim.Source[2].pulsar.epoch", "yesterday"),
            "Sim.Source[2].pulsar.epoch");
  }

  void testRoundTripDemo() {
    const ObservationSettings s =
        ObservationSettings::fromFile(rtcp::test::sourceDir() + "/parsets/demo.parset");
    const Parset p = s.toParset();
    assertSameSettings(s, ObservationSettings::fromParset(p, table()));
    // The same through text, as a parset file written by one part and read by another.
    assertSameSettings(s,
                       ObservationSettings::fromParset(Parset::fromString(p.toString()), table()));
  }

  void testRoundTripEverything() {
    Keys keys;
    keys.set("Observation.sampleClock", "160")
        .set("Observation.nrBitsPerSample", "8")
        .set("Observation.startTime", "'2026-11-22 20:00:00.25'")
        .set("Observation.channelsPerSubband", "256")
        .set("Observation.nrBeams", "2")
        .set("Observation.Beam[1].angle1", "0.1")
        .set("Observation.Beam[1].angle2", "0.2")
        .set("Observation.Beam[1].subbandList", "[0..99]")
        .set("PIC.Core.CS001LBA.RSP.ports", "['file:rec/CS 001.rsp', udp:[::1]:4000]")
        .set("PIC.Core.CS001LBA.clockCorrectionTime", "1.234567890123e-7")
        .set("PIC.Core.RS106LBA.RSP.ports", "[udp:127.0.0.1:10020, udp:127.0.0.1:10021]")
        .set("Observation.referencePhaseCenter", "[3826577.066, 461022.948, 5064892.786]")
        .set("OLAP.CNProc.integrationSteps", "768")
        .set("OLAP.IONProc.integrationSteps", "4")
        .set("OLAP.delayCompensation", "F")
        .set("OLAP.correctBandPass", "false")
        .set("OLAP.realTime", "0")
        .set("OLAP.nrSecondsOfBuffer", "0.1")
        .set("OLAP.maxNetworkDelay", "0.125")
        .set("OLAP.tiedArrayStationNames", "[RS106, CS001]")
        .set("Observation.DataProducts.Output_Correlated.enabled", "F")
        .set("Observation.DataProducts.Output_Correlated.locations", "['host-1:/data/with space']")
        .set("OLAP.Storage.port", "4200")
        .set("Sim.nrSources", "1")
        .set("Sim.Source[0].angle1", "0.3")
        .set("Sim.Source[0].angle2", "-0.4")
        .set("Sim.Source[0].flux", "0.1")
        .set("Sim.noisePower", "0")
        .set("Sim.tone.frequency", "1e7")
        .set("Sim.tone.amplitude", "3")
        .set("Sim.packetLossProbability", "1")
        .set("Sim.seed", "99")
        .set("Observation.Campaign.name", "LC4_001")
        .set("Observation.Campaign.title", "'Deep field, part 2'")
        .set("Observation.Campaign.PI", "'Doe, J.'")
        .set("Observation.Campaign.CO_I", "['A. One', B]")
        .set("Observation.Campaign.contact", "'J. Doe'")
        .set("Observation.Beam[1].target", "'3C 196'")
        .set("Observation.nrAnaBeams", "1")
        .set("Observation.AnaBeam[0].directionType", "AZELGEO")
        .set("Observation.AnaBeam[0].angle1", "1.5")
        .set("Observation.AnaBeam[0].angle2", "0.9")
        .set("Cobalt.Nodes", "[cbt001_0, cbt001_1, cbt002_0]")
        .set("PIC.Core.Cobalt.cbt001_0.host", "cbt001")
        .set("PIC.Core.Cobalt.cbt001_1.host", "cbt001")
        .set("PIC.Core.Cobalt.cbt002_0.host", "cbt002");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(std::string("Doe, J."), s.campaign.pi);
    CPPUNIT_ASSERT((s.campaign.coInvestigators == std::vector<std::string>{"A. One", "B"}));
    CPPUNIT_ASSERT((s.beamTargets == std::vector<std::vector<std::string>>{{}, {"3C 196"}}));
    CPPUNIT_ASSERT(s.analogBeam && s.analogBeam->directionType == "AZELGEO" &&
                   s.analogBeam->angle2 == 0.9);
    CPPUNIT_ASSERT_EQUAL(103, s.nrSubbands());
    CPPUNIT_ASSERT((s.computeNodes == std::vector<rtcp::ComputeNode>{{"cbt001_0", "cbt001"},
                                                                     {"cbt001_1", "cbt001"},
                                                                     {"cbt002_0", "cbt002"}}));
    CPPUNIT_ASSERT_EQUAL(1795377600.25, s.startTime);
    CPPUNIT_ASSERT_EQUAL(0.125, s.maxNetworkDelay);
    CPPUNIT_ASSERT((s.stations[0].inputs ==
                    std::vector<std::string>{"file:rec/CS 001.rsp", "udp:[::1]:4000"}));
    assertSameSettings(s, ObservationSettings::fromParset(s.toParset(), table()));
    assertSameSettings(
        s, ObservationSettings::fromParset(Parset::fromString(s.toParset().toString()), table()));
  }

  void testUnknownKeyReported() {
    const Keys keys = Keys().set("Observation.sampleClok", "160").set("Sim.Source[0].angle1", "1");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(200, s.clockMHz);                 // the typo did not change the clock...
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.unknownKeys.total);  // ...and is reported
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.unknownKeys.perPrefix.at("Observation").count);
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.unknownKeys.perPrefix.at("Sim").count);
    CPPUNIT_ASSERT_EQUAL(size_t(1), s.unknownKeys.listed.size());  // beside Observation.ObsID
    CPPUNIT_ASSERT_EQUAL(std::string("Observation.sampleClok"), s.unknownKeys.listed[0].firstKey);
    CPPUNIT_ASSERT_EQUAL("test.parset:" + std::to_string(keys.lineOf("Observation.sampleClok")),
                         s.unknownKeys.listed[0].where);
    // Sim.Source[0].angle1 with Sim.nrSources = 0 is a key rtcp knows, for another source.
    const std::vector<std::string> lines = s.unknownKeys.describe();
    CPPUNIT_ASSERT_EQUAL(size_t(2), lines.size());
    CPPUNIT_ASSERT_EQUAL("2 parset keys not used by rtcp: Observation 1 (from line " +
                             std::to_string(keys.lineOf("Observation.sampleClok")) +
                             "), Sim 1 (from line " +
                             std::to_string(keys.lineOf("Sim.Source[0].angle1")) + ")",
                         lines[0]);
    CPPUNIT_ASSERT(contains(lines[1], "unknown key Observation.sampleClok (test.parset:"));
    CPPUNIT_ASSERT(contains(lines[1], "close to Observation.sampleClock that rtcp reads"));
  }

  void testMissingRequiredKeys() {
    for (const char* key :
         {"Observation.ObsID", "Observation.startTime", "Observation.stopTime",
          "Observation.VirtualInstrument.stationList", "Observation.Beam[0].subbandList",
          "Observation.Beam[0].angle1", "Observation.Beam[0].angle2", "Observation.antennaSet",
          "Observation.bandFilter"}) {
      const std::string message = errorOf(Keys().erase(key), key);
      CPPUNIT_ASSERT_EQUAL("test.parset: required key '" + std::string(key) + "' is missing",
                           message);
    }
    const std::string message = errorOf(Keys().erase("PIC.Core.RS106LBA.RSP.ports"),
                                        "Observation.VirtualInstrument.stationList");
    CPPUNIT_ASSERT(contains(message, "station 'RS106LBA' has no input streams"));
    CPPUNIT_ASSERT(contains(message, "PIC.Core.RS106LBA.RSP.ports"));
  }

  void testUnknownStation() {
    const Keys keys =
        Keys().set("Observation.VirtualInstrument.stationList", "[CS001, XX999, RS106]");
    const std::string message = errorOf(keys, "Observation.VirtualInstrument.stationList");
    CPPUNIT_ASSERT(contains(message, "unknown station 'XX999'"));
    const Keys twice =
        Keys().set("Observation.VirtualInstrument.stationList", "[CS001, RS106, CS001]");
    CPPUNIT_ASSERT(contains(errorOf(twice, "Observation.VirtualInstrument.stationList"),
                            "station 'CS001LBA' is listed twice"));
    const Keys empty = Keys().set("Observation.VirtualInstrument.stationList", "[]");
    CPPUNIT_ASSERT(contains(errorOf(empty, "Observation.VirtualInstrument.stationList"), "empty"));
  }

  void testStopNotAfterStart() {
    const std::string key = "Observation.stopTime";
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(key, "'2026-11-22 19:59:59'"), key),
                            "is not after start time"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(key, "'2026-11-22 20:00:00'"), key),
                            "is not after start time"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set(key, "'yesterday'"), key), "bad UTC time 'yesterday'"));
    // Times an RSP timestamp cannot stamp (and std::chrono's nanoseconds overflow on):
    // errors naming the key, not undefined behaviour.
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(key, "'4000-01-01 00:00:00'"), key),
                            "'4000-01-01 00:00:00' is outside the times rtcp handles, "
                            "1970-01-01 00:00:00 .. 2106-02-07 06:28:15 UTC"));
    const std::string start = "Observation.startTime";
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(start, "'1600-01-01 00:00:00'"), start),
                            "is outside the times rtcp handles"));
  }

  void testBadInstrument() {
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("Observation.sampleClock", "150"), "Observation.sampleClock"),
                 "150 MHz is not 200 or 160"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("Observation.sampleClock", "abc"), "Observation.sampleClock"),
                 "bad integer 'abc'"));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("Observation.nrBitsPerSample", "12"), "Observation.nrBitsPerSample"),
        "12 bits is not 16, 8 or 4"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("Observation.channelsPerSubband", "48"),
                                    "Observation.channelsPerSubband"),
                            "48 is not a power of two"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("Observation.channelsPerSubband", "0"),
                                    "Observation.channelsPerSubband"),
                            "outside 1..65536"));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("Observation.antennaSet", "XBA_OUTER"), "Observation.antennaSet"),
        "starts with neither LBA_ nor HBA_"));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("Observation.bandFilter", "LBA_10_80"), "Observation.bandFilter"),
        "unknown band filter 'LBA_10_80' (LBA_10_70, LBA_30_70, LBA_10_90, LBA_30_90, "
        "HBA_110_190, HBA_170_230, HBA_210_250)"));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("Observation.bandFilter", "HBA_110_190"), "Observation.bandFilter"),
        "does not suit antenna set 'LBA_OUTER'"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("Observation.Beam[0].directionType", "AZEL"),
                                    "Observation.Beam[0].directionType"),
                            "direction type 'AZEL' is not one of J2000, AZELGEO, SUN"));
  }

  void testBadSubbands() {
    const std::string key = "Observation.Beam[0].subbandList";
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set(key, "[510..512]"), key), "subband 512 is outside 0..511"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(key, "[-1]"), key), "subband -1 is outside 0..511"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(key, "[7..3]"), key), "bad range '7..3'"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(key, "[]"), key), "no subbands"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("Observation.nrBeams", "0"), "Observation.nrBeams"),
                            "outside 1..1024"));
  }

  void testTooManySubbandsForPorts() {
    Keys keys;
    keys.set("Observation.Beam[0].subbandList", "[0..61]");  // 62 > 61 beamlets at 16 bit
    const std::string message = errorOf(keys, "PIC.Core.CS001LBA.RSP.ports");
    CPPUNIT_ASSERT(contains(message, "62 subbands do not fit in 1 port(s) of 61 beamlets"));
    CPPUNIT_ASSERT(contains(message, "CS001"));
    CPPUNIT_ASSERT_EQUAL(
        62, settingsOf(Keys(keys).set("Observation.nrBitsPerSample", "8")).nrSubbands());
    keys.set("PIC.Core.CS001LBA.RSP.ports", "[udp:127.0.0.1:10010, udp:127.0.0.1:10011]");
    CPPUNIT_ASSERT(contains(errorOf(keys, "PIC.Core.RS106LBA.RSP.ports"), "'RS106LBA'"));
    keys.set("PIC.Core.RS106LBA.RSP.ports", "[udp:127.0.0.1:10020, udp:127.0.0.1:10021]");
    CPPUNIT_ASSERT_EQUAL(62, settingsOf(keys).nrSubbands());
    keys.set("Observation.nrBitsPerSample", "4").set("Observation.Beam[0].subbandList", "[0..487]");
    CPPUNIT_ASSERT_EQUAL(488, settingsOf(keys).nrSubbands());  // 2 x 244 beamlets
    keys.set("Observation.Beam[0].subbandList", "[0..488]");
    CPPUNIT_ASSERT(contains(errorOf(keys, "PIC.Core.CS001LBA.RSP.ports"),
                            "489 subbands do not fit in 2 port(s)"));
  }

  void testBadProcessing() {
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("OLAP.CNProc.integrationSteps", "0"), "OLAP.CNProc.integrationSteps"),
        "0 is outside 1.."));
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("OLAP.IONProc.integrationSteps", "-2"), "OLAP.IONProc.integrationSteps"),
        "-2 is outside 1.."));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("OLAP.tiedArrayStationNames", "[CS001, CS002]"),
                                    "OLAP.tiedArrayStationNames"),
                            "station 'CS002' is not in"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("OLAP.realTime", "maybe"), "OLAP.realTime"),
                            "bad boolean 'maybe'"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("OLAP.nrSecondsOfBuffer", "0"), "OLAP.nrSecondsOfBuffer"),
                 "must be positive"));
    // 1e9 s passed the checks and ionproc died allocating the buffers.
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("OLAP.nrSecondsOfBuffer", "1e9"), "OLAP.nrSecondsOfBuffer"),
                 "1e+09 s is more than the 600 s rtcp allows"));
    // A deep buffer for triggered dumps is the host's memory's to refuse, not the parset's.
    CPPUNIT_ASSERT_EQUAL(120.0,
                         settingsOf(Keys().set("OLAP.nrSecondsOfBuffer", "120")).secondsOfBuffer);
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("OLAP.maxNetworkDelay", "-0.1"), "OLAP.maxNetworkDelay"),
                 "must not be negative"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("OLAP.maxNetworkDelay", "100"), "OLAP.maxNetworkDelay"),
                 "100 s is more than the 15 s rtcp allows"));
  }

  void testBadOutput() {
    const std::string locations = "Observation.DataProducts.Output_Correlated.locations";
    const std::string filenames = "Observation.DataProducts.Output_Correlated.filenames";
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(locations, "[a:/x, b:/y]"), locations),
                            "2 locations for 3 subbands"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set(locations, "[nohost]"), locations), "bad location 'nohost'"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set(locations, "[:/dir]"), locations), "bad location ':/dir'"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set(locations, "[host:]"), locations), "bad location 'host:'"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set(filenames, "[a.MS]"), filenames),
                            "1 filenames for 3 subbands"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("OLAP.Storage.port", "70000"), "OLAP.Storage.port"),
                            "outside 1..65535"));
  }

  void testDescriptionKeys() {
    Keys keys;
    const ObservationSettings plain = settingsOf(keys);  // none given: empty, no analog beam
    CPPUNIT_ASSERT(plain.campaign == rtcp::CampaignSettings{});
    CPPUNIT_ASSERT(!plain.analogBeam);
    CPPUNIT_ASSERT((plain.beamTargets == std::vector<std::vector<std::string>>{{}}));
    keys.set("Observation.AnaBeam[0].angle1", "1").set("Observation.AnaBeam[0].angle2", "0.5");
    const ObservationSettings analog = settingsOf(keys);
    CPPUNIT_ASSERT(analog.analogBeam && analog.analogBeam->directionType == "J2000");
    CPPUNIT_ASSERT(analog.unknownKeys.empty());
    keys.set("Observation.nrAnaBeams", "0");  // LOFAR's: no analog beam, its keys ignored
    CPPUNIT_ASSERT(!settingsOf(keys).analogBeam);
    keys.set("Observation.nrAnaBeams", "1").set("Observation.AnaBeam[0].directionType", "J2001");
    CPPUNIT_ASSERT(contains(errorOf(keys, "Observation.AnaBeam[0].directionType"),
                            "direction type 'J2001' is not one of"));
  }

  void testBadSim() {
    CPPUNIT_ASSERT(contains(
        errorOf(Keys().set("Sim.packetLossProbability", "1.5"), "Sim.packetLossProbability"),
        "0..1"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("Sim.nrSources", "1"), "Sim.Source[0].angle1"),
                            "required key 'Sim.Source[0].angle1' is missing"));
    CPPUNIT_ASSERT(
        contains(errorOf(Keys().set("Sim.noisePower", "-1"), "Sim.noisePower"), "negative"));
    CPPUNIT_ASSERT(contains(errorOf(Keys().set("Sim.seed", "x"), "Sim.seed"), "bad integer 'x'"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ObservationSettingsTest);
