// Tests of the beam-formed settings (BeamFormedSettings.h, ReadBeamFormed.cc): both
// generations of keys (COBALT's win, disagreement a warning), TAB angles absolute or as
// offsets, COBALT's rings and fly's eye, the files in COBALT's order with their names and
// places, the checks that name key and line, the refusal after parsing, and the effective
// parset reproducing the settings.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>

#include "SettingsTestUtil.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/Integrations.h"
#include "rtcp/ReplayParset.h"

namespace {

using namespace rtcp::test::settings;
using rtcp::BeamFormedFile;
using rtcp::BeamFormedSettings;
using rtcp::ParsetErrors;
using rtcp::StokesKind;
using rtcp::TabOrigin;
using rtcp::TabSettings;

const std::string kCoherentOn = "Observation.DataProducts.Output_CoherentStokes.enabled";
const std::string kIncoherentOn = "Observation.DataProducts.Output_IncoherentStokes.enabled";

ObservationSettings accepted(const Keys& keys) {
  return ObservationSettings::fromParset(Parset::fromString(keys.text(), "test.parset"), table());
}

/// Every error message of keys that fail.
std::vector<std::string> errorsOf(const Keys& keys) {
  try {
    ObservationSettings::fromParset(Parset::fromString(keys.text(), "test.parset"), table());
  } catch (const ParsetErrors& e) {
    std::vector<std::string> messages;
    for (const ParsetError& error : e.errors()) messages.push_back(error.what());
    return messages;
  } catch (const ParsetError& e) {
    return {e.what()};
  }
  CPPUNIT_FAIL("expected errors");
  return {};
}

/// The one message naming `key` at its line, "" when there is none.
std::string errorOn(const std::vector<std::string>& messages, const Keys& keys,
                    const std::string& key) {
  const std::string where =
      "test.parset:" + std::to_string(keys.lineOf(key)) + ": key '" + key + "'";
  for (const std::string& m : messages)
    if (contains(m, where)) return m;
  std::string all;
  for (const std::string& m : messages) all += m + "\n";
  CPPUNIT_FAIL("no error on " + key + " among:\n" + all);
  return "";
}

std::string warningOn(const ObservationSettings& s, const std::string& key) {
  for (const rtcp::ParsetWarning& w : s.warnings)
    if (w.key == key) return w.message;
  return "";
}

const std::string kBeam = "Observation.Beam[0].";
const std::string kTab0 = "Observation.Beam[0].TiedArrayBeam[0].";
const std::string kTab1 = "Observation.Beam[0].TiedArrayBeam[1].";

/// Two coherent TABs (COBALT's keys: absolute angles), IQUV of 16 channels, 4 samples
/// integrated, 2 subbands per file (the beam has 3).
Keys twoCoherentTabs() {
  Keys keys;
  keys.set("Cobalt.blockSize", "196608")
      .set(kCoherentOn, "true")
      .set("Cobalt.BeamFormer.CoherentStokes.which", "IQUV")
      .set("Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband", "16")
      .set("Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor", "4")
      .set("Cobalt.BeamFormer.CoherentStokes.subbandsPerFile", "2")
      .set(kBeam + "nrTiedArrayBeams", "2")
      .set(kTab0 + "angle1", "5.2336866848")
      .set(kTab0 + "angle2", "0.7109425145")
      .set(kTab0 + "dispersionMeasure", "26.76")
      .set(kTab1 + "angle1", "5.24")
      .set(kTab1 + "angle2", "0.72")
      .set(kTab1 + "dispersionMeasure", "12.5");
  return keys;
}

}  // namespace

class BeamFormedSettingsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedSettingsTest);
  CPPUNIT_TEST(testNothingByDefault);
  CPPUNIT_TEST(testCoherentTabsAndFiles);
  CPPUNIT_TEST(testFileNamesAndPlaces);
  CPPUNIT_TEST(testReplayWritesTheBeamFormedFilesElsewhere);
  CPPUNIT_TEST(testLeadIn);
  CPPUNIT_TEST(testRefusedAfterParsing);
  CPPUNIT_TEST(testBgpKeys);
  CPPUNIT_TEST(testAbsoluteAngleKeys);
  CPPUNIT_TEST(testRings);
  CPPUNIT_TEST(testFlysEye);
  CPPUNIT_TEST(testIncoherent);
  CPPUNIT_TEST(testBlockSizeChecked);
  CPPUNIT_TEST(testEveryProblemAtOnce);
  CPPUNIT_TEST(testDelayCompensationChannels);
  CPPUNIT_TEST(testEffectiveParset);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testNothingByDefault() {
    const ObservationSettings s = settingsOf(Keys());
    CPPUNIT_ASSERT(!s.beamFormed.enabled());
    CPPUNIT_ASSERT(s.beamFormed.saps.empty());
    CPPUNIT_ASSERT(s.beamFormed.files.empty());
  }

  void testCoherentTabsAndFiles() {
    const ObservationSettings s = accepted(twoCoherentTabs());
    const BeamFormedSettings& bf = s.beamFormed;
    CPPUNIT_ASSERT(bf.coherentEnabled && !bf.incoherentEnabled);
    CPPUNIT_ASSERT(bf.coherent.kind == StokesKind::kIQUV);
    CPPUNIT_ASSERT_EQUAL(16, bf.coherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(4, bf.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT_EQUAL(196608 / 64, bf.coherent.outputSamplesPerBlock(s.samplesPerBlock()));
    CPPUNIT_ASSERT(bf.coherentDedispersion);  // COBALT's default
    CPPUNIT_ASSERT_EQUAL(4096, bf.nrHighResolutionChannels);
    CPPUNIT_ASSERT_EQUAL(size_t(1), bf.saps.size());
    const std::vector<TabSettings>& tabs = bf.saps[0].tabs;
    CPPUNIT_ASSERT_EQUAL(size_t(2), tabs.size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(5.24, tabs[1].direction.ra, 0);  // absolute (COBALT)
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.72, tabs[1].direction.dec, 0);
    CPPUNIT_ASSERT_EQUAL(std::string("J2000"), tabs[1].direction.type);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(26.76, tabs[0].dispersionMeasure, 0);
    CPPUNIT_ASSERT(bf.dedispersed(tabs[0]));
    // 2 TABs x 4 Stokes x 2 parts (subbands 0-1 and 2), in COBALT's order.
    CPPUNIT_ASSERT_EQUAL(size_t(16), bf.files.size());
    const BeamFormedFile& f = bf.files[13];  // TAB 1, V, part 1
    CPPUNIT_ASSERT_EQUAL(1, f.tab);
    CPPUNIT_ASSERT_EQUAL(2, f.component);
    CPPUNIT_ASSERT_EQUAL(1, f.part);
    CPPUNIT_ASSERT_EQUAL(2, f.firstSubband);
    CPPUNIT_ASSERT_EQUAL(1, f.nrSubbands);
    CPPUNIT_ASSERT_EQUAL(std::string("L42_SAP000_B001_S2_P001_bf.h5"), f.filename);
    CPPUNIT_ASSERT_EQUAL(std::string("localhost"), f.host);
    CPPUNIT_ASSERT_EQUAL(std::string("."), f.directory);
    CPPUNIT_ASSERT_EQUAL(13, bf.fileOf(0, 1, 2, 2));
    CPPUNIT_ASSERT_EQUAL(12, bf.fileOf(0, 1, 2, 1));
    CPPUNIT_ASSERT_EQUAL(-1, bf.fileOf(0, 2, 0, 0));
    CPPUNIT_ASSERT((tabs[1].files == std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
    CPPUNIT_ASSERT(contains(bf.summaryLine(), "2 TAB(s)"));
  }

  void testFileNamesAndPlaces() {
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.CoherentStokes.which", "I")
        .set("Observation.DataProducts.Output_CoherentStokes.filenames", "[a.h5, b.h5, c.h5, d.h5]")
        .set("Observation.DataProducts.Output_CoherentStokes.locations",
             "[node1:/data/L42, node2:/data/L42, node1:/data/L42, node2:/data/L42]");
    const ObservationSettings s = accepted(keys);
    CPPUNIT_ASSERT_EQUAL(std::string("c.h5"), s.beamFormed.files[2].filename);
    CPPUNIT_ASSERT_EQUAL(std::string("node1"), s.beamFormed.files[2].host);
    CPPUNIT_ASSERT_EQUAL(std::string("/data/L42"), s.beamFormed.files[2].directory);

    keys.set("Observation.DataProducts.Output_CoherentStokes.filenames", "[a.h5, b.h5]");
    CPPUNIT_ASSERT(contains(
        errorOn(errorsOf(keys), keys, "Observation.DataProducts.Output_CoherentStokes.filenames"),
        "2 filenames for 4 CoherentStokes files"));
    keys.set("Observation.DataProducts.Output_CoherentStokes.filenames", "[a.h5, b.h5, a.h5, d.h5]")
        .set("Observation.DataProducts.Output_CoherentStokes.locations", "[node1:/data]");
    CPPUNIT_ASSERT(contains(
        errorOn(errorsOf(keys), keys, "Observation.DataProducts.Output_CoherentStokes.filenames"),
        "two files would write node1:/data/a.h5"));
    keys.set("Observation.DataProducts.Output_CoherentStokes.filenames", "[]")
        .set("Observation.DataProducts.Output_CoherentStokes.locations", "[node1]");
    CPPUNIT_ASSERT(contains(
        errorOn(errorsOf(keys), keys, "Observation.DataProducts.Output_CoherentStokes.locations"),
        "expected HOST:DIR"));
  }

  /// A replay's parset (a recording's replay.parset, a dump's dump.parset) writes the
  /// beam-formed files under their names into its own directory, never over the live ones.
  void testReplayWritesTheBeamFormedFilesElsewhere() {
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.CoherentStokes.which", "I")
        .set("Observation.DataProducts.Output_CoherentStokes.filenames", "[a.h5, b.h5, c.h5, d.h5]")
        .set("Observation.DataProducts.Output_CoherentStokes.locations",
             "[node1:/data/L42, node2:/data/L42, node1:/data/L42, node2:/data/L42]");
    const Parset live = Parset::fromString(keys.text(), "test.parset");
    const ObservationSettings s = accepted(keys);
    const ObservationSettings replay = ObservationSettings::fromParset(
        rtcp::replayParset(live, s, "/rec", "/rec/replay"), table());
    CPPUNIT_ASSERT_EQUAL(s.beamFormed.files.size(), replay.beamFormed.files.size());
    for (size_t i = 0; i < s.beamFormed.files.size(); ++i) {
      CPPUNIT_ASSERT_EQUAL(s.beamFormed.files[i].filename, replay.beamFormed.files[i].filename);
      CPPUNIT_ASSERT_EQUAL(std::string("localhost"), replay.beamFormed.files[i].host);
      CPPUNIT_ASSERT_EQUAL(std::string("/rec/replay"), replay.beamFormed.files[i].directory);
    }
  }

  /// The beam former's lead-in (Rtcp.beamFormer.leadInBlocks): what a state needs
  /// (beamFormerLeadInBlocks: whole blocks of the filter bank's history, and of twice the
  /// dedispersion latency), a dump's replay parset carrying it, the effective parset keeping
  /// it, the ranks' first block before 0; checked, and ignored with a warning without
  /// beam-formed output.
  void testLeadIn() {
    Keys keys = twoCoherentTabs();  // 196608-sample blocks, C = 16, DM 26.76 at ~59 MHz
    ObservationSettings s = accepted(keys);
    CPPUNIT_ASSERT_EQUAL(0, s.beamFormed.leadInBlocks);
    CPPUNIT_ASSERT_EQUAL(int64_t(0), rtcp::firstProcessedBlock(s));
    const int latency = rtcp::dedispersionLatency(s);
    CPPUNIT_ASSERT(latency > 0 && 2 * latency < 196608);
    CPPUNIT_ASSERT_EQUAL(int64_t(2), rtcp::beamFormerLeadInBlocks(s));  // filter bank + overlap
    keys.set(kTab0 + "dispersionMeasure", "0").set(kTab1 + "dispersionMeasure", "0");
    CPPUNIT_ASSERT_EQUAL(int64_t(1), rtcp::beamFormerLeadInBlocks(accepted(keys)));
    keys.set("Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband", "1");
    CPPUNIT_ASSERT_EQUAL(int64_t(0), rtcp::beamFormerLeadInBlocks(accepted(keys)));  // no state
    // Blocks of 16 ms and DM 3000: the overlap spans many blocks.
    keys = twoCoherentTabs();
    keys.set("Cobalt.blockSize", "3072").set(kTab0 + "dispersionMeasure", "3000");
    const ObservationSettings deep = accepted(keys);
    const int64_t deepLatency = rtcp::dedispersionLatency(deep);
    CPPUNIT_ASSERT_EQUAL(1 + (2 * deepLatency + 3071) / 3072, rtcp::beamFormerLeadInBlocks(deep));

    // A dump's replay of blocks 3 and 4 after a lead-in of 2.
    const Parset live = Parset::fromString(twoCoherentTabs().text(), "test.parset");
    const ObservationSettings replay = ObservationSettings::fromParset(
        rtcp::replayParset(live, s, "/rec", "/rec/ms", rtcp::BlockWindow{3, 2, 2}), table());
    CPPUNIT_ASSERT_EQUAL(2, replay.beamFormed.leadInBlocks);
    CPPUNIT_ASSERT_EQUAL(int64_t(-2), rtcp::firstProcessedBlock(replay));
    CPPUNIT_ASSERT_EQUAL(s.blockStartSample(3), replay.startSample());
    CPPUNIT_ASSERT_EQUAL(int64_t(2), replay.nrBlocks());
    CPPUNIT_ASSERT(replay.unknownKeys.describe().empty());
    CPPUNIT_ASSERT(replay.beamFormed ==
                   ObservationSettings::fromParset(replay.toParset(), table()).beamFormed);
    // More lead-in than the observation has blocks before the window: refused.
    CPPUNIT_ASSERT_THROW(rtcp::replayParset(live, s, "/rec", "/rec/ms", rtcp::BlockWindow{1, 2, 2}),
                         std::invalid_argument);

    keys = twoCoherentTabs();
    keys.set("Rtcp.beamFormer.leadInBlocks", "-1");
    CPPUNIT_ASSERT(!errorOn(errorsOf(keys), keys, "Rtcp.beamFormer.leadInBlocks").empty());
    Keys correlatedOnly;
    correlatedOnly.set("Rtcp.beamFormer.leadInBlocks", "3");
    const ObservationSettings plain = accepted(correlatedOnly);
    CPPUNIT_ASSERT_EQUAL(0, plain.beamFormed.leadInBlocks);
    CPPUNIT_ASSERT(contains(warningOn(plain, "Rtcp.beamFormer.leadInBlocks"), "ignored"));
    CPPUNIT_ASSERT_EQUAL(int64_t(0), rtcp::firstProcessedBlock(plain));
  }

  void testRefusedAfterParsing() {
    // Every part takes beam-formed outputs; a bad one is named, and nothing else is.
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.CoherentStokes.which", "IQV");
    const std::vector<std::string> errors = errorsOf(keys);
    CPPUNIT_ASSERT_EQUAL(size_t(1), errors.size());
    CPPUNIT_ASSERT(contains(errorOn(errors, keys, "Cobalt.BeamFormer.CoherentStokes.which"),
                            "'IQV' is not I, IQUV or XXYY"));
    CPPUNIT_ASSERT_EQUAL(size_t(2), accepted(twoCoherentTabs()).beamFormed.saps.at(0).tabs.size());
    // BG/P's complex voltages: named, with what to ask for instead.
    Keys bgp;
    bgp.set("Observation.DataProducts.Output_Beamformed.enabled", "true");
    CPPUNIT_ASSERT(
        contains(errorOn(errorsOf(bgp), bgp, "Observation.DataProducts.Output_Beamformed.enabled"),
                 "which = XXYY"));
  }

  void testBgpKeys() {
    // A BG/P parset (no Cobalt.* key): OLAP.CNProc_CoherentStokes.*, TAB angles as offsets.
    Keys keys;
    keys.set(kCoherentOn, "true")
        .set("OLAP.CNProc_CoherentStokes.which", "I")
        .set("OLAP.CNProc_CoherentStokes.channelsPerSubband", "0")
        .set("OLAP.CNProc_CoherentStokes.timeIntegrationFactor", "8")
        .set("OLAP.CNProc_CoherentStokes.subbandsPerFile", "512")
        .set("OLAP.coherentDedisperseChannels", "false")
        .set(kBeam + "nrTiedArrayBeams", "1")
        .set(kTab0 + "angle1", "0.01")
        .set(kTab0 + "angle2", "-0.02");
    const ObservationSettings s = accepted(keys);
    const BeamFormedSettings& bf = s.beamFormed;
    CPPUNIT_ASSERT_EQUAL(64, bf.coherent.nrChannels);  // 0: the correlator's, as BG/P
    CPPUNIT_ASSERT(contains(warningOn(s, "OLAP.CNProc_CoherentStokes.channelsPerSubband"),
                            "taken as the correlator's 64"));
    CPPUNIT_ASSERT_EQUAL(8, bf.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT(!bf.coherentDedispersion);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(5.2336866848 + 0.01, bf.saps[0].tabs[0].direction.ra, 1e-15);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.7109425145 - 0.02, bf.saps[0].tabs[0].direction.dec, 1e-15);
    CPPUNIT_ASSERT_EQUAL(size_t(1), bf.files.size());  // 512 per file: one part of 3
    CPPUNIT_ASSERT_EQUAL(3, bf.files[0].nrSubbands);

    // COBALT's keys beside: they win, the disagreeing BG/P key is a warning.
    keys.set("Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor", "16");
    const ObservationSettings both = accepted(keys);
    CPPUNIT_ASSERT_EQUAL(16, both.beamFormed.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT(contains(warningOn(both, "OLAP.CNProc_CoherentStokes.timeIntegrationFactor"),
                            "using Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor"));
    // ... and with a Cobalt.* key the angles are COBALT's: absolute.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.01, both.beamFormed.saps[0].tabs[0].direction.ra, 0);

    // The oldest BG/P keys: OLAP.Stokes.*, OLAP.nrPencils / OLAP.Pencil[t] for every beam.
    Keys oldest;
    oldest.set(kCoherentOn, "true")
        .set("OLAP.Stokes.which", "IQUV")
        .set("OLAP.Stokes.channelsPerSubband", "4")
        .set("OLAP.Stokes.integrationSteps", "2")
        .set("OLAP.nrPencils", "2")
        .set("OLAP.Pencil[0].angle1", "0")
        .set("OLAP.Pencil[0].angle2", "0")
        .set("OLAP.Pencil[1].angle1", "0.001")
        .set("OLAP.Pencil[1].angle2", "0")
        .set("OLAP.dispersionMeasure", "3.5");
    const ObservationSettings old = accepted(oldest);
    CPPUNIT_ASSERT(old.beamFormed.coherent.kind == StokesKind::kIQUV);
    CPPUNIT_ASSERT_EQUAL(4, old.beamFormed.coherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(2, old.beamFormed.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT_EQUAL(size_t(2), old.beamFormed.saps[0].tabs.size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(5.2336866848 + 0.001, old.beamFormed.saps[0].tabs[1].direction.ra,
                                 1e-15);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(3.5, old.beamFormed.saps[0].tabs[1].dispersionMeasure, 0);

    // BG/P's incoherent Stokes: OLAP.CNProc_IncoherentStokes.*, an incoherent TAB.
    Keys incoherent;
    incoherent.set(kIncoherentOn, "true")
        .set("OLAP.CNProc_IncoherentStokes.which", "IQUV")
        .set("OLAP.CNProc_IncoherentStokes.channelsPerSubband", "16")
        .set("OLAP.CNProc_IncoherentStokes.timeIntegrationFactor", "4")
        .set("OLAP.CNProc_IncoherentStokes.subbandsPerFile", "2")
        .set(kBeam + "nrTiedArrayBeams", "1")
        .set(kTab0 + "coherent", "false");
    const BeamFormedSettings is = accepted(incoherent).beamFormed;
    CPPUNIT_ASSERT(is.incoherentEnabled && !is.coherentEnabled);
    CPPUNIT_ASSERT(is.incoherent.kind == StokesKind::kIQUV);
    CPPUNIT_ASSERT_EQUAL(16, is.incoherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(4, is.incoherent.timeIntegrationFactor);
    CPPUNIT_ASSERT(!is.saps.at(0).tabs.at(0).coherent);
    CPPUNIT_ASSERT_EQUAL(size_t(4 * 2), is.files.size());  // IQUV x 2 parts of 2 subbands
  }

  void testAbsoluteAngleKeys() {
    // COBALT of 2014: absoluteAngle1/2 when given; SAS's later 0, 0 placeholders are not.
    Keys keys = twoCoherentTabs();
    keys.set(kTab0 + "angle1", "0.0")
        .set(kTab0 + "angle2", "0.035")
        .set(kTab0 + "absoluteAngle1", "5.2336866848")
        .set(kTab0 + "absoluteAngle2", "0.7459425145")
        .set(kTab1 + "absoluteAngle1", "0")
        .set(kTab1 + "absoluteAngle2", "0");
    const ObservationSettings s = accepted(keys);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.7459425145, s.beamFormed.saps[0].tabs[0].direction.dec, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.72, s.beamFormed.saps[0].tabs[1].direction.dec, 0);
  }

  void testRings() {
    Keys keys = twoCoherentTabs();
    keys.set(kBeam + "nrTabRings", "2").set(kBeam + "tabRingSize", "0.01");
    const ObservationSettings s = accepted(keys);
    const std::vector<TabSettings>& tabs = s.beamFormed.saps[0].tabs;
    CPPUNIT_ASSERT_EQUAL(size_t(2 + 19), tabs.size());  // manual, then 1 + 6 + 12
    const double ra = 5.2336866848, dec = 0.7109425145;
    CPPUNIT_ASSERT(tabs[2].origin == TabOrigin::kRing);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(ra, tabs[2].direction.ra, 1e-15);  // the centre
    // First ring: from the top, clockwise; angle1 offsets divided by cos(Dec) (J2000).
    CPPUNIT_ASSERT_DOUBLES_EQUAL(ra, tabs[3].direction.ra, 1e-15);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(dec + 0.01, tabs[3].direction.dec, 1e-15);
    const double dl = 1.5 * 0.01 / std::sqrt(3.0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(ra + dl / std::cos(dec + 0.005), tabs[4].direction.ra, 1e-13);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(dec + 0.005, tabs[4].direction.dec, 1e-15);
    // Every ring TAB at its ring's distance (in the tangent plane): 1 or 2 ring sizes.
    for (size_t t = 3; t < tabs.size(); ++t) {
      const double dx = (tabs[t].direction.ra - ra) * std::cos(tabs[t].direction.dec);
      const double dy = tabs[t].direction.dec - dec;
      const double r = std::hypot(dx, dy) / 0.01;
      CPPUNIT_ASSERT_MESSAGE(std::to_string(r), r > 0.85 && r < 2.01);
    }
    CPPUNIT_ASSERT_EQUAL(size_t(21), s.beamFormed.files.size() / 8);  // IQUV x 2 parts

    keys.set(kBeam + "tabRingSize", "4.0");  // radians, not degrees
    CPPUNIT_ASSERT(contains(errorOn(errorsOf(keys), keys, kBeam + "tabRingSize"),
                            "more than 90 degrees from the beam centre"));
    keys.set(kBeam + "tabRingSize", "0");
    CPPUNIT_ASSERT(
        contains(errorOn(errorsOf(keys), keys, kBeam + "tabRingSize"), "need a ring size above 0"));
  }

  void testFlysEye() {
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.flysEye", "true");
    const ObservationSettings s = accepted(keys);
    const std::vector<TabSettings>& tabs = s.beamFormed.saps[0].tabs;
    CPPUNIT_ASSERT_EQUAL(size_t(2), tabs.size());  // CS001LBA, RS106LBA
    CPPUNIT_ASSERT_EQUAL(1, tabs[1].station);
    CPPUNIT_ASSERT(tabs[1].origin == TabOrigin::kFlysEye);
    CPPUNIT_ASSERT(tabs[1].direction == s.beams[0]);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0, tabs[1].dispersionMeasure, 0);
    CPPUNIT_ASSERT(contains(warningOn(s, "Cobalt.BeamFormer.flysEye"), "are not made"));
    // BG/P's key.
    keys.erase("Cobalt.BeamFormer.flysEye").set("OLAP.PencilInfo.flysEye", "true");
    CPPUNIT_ASSERT_EQUAL(size_t(2), accepted(keys).beamFormed.saps[0].tabs.size());
  }

  void testIncoherent() {
    Keys keys = twoCoherentTabs();
    keys.set(kTab1 + "coherent", "false");
    // An incoherent TAB without its output: named.
    CPPUNIT_ASSERT(contains(errorOn(errorsOf(keys), keys, kTab1 + "coherent"),
                            "is incoherent, but " + kIncoherentOn + " is not set"));
    keys.set(kIncoherentOn, "true").set("Cobalt.BeamFormer.IncoherentStokes.which", "IQUV");
    const ObservationSettings s = accepted(keys);
    const TabSettings& tab = s.beamFormed.saps[0].tabs[1];
    CPPUNIT_ASSERT(!tab.coherent);
    CPPUNIT_ASSERT(tab.direction == s.beams[0]);  // at the beam centre, as COBALT
    CPPUNIT_ASSERT(!s.beamFormed.dedispersed(tab));
    CPPUNIT_ASSERT_EQUAL(1, s.beamFormed.incoherent.nrChannels);     // COBALT's defaults
    CPPUNIT_ASSERT_EQUAL(size_t(8 + 4), s.beamFormed.files.size());  // one part of 3 subbands
    CPPUNIT_ASSERT(!s.beamFormed.files[8].coherent);
    keys.set("Cobalt.BeamFormer.IncoherentStokes.which", "XXYY");
    CPPUNIT_ASSERT(
        contains(errorOn(errorsOf(keys), keys, "Cobalt.BeamFormer.IncoherentStokes.which"),
                 "incoherent Stokes cannot be XXYY"));
  }

  void testBlockSizeChecked() {
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor", "5");
    CPPUNIT_ASSERT(contains(errorOn(errorsOf(keys), keys, "Cobalt.blockSize"),
                            "a block of 196608 samples is not a whole number of CoherentStokes "
                            "samples (16 channels x 5 integrated = 80"));
    keys.set("Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor", "4")
        .set("Cobalt.BeamFormer.nrHighResolutionChannels", "3");
    CPPUNIT_ASSERT(
        contains(errorOn(errorsOf(keys), keys, "Cobalt.BeamFormer.nrHighResolutionChannels"),
                 "not a power of two"));
    keys.set("Cobalt.BeamFormer.nrHighResolutionChannels", "4096")
        .set("Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband", "12");
    CPPUNIT_ASSERT(contains(
        errorOn(errorsOf(keys), keys, "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband"),
        "12 is not a power of two"));
  }

  void testEveryProblemAtOnce() {
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.CoherentStokes.which", "Q")
        .set(kTab0 + "dispersionMeasure", "-1")
        .erase(kTab1 + "angle2")
        .set(kTab1 + "stationList", "[CS001]");
    const std::vector<std::string> errors = errorsOf(keys);
    errorOn(errors, keys, "Cobalt.BeamFormer.CoherentStokes.which");
    errorOn(errors, keys, kTab0 + "dispersionMeasure");
    errorOn(errors, keys, kTab1 + "stationList");
    keys.set(kTab1 + "stationList", "[]");
    bool angleNamed = false;
    for (const std::string& e : errorsOf(keys))
      angleNamed = angleNamed || contains(e, "'Observation.Beam[0].TiedArrayBeam[1].angle2'");
    CPPUNIT_ASSERT(angleNamed);
  }

  void testDelayCompensationChannels() {
    // CS001 and RS106 at LBA: COBALT's bound, a power of two within 32..256.
    const int derived = accepted(twoCoherentTabs()).beamFormed.nrDelayCompensationChannels;
    CPPUNIT_ASSERT(derived >= 32 && derived <= 256 && (derived & (derived - 1)) == 0);
    // Shorter baselines and lower frequencies allow more channels, never past 256.
    CPPUNIT_ASSERT_EQUAL(256, rtcp::cobaltDelayCompensationChannels(400, 10e6, 200e6));
    CPPUNIT_ASSERT_EQUAL(64,
                         rtcp::cobaltDelayCompensationChannels(1e6, 240e6, 200e6));  // 83 / 2 up
    CPPUNIT_ASSERT_EQUAL(32, rtcp::cobaltDelayCompensationChannels(1e7, 240e6, 200e6));
    CPPUNIT_ASSERT(rtcp::cobaltDelayCompensationChannels(3e3, 60e6, 200e6) >=
                   rtcp::cobaltDelayCompensationChannels(3e4, 60e6, 200e6));
    Keys keys = twoCoherentTabs();
    keys.set("Cobalt.BeamFormer.nrDelayCompensationChannels", "64");
    CPPUNIT_ASSERT_EQUAL(64, accepted(keys).beamFormed.nrDelayCompensationChannels);
  }

  void testEffectiveParset() {
    Keys keys = twoCoherentTabs();
    keys.set(kBeam + "nrTabRings", "1")
        .set(kBeam + "tabRingSize", "0.02")
        .set(kTab1 + "coherent", "false")
        .set(kIncoherentOn, "true")
        .set("Observation.DataProducts.Output_IncoherentStokes.locations", "[node3:/data]");
    const ObservationSettings s = accepted(keys);
    const ObservationSettings again = ObservationSettings::fromParset(s.toParset(), table());
    CPPUNIT_ASSERT(again.beamFormed == s.beamFormed);
    Keys flys = twoCoherentTabs();
    flys.set("Cobalt.BeamFormer.flysEye", "true");
    const ObservationSettings f = accepted(flys);
    CPPUNIT_ASSERT(ObservationSettings::fromParset(f.toParset(), table()).beamFormed ==
                   f.beamFormed);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedSettingsTest);
