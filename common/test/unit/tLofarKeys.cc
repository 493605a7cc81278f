// Tests of the LOFAR parset semantics ObservationSettings follows: both generations of the
// correlator's keys (COBALT's win, disagreement is a warning), COBALT's integration
// rounding, every band filter, SAS specifications, antenna fields as LOFAR forms them,
// beamlet maps, station corrections, every problem reported at once, and the unknown-key
// summary.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>

#include "SettingsTestUtil.h"
#include "rtcp/AntennaFields.h"
#include "rtcp/CobaltBlockSize.h"

namespace {

using namespace rtcp::test::settings;
using rtcp::ParsetErrors;

/// The warning about `key`, "" when there is none.
std::string warningOn(const ObservationSettings& s, const std::string& key) {
  for (const rtcp::ParsetWarning& w : s.warnings)
    if (w.key == key) return w.message;
  return "";
}

/// Every error message of a parset that fails.
std::vector<std::string> errorsOf(const Keys& keys) {
  try {
    settingsOf(keys);
  } catch (const ParsetErrors& e) {
    std::vector<std::string> messages;
    for (const ParsetError& error : e.errors()) messages.push_back(error.what());
    return messages;
  }
  CPPUNIT_FAIL("expected ParsetErrors");
  return {};
}

bool anyContains(const std::vector<std::string>& messages, const std::string& part) {
  for (const std::string& m : messages)
    if (contains(m, part)) return true;
  return false;
}

/// HBA keys: HBA_DUAL on CS001, CS002 and RS106, ports per field.
Keys hbaDual() {
  Keys keys;
  keys.set("Observation.antennaSet", "HBA_DUAL")
      .set("Observation.bandFilter", "HBA_110_190")
      .set("Observation.VirtualInstrument.stationList", "[RS106, CS002, CS001]")
      .erase("PIC.Core.CS001LBA.RSP.ports")
      .erase("PIC.Core.RS106LBA.RSP.ports");
  int port = 10010;
  for (const char* field : {"CS001HBA0", "CS001HBA1", "CS002HBA0", "CS002HBA1", "RS106HBA"})
    keys.set(std::string("PIC.Core.") + field + ".RSP.ports",
             "[udp:127.0.0.1:" + std::to_string(port++) + "]");
  return keys;
}

}  // namespace

class LofarKeysTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(LofarKeysTest);
  CPPUNIT_TEST(testEveryBandFilter);
  CPPUNIT_TEST(testSasSpecification);
  CPPUNIT_TEST(testCobaltKeysWin);
  CPPUNIT_TEST(testCobaltIntegration);
  CPPUNIT_TEST(testIntegrationTimeAlone);
  CPPUNIT_TEST(testIntegrationsPerBlock);
  CPPUNIT_TEST(testBgpKeys);
  CPPUNIT_TEST(testIntegrationTimeRounded);
  CPPUNIT_TEST(testSchedulerBlockSize);
  CPPUNIT_TEST(testEveryProblemAtOnce);
  CPPUNIT_TEST(testBeamFormedOutputWithoutTabs);
  CPPUNIT_TEST(testHbaDualFields);
  CPPUNIT_TEST(testAntennaSets);
  CPPUNIT_TEST(testBeamletMaps);
  CPPUNIT_TEST(testCorrections);
  CPPUNIT_TEST(testDirectionTypes);
  CPPUNIT_TEST(testUnknownKeySummary);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryBandFilter() {
    const struct {
      const char* set;
      const char* filter;
      int zone;
    } bands[] = {{"LBA_INNER", "LBA_10_70", 1},       {"LBA_OUTER", "LBA_30_70", 1},
                 {"LBA_SPARSE_EVEN", "LBA_10_90", 1}, {"LBA_X", "LBA_30_90", 1},
                 {"HBA_JOINED", "HBA_110_190", 2},    {"HBA_JOINED", "HBA_170_230", 3},
                 {"HBA_JOINED", "HBA_210_250", 3}};
    for (const auto& band : bands) {
      Keys keys;
      keys.set("Observation.antennaSet", band.set).set("Observation.bandFilter", band.filter);
      if (std::string(band.set).starts_with("HBA"))
        keys.erase("PIC.Core.CS001LBA.RSP.ports")
            .erase("PIC.Core.RS106LBA.RSP.ports")
            .set("PIC.Core.CS001HBA.RSP.ports", "[udp:127.0.0.1:10010]")
            .set("PIC.Core.RS106HBA.RSP.ports", "[udp:127.0.0.1:10020]");
      const ObservationSettings s = settingsOf(keys);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(band.filter, band.zone, s.nyquistZone);
      CPPUNIT_ASSERT_EQUAL(195312.5 * (300 + 512 * (band.zone - 1)), s.subbands[0].frequency);
    }
  }

  void testSasSpecification() {
    // The keys of a SAS task specification (LCS/MessageBus/data/task_spec_system_78958.txt).
    const std::string text =
        "ObsSW.Observation.otdbID=78958\n"
        "ObsSW.Observation.startTime=2015-02-04 11:27:00\n"
        "ObsSW.Observation.stopTime=2015-02-04 11:27:10\n"
        "ObsSW.Observation.antennaSet=LBA_INNER\n"
        "ObsSW.Observation.bandFilter=LBA_10_70\n"
        "ObsSW.Observation.VirtualInstrument.stationList=[CS001]\n"
        "ObsSW.Observation.Beam[0].angle1=0.5141401557033334\n"
        "ObsSW.Observation.Beam[0].angle2=1.085720371180154\n"
        "ObsSW.Observation.Beam[0].subbandList=[200,201]\n"
        "ObsSW.Observation.ObservationControl.OnlineControl.Cobalt.Correlator.nrChannelsPerSubband="
        "16\n"
        "PIC.Core.CS001LBA.RSP.ports=[udp:127.0.0.1:10010]\n";
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(text, "spec"), table());
    CPPUNIT_ASSERT_EQUAL(int64_t(78958), s.observationId);
    CPPUNIT_ASSERT_EQUAL(16, s.channelsPerSubband);
    CPPUNIT_ASSERT_EQUAL(std::string("L78958_SAP000_SB001_uv.MS"), s.correlatedOutput.filenames[1]);
    // Observation.ObsID, where given, is the id.
    const ObservationSettings withId = ObservationSettings::fromParset(
        Parset::fromString(text + "Observation.ObsID = 5\n", "spec"), table());
    CPPUNIT_ASSERT_EQUAL(int64_t(5), withId.observationId);
  }

  void testCobaltKeysWin() {
    Keys keys;
    keys.set("Cobalt.Correlator.nrChannelsPerSubband", "16")
        .set("Observation.channelsPerSubband", "64")
        .set("Cobalt.realTime", "false")
        .set("OLAP.realTime", "true")
        .set("Cobalt.delayCompensation", "F")
        .set("Cobalt.correctBandPass", "F")
        .set("Cobalt.correctClocks", "F");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(16, s.channelsPerSubband);
    CPPUNIT_ASSERT(!s.realTime && !s.delayCompensation && !s.correctBandPass && !s.correctClocks);
    const std::string channels = warningOn(s, "Observation.channelsPerSubband");
    CPPUNIT_ASSERT_MESSAGE(
        channels,
        contains(channels,
                 "test.parset:" + std::to_string(keys.lineOf("Observation.channelsPerSubband")) +
                     ": key 'Observation.channelsPerSubband': says 64, but "
                     "Cobalt.Correlator.nrChannelsPerSubband says 16: using "
                     "Cobalt.Correlator.nrChannelsPerSubband"));
    CPPUNIT_ASSERT(contains(warningOn(s, "OLAP.realTime"), "Cobalt.realTime says false"));
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.warnings.size());  // agreeing keys say nothing
    // The effective keys carry what rtcp does, in both generations.
    bool found = false;
    for (const auto& [key, value] : s.effectiveProcessingKeys())
      if (key == "Observation.channelsPerSubband") found = value == "16";
    CPPUNIT_ASSERT(found);
  }

  void testCobaltIntegration() {
    // CorrProc_173014's keys: 2 blocks of 196608 samples, 1 channel.
    Keys keys;
    keys.set("Cobalt.Correlator.nrChannelsPerSubband", "1")
        .set("Cobalt.blockSize", "196608")
        .set("Cobalt.Correlator.nrBlocksPerIntegration", "2")
        .set("Cobalt.Correlator.integrationTime", "2.01327");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(196608, s.spectraPerBlock);
    CPPUNIT_ASSERT_EQUAL(2, s.blocksPerIntegration);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2 * 196608 / 195312.5, s.integrationDuration(), 1e-12);
    CPPUNIT_ASSERT(s.warnings.empty());
    // And a block that is no whole number of spectra is an error.
    keys.set("Cobalt.Correlator.nrChannelsPerSubband", "256").set("Cobalt.blockSize", "196000");
    CPPUNIT_ASSERT(
        contains(errorOf(keys, "Cobalt.blockSize"),
                 "a block of 196000 samples is not a whole number of 1 integration(s) of "
                 "256-channel spectra"));
  }

  void testIntegrationTimeAlone() {
    // Only the integration time: the block keys as LOFAR's scheduler derives them.
    Keys keys;
    keys.set("Cobalt.Correlator.nrChannelsPerSubband", "16")
        .set("Cobalt.Correlator.integrationTime", "2.01");
    const ObservationSettings s = settingsOf(keys);
    const rtcp::CobaltBlockSize expected = rtcp::cobaltBlockSize(2.01, 16, 200);
    CPPUNIT_ASSERT_EQUAL(expected.blockSize, s.samplesPerBlock());
    CPPUNIT_ASSERT_EQUAL(2, s.blocksPerIntegration);  // whole blocks of 0.6 .. 1.3 s
    CPPUNIT_ASSERT_EQUAL(int64_t(0), s.samplesPerBlock() % (16 * 16));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.01, s.integrationDuration(), 0.01);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(expected.integrationTime, s.integrationDuration(), 1e-12);
    // With a block size given, the integration is whole blocks of it.
    keys.set("Cobalt.blockSize", "196608");
    const ObservationSettings blocks = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(2, blocks.blocksPerIntegration);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.01327, blocks.integrationDuration(), 1e-5);
  }

  void testIntegrationsPerBlock() {
    // 4 integrations per COBALT block: rtcp's blocks are the integrations.
    Keys keys;
    keys.set("Cobalt.Correlator.nrChannelsPerSubband", "64")
        .set("Cobalt.blockSize", "196608")
        .set("Cobalt.Correlator.nrIntegrationsPerBlock", "4");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(768, s.spectraPerBlock);
    CPPUNIT_ASSERT_EQUAL(1, s.blocksPerIntegration);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(196608 / 4 / 195312.5, s.integrationDuration(), 1e-12);
    keys.set("Cobalt.Correlator.nrBlocksPerIntegration", "2");
    CPPUNIT_ASSERT(contains(errorOf(keys, "Cobalt.Correlator.nrIntegrationsPerBlock"),
                            "COBALT allows only one of both"));
  }

  void testBgpKeys() {
    Keys keys;
    keys.set("Observation.channelsPerSubband", "256")
        .set("OLAP.CNProc.integrationSteps", "768")
        .set("OLAP.IONProc.integrationSteps", "4")
        .set("OLAP.correctClocks", "F");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(256, s.channelsPerSubband);
    CPPUNIT_ASSERT_EQUAL(768, s.spectraPerBlock);
    CPPUNIT_ASSERT_EQUAL(4, s.blocksPerIntegration);
    CPPUNIT_ASSERT(!s.correctClocks);
    CPPUNIT_ASSERT(s.warnings.empty());
    // Both generations, disagreeing on the block: COBALT's wins, with a warning.
    keys.set("Cobalt.blockSize", "196608");
    const ObservationSettings both = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(768, both.spectraPerBlock);  // 196608 / 256: they agree
    keys.set("Cobalt.blockSize", "262144");
    const ObservationSettings disagree = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(1024, disagree.spectraPerBlock);
    const std::string warning = warningOn(disagree, "OLAP.CNProc.integrationSteps");
    CPPUNIT_ASSERT_MESSAGE(warning, contains(warning,
                                             "says 768 spectra of 256 channels (196608 samples), "
                                             "but Cobalt.blockSize says 262144 samples"));
  }

  void testIntegrationTimeRounded() {
    Keys keys;
    keys.set("Cobalt.blockSize", "196608")
        .set("Cobalt.Correlator.nrBlocksPerIntegration", "1")
        .set("Cobalt.Correlator.integrationTime", "2.01");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(1, s.blocksPerIntegration);  // COBALT integrates whole blocks as told
    const std::string warning = warningOn(s, "Cobalt.Correlator.integrationTime");
    CPPUNIT_ASSERT_MESSAGE(warning, contains(warning,
                                             "asks for 2.01 s; whole blocks of 196608 samples "
                                             "give integrations of 1.00663 s"));
  }

  void testSchedulerBlockSize() {
    // 1 s at 64 channels: LOFAR's scheduler chose Cobalt.blockSize = 195584
    // (SAS/ResourceAssignment tRATaskSpecified.in_correlator).
    const rtcp::CobaltBlockSize one = rtcp::cobaltBlockSize(1.0, 64, 200);
    CPPUNIT_ASSERT_EQUAL(int64_t(195584), one.blockSize);
    CPPUNIT_ASSERT_EQUAL(1, one.nrBlocksPerIntegration);
    CPPUNIT_ASSERT_EQUAL(1, one.nrIntegrationsPerBlock);
    // Short integrations: several per block, each a whole number of 16-spectrum steps.
    const rtcp::CobaltBlockSize short_ = rtcp::cobaltBlockSize(0.1, 64, 200);
    CPPUNIT_ASSERT_EQUAL(9, short_.nrIntegrationsPerBlock);  // round(0.95 s / 0.1 s)
    CPPUNIT_ASSERT_EQUAL(int64_t(0), short_.blockSize % (16 * 64 * 9));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.1, short_.integrationTime, 0.005);
    // Long ones: whole blocks between 0.6 and 1.3 s.
    const rtcp::CobaltBlockSize long_ = rtcp::cobaltBlockSize(10, 16, 160);
    CPPUNIT_ASSERT(long_.blockSize >= 0.6 * 156250 && long_.blockSize <= 1.3 * 156250);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(10, long_.integrationTime, 0.01);
    CPPUNIT_ASSERT_THROW(rtcp::cobaltBlockSize(0, 16, 200), std::invalid_argument);
  }

  void testEveryProblemAtOnce() {
    // 37 stations without ports, one with too few: all of them named, with the other errors.
    std::string list = "[RS106";
    for (int i = 1; i <= 7; ++i) list += ", CS00" + std::to_string(i);
    for (const char* s :
         {"CS011", "CS013", "CS017", "CS021", "CS024", "CS026", "CS028", "CS030", "CS031", "CS032",
          "CS101", "CS103", "CS201", "CS301", "CS302", "CS401", "CS501", "RS205", "RS208", "RS210",
          "RS305", "RS306", "RS307", "RS310", "RS406", "RS407", "RS409", "RS503", "RS508", "RS509"})
      list += std::string(", ") + s;
    list += "]";
    Keys keys;
    keys.set("Observation.VirtualInstrument.stationList", list)
        .set("Observation.Beam[0].subbandList", "[0..61]")  // 62 > 61 beamlets of one port
        .set("Observation.bandFilter", "LBA_99_99")
        .set("OLAP.nrSecondsOfBuffer", "-1");
    const std::vector<std::string> errors = errorsOf(keys);
    int missingPorts = 0;
    for (const std::string& e : errors) missingPorts += contains(e, "has no input streams");
    CPPUNIT_ASSERT_EQUAL(36, missingPorts);  // every station but CS001 and RS106
    CPPUNIT_ASSERT(anyContains(errors,
                               "station 'RS509LBA' has no input streams: key "
                               "'PIC.Core.RS509LBA.RSP.ports' is missing"));
    CPPUNIT_ASSERT(anyContains(
        errors, "key 'PIC.Core.CS001LBA.RSP.ports': 62 subbands do not fit in 1 port(s)"));
    CPPUNIT_ASSERT(
        anyContains(errors, "key 'PIC.Core.RS106LBA.RSP.ports': 62 subbands do not fit"));
    CPPUNIT_ASSERT(anyContains(errors, "unknown band filter 'LBA_99_99'"));
    CPPUNIT_ASSERT(anyContains(errors, "key 'OLAP.nrSecondsOfBuffer': must be positive"));
  }

  void testBeamFormedOutputWithoutTabs() {
    Keys keys;
    keys.set("Observation.DataProducts.Output_CoherentStokes.enabled", "true")
        .set("Observation.DataProducts.Output_IncoherentStokes.enabled", "T")
        .set("Observation.DataProducts.Output_Correlated.enabled", "false");
    const std::vector<std::string> errors = errorsOf(keys);
    // Beam-formed outputs are produced; the one problem is that no TAB was asked for.
    CPPUNIT_ASSERT_EQUAL(size_t(1), errors.size());
    CPPUNIT_ASSERT(anyContains(errors, "no tied-array beam asked for"));
    keys.set("Observation.DataProducts.Output_CoherentStokes.enabled", "false")
        .set("Observation.DataProducts.Output_IncoherentStokes.enabled", "false");
    CPPUNIT_ASSERT(!settingsOf(keys).correlatedOutput.enabled);
  }

  void testHbaDualFields() {
    const ObservationSettings s = settingsOf(hbaDual());
    std::vector<std::string> names;
    for (const rtcp::StationSettings& st : s.stations) names.push_back(st.name);
    // COBALT's order: core stations first, each split into HBA0 and HBA1; remote stays HBA.
    CPPUNIT_ASSERT((names == std::vector<std::string>{"CS001HBA0", "CS001HBA1", "CS002HBA0",
                                                      "CS002HBA1", "RS106HBA"}));
    CPPUNIT_ASSERT(s.stations[1].position == table().find("CS001", "HBA1")->position);
    CPPUNIT_ASSERT(s.stations[0].position != s.stations[1].position);
    CPPUNIT_ASSERT_EQUAL(1, s.stations[1].id);
    CPPUNIT_ASSERT_EQUAL(std::string("HBA1"), s.stations[1].field);
    CPPUNIT_ASSERT_EQUAL(std::string("udp:127.0.0.1:10011"), s.stations[1].inputs[0]);
    CPPUNIT_ASSERT_EQUAL(-1, s.stationIndex("CS001"));  // which of the two?
    CPPUNIT_ASSERT_EQUAL(3, s.stationIndex("CS002HBA1"));
    CPPUNIT_ASSERT_EQUAL(4, s.stationIndex("RS106"));
    // A field without ports: named.
    const Keys missing = hbaDual().erase("PIC.Core.CS002HBA1.RSP.ports");
    CPPUNIT_ASSERT(contains(errorOf(missing, "Observation.VirtualInstrument.stationList"),
                            "station 'CS002HBA1' has no input streams: key "
                            "'PIC.Core.CS002HBA1.RSP.ports' is missing"));
    // Superstations of fields.
    const ObservationSettings tied =
        settingsOf(hbaDual().set("OLAP.tiedArrayStationNames", "[CS001HBA0, CS001HBA1]"));
    CPPUNIT_ASSERT(
        (tied.tiedArrayStationNames == std::vector<std::string>{"CS001HBA0", "CS001HBA1"}));
  }

  void testAntennaSets() {
    auto fields = [](const std::string& set, const std::string& list) {
      std::string names;
      for (const auto& f : rtcp::antennaFieldNames(rtcp::expandVector(list), set))
        names.append(names.empty() ? "" : " ").append(f.name());
      return names;
    };
    CPPUNIT_ASSERT_EQUAL(std::string("CS001HBA0 RS106HBA DE601HBA"),
                         fields("HBA_ZERO", "[DE601, RS106, CS001]"));
    CPPUNIT_ASSERT_EQUAL(std::string("CS001HBA1 RS106HBA"),
                         fields("HBA_ONE_INNER", "[CS001, RS106]"));
    CPPUNIT_ASSERT_EQUAL(std::string("CS001HBA RS106HBA"), fields("HBA_JOINED", "[CS001, RS106]"));
    CPPUNIT_ASSERT_EQUAL(std::string("CS001HBA0 CS001HBA1 RS106HBA"),
                         fields("HBA_DUAL_INNER", "[CS001, RS106]"));
    CPPUNIT_ASSERT_EQUAL(std::string("CS001LBA CS002LBA"),
                         fields("LBA_SPARSE_ODD", "[CS002, CS001]"));
    // Fields named in the list are taken as they are.
    CPPUNIT_ASSERT_EQUAL(std::string("CS001HBA1 CS002HBA0"),
                         fields("HBA_DUAL", "[CS001HBA1, CS002HBA0]"));
    CPPUNIT_ASSERT_THROW(fields("HBA_DUAL", "[CS001LBA]"), std::invalid_argument);
    CPPUNIT_ASSERT_THROW(fields("HBA_TRIPLE", "[CS001]"), std::invalid_argument);
    Keys keys = hbaDual();
    keys.set("Observation.VirtualInstrument.stationList", "[CS001HBA1, RS106]");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(2, s.nrStations());
    CPPUNIT_ASSERT_EQUAL(std::string("CS001HBA1"), s.stations[0].name);
    keys.set("Observation.antennaSet", "HBA_TRIPLE");
    CPPUNIT_ASSERT(
        contains(errorOf(keys, "Observation.antennaSet"), "unknown antenna set 'HBA_TRIPLE'"));
  }

  void testBeamletMaps() {
    // COBALT's Dataslots: board (= stream) and slot (= beamlet) per subband.
    Keys keys;
    keys.set("PIC.Core.CS001LBA.RSP.ports", "[udp:127.0.0.1:10010, udp:127.0.0.1:10011]")
        .set("Observation.Dataslots.CS001LBA.RSPBoardList", "[1, 1, 0]")
        .set("Observation.Dataslots.CS001LBA.DataslotList", "[5, 6, 60]");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT(
        (s.stations[0].beamlets == std::vector<rtcp::BeamletSlot>{{1, 5}, {1, 6}, {0, 60}}));
    CPPUNIT_ASSERT((s.stations[1].beamlets ==
                    std::vector<rtcp::BeamletSlot>{{0, 0}, {0, 1}, {0, 2}}));  // in order
    // BG/P's beamlet list: beamlet 61 is the first of the second port at 16 bit.
    Keys bgp;
    bgp.set("PIC.Core.CS001LBA.RSP.ports", "[udp:127.0.0.1:10010, udp:127.0.0.1:10011]")
        .set("PIC.Core.RS106LBA.RSP.ports", "[udp:127.0.0.1:10020, udp:127.0.0.1:10021]")
        .set("Observation.Beam[0].beamletList", "[61, 62, 0]");
    const ObservationSettings b = settingsOf(bgp);
    CPPUNIT_ASSERT(
        (b.stations[0].beamlets == std::vector<rtcp::BeamletSlot>{{1, 0}, {1, 1}, {0, 0}}));
    // Problems: a board without a port, a slot used twice, a list too short.
    keys.set("Observation.Dataslots.CS001LBA.RSPBoardList", "[2, 1, 0]");
    CPPUNIT_ASSERT(contains(
        errorOf(keys, "Observation.Dataslots.CS001LBA.DataslotList"),
        "subband 300 of 'CS001LBA' is on board 2, but PIC.Core.CS001LBA.RSP.ports gives 2"));
    keys.set("Observation.Dataslots.CS001LBA.RSPBoardList", "[1, 1, 1]")
        .set("Observation.Dataslots.CS001LBA.DataslotList", "[5, 6, 5]");
    CPPUNIT_ASSERT(contains(errorOf(keys, "Observation.Dataslots.CS001LBA.DataslotList"),
                            "shares board 1 slot 5"));
    keys.set("Observation.Dataslots.CS001LBA.DataslotList", "[5, 6]");
    CPPUNIT_ASSERT(contains(errorOf(keys, "Observation.Dataslots.CS001LBA.DataslotList"),
                            "gives 2 entries for the 3 subbands"));
  }

  void testCorrections() {
    Keys keys;
    keys.set("PIC.Core.CS001LBA.clockCorrectionTime", "1e-6")
        .set("PIC.Core.RS106LBA.clockCorrectionTime", "2e-6")
        .set("PIC.Core.RS106LBA.LBA_OUTER.LBA_30_90.delay.X", "4.675295e-06")
        .set("PIC.Core.RS106LBA.LBA_OUTER.LBA_30_90.delay.Y", "4.674852e-06")
        .set("PIC.Core.RS106LBA.LBA_OUTER.LBA_30_90.phase0.Y", "0.25")
        .set("PIC.Core.RS106LBA.LBA_INNER.LBA_30_90.delay.X", "1");  // another antenna set
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(1e-6, s.instrumentalDelay(0));
    // RS106: delay.X/Y replace clockCorrectionTime, as in COBALT.
    CPPUNIT_ASSERT_EQUAL(0.0, s.stations[1].clockCorrection);
    CPPUNIT_ASSERT(
        contains(warningOn(s, "PIC.Core.RS106LBA.clockCorrectionTime"),
                 "ignored in favour of PIC.Core.RS106LBA.LBA_OUTER.LBA_30_90.delay.X/Y"));
    CPPUNIT_ASSERT_DOUBLES_EQUAL((4.675295e-06 + 4.674852e-06) / 2, s.instrumentalDelay(1), 1e-18);
    CPPUNIT_ASSERT_DOUBLES_EQUAL((4.675295e-06 - 4.674852e-06) / 2, s.polarisationDelay(1, 0),
                                 1e-18);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(-(4.675295e-06 - 4.674852e-06) / 2, s.polarisationDelay(1, 1),
                                 1e-18);
    CPPUNIT_ASSERT_EQUAL(0.25, s.polarisationPhase(1, 1));
    CPPUNIT_ASSERT_EQUAL(0.0, s.polarisationPhase(1, 0));
    // The simulator's station, by default, has the delays the corrections undo.
    CPPUNIT_ASSERT_EQUAL(4.675295e-06, s.sim.signalPaths[1].delay[0]);
    CPPUNIT_ASSERT_EQUAL(1e-6, s.sim.signalPaths[0].delay[1]);
    CPPUNIT_ASSERT_EQUAL(0.25, s.sim.signalPaths[1].phase0[1]);
    // Without clock correction nothing is applied.
    const ObservationSettings off = settingsOf(keys.set("Cobalt.correctClocks", "F"));
    CPPUNIT_ASSERT_EQUAL(0.0, off.instrumentalDelay(1));
    CPPUNIT_ASSERT_EQUAL(0.0, off.polarisationPhase(1, 1));
    // The simulator's own signal path.
    const ObservationSettings sim = settingsOf(Keys().set("Sim.CS001LBA.delay.X", "3e-6"));
    CPPUNIT_ASSERT_EQUAL(3e-6, sim.sim.signalPaths[0].delay[0]);
    CPPUNIT_ASSERT_EQUAL(0.0, sim.sim.signalPaths[0].delay[1]);
    CPPUNIT_ASSERT(sim.unknownKeys.empty());
  }

  void testDirectionTypes() {
    Keys keys;
    keys.set("Observation.nrBeams", "3")
        .set("Observation.Beam[1].directionType", "AZELGEO")
        .set("Observation.Beam[1].angle1", "1.0")
        .set("Observation.Beam[1].angle2", "0.8")
        .set("Observation.Beam[1].subbandList", "[310]")
        .set("Observation.Beam[2].directionType", "SUN")  // no angles needed
        .set("Observation.Beam[2].subbandList", "[320]");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT_EQUAL(std::string("AZELGEO"), s.beams[1].type);
    CPPUNIT_ASSERT_EQUAL(0.8, s.beams[1].dec);
    CPPUNIT_ASSERT_EQUAL(std::string("SUN"), s.beams[2].type);
    CPPUNIT_ASSERT_EQUAL(2, s.subbands[4].beam);
    CPPUNIT_ASSERT(!s.beams[2].isJ2000());
    CPPUNIT_ASSERT(
        contains(errorOf(keys.erase("Observation.Beam[1].angle2"), "Observation.Beam[1].angle2"),
                 "required key 'Observation.Beam[1].angle2' is missing"));
  }

  void testUnknownKeySummary() {
    // A production parset's other keys: counted per prefix; those beside rtcp's keys listed
    // by pattern.
    Keys keys;
    keys.set("Observation.nrBeams", "2")
        .set("Observation.Beam[1].angle1", "1")
        .set("Observation.Beam[1].angle2", "1")
        .set("Observation.Beam[1].subbandList", "[400]")
        .set("Observation.Beam[0].target", "3C295")
        .set("Observation.Beam[1].target", "3C196")
        .set("Observation.Beam[0].angel1", "1")  // a typo
        .set("Observation.Campaign.PI", "someone")
        .set("Observation.Scheduler.priority", "0.0")
        .set("PIC.Core.CS001LBA.RSP.receiver", "cbt007_0")
        .set("PIC.Core.RS106LBA.RSP.receiver", "cbt003_0")
        .set("PIC.Core.RS509LBA.RSP.ports", "[udp:cbt001:10090]")  // a station not observed
        .set("PIC.Core.CS001LBA.LBA_INNER.LBA_10_70.delay.X", "4.6e-6")
        .set("ApplCtrl.application", "CorrAppl")
        .set("Cobalt.commandStream", "null:");
    for (int i = 0; i < 500; ++i)  // the bulk of a real parset
      keys.set("PIC.Core.RS509LBA.LBA_INNER.LBA_10_70.delay.F" + std::to_string(i), "0");
    const ObservationSettings s = settingsOf(keys);
    const rtcp::UnknownKeys& u = s.unknownKeys;
    CPPUNIT_ASSERT_EQUAL(size_t(508), u.total);
    CPPUNIT_ASSERT_EQUAL(size_t(2), u.perPrefix.at("Observation").count);
    CPPUNIT_ASSERT_EQUAL(size_t(504), u.perPrefix.at("PIC").count);
    CPPUNIT_ASSERT_EQUAL(size_t(1), u.perPrefix.at("ApplCtrl").count);
    CPPUNIT_ASSERT_EQUAL(size_t(1), u.perPrefix.at("Cobalt").count);
    CPPUNIT_ASSERT_EQUAL(keys.lineOf("PIC.Core.CS001LBA.RSP.receiver"),
                         u.perPrefix.at("PIC").firstLine);
    std::vector<std::string> patterns;
    for (const rtcp::UnknownKeyGroup& g : u.listed)
      patterns.push_back(g.pattern + " x" + std::to_string(g.count));
    // LOFAR's keys rtcp has no use for (receivers, Cobalt.commandStream, the scheduler) are
    // only counted; targets and the campaign go to the MS; a misspelt key is listed, once per
    // pattern.
    CPPUNIT_ASSERT_MESSAGE(patterns.empty() ? "" : patterns[0],
                           (patterns == std::vector<std::string>{"Observation.Beam[*].angel1 x1"}));
    const std::vector<std::string> lines = u.describe();
    CPPUNIT_ASSERT_EQUAL(size_t(2), lines.size());  // never one line per key
    const auto from = [&](const char* key) { return std::to_string(keys.lineOf(key)); };
    CPPUNIT_ASSERT_EQUAL("508 parset keys not used by rtcp: ApplCtrl 1 (from line " +
                             from("ApplCtrl.application") + "), Cobalt 1 (from line " +
                             from("Cobalt.commandStream") + "), Observation 2 (from line " +
                             from("Observation.Beam[0].angel1") + "), PIC 504 (from line " +
                             from("PIC.Core.CS001LBA.RSP.receiver") + ")",
                         lines[0]);
    CPPUNIT_ASSERT(contains(lines[1], "unknown key Observation.Beam[0].angel1 (test.parset:"));
    CPPUNIT_ASSERT(contains(lines[1], "close to Observation.Beam[0].angle1 that rtcp reads"));
    // Beside rtcp's own keys, under a prefix not LOFAR's, a key is listed, but not as a
    // misspelling; under a parent rtcp never reads, only counted.
    Keys other = keys;
    other.set("Sim.noiseColour", "pink").set("Pipeline.averaging", "4");
    const std::vector<std::string> listed = settingsOf(other).unknownKeys.describe();
    CPPUNIT_ASSERT_EQUAL(size_t(3), listed.size());
    CPPUNIT_ASSERT(contains(listed[2], "unknown key Sim.noiseColour (test.parset:"));
    CPPUNIT_ASSERT(!contains(listed[2], "misspelt"));
    // Several keys of one pattern: one line.
    Keys twice = keys;
    twice.set("Observation.Beam[1].angel1", "1");
    const std::vector<std::string> grouped = settingsOf(twice).unknownKeys.describe();
    CPPUNIT_ASSERT(contains(grouped[1], "and 1 more like Observation.Beam[*].angel1"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(LofarKeysTest);
