// Online flagging settings (FlaggingSettings.h): BG/P's OLAP.CNProc.online* keys as its
// Parset.cc read them, rtcp's Rtcp.Flagging.* keys, errors naming key and line, and the
// effective parset.
#include <cppunit/extensions/HelperMacros.h>

#include "SettingsTestUtil.h"
#include "rtcp/FlaggingSettings.h"

namespace {

using namespace rtcp::test::settings;
using rtcp::FlaggerStatistics;
using rtcp::FlaggingSettings;
using rtcp::PostFlaggerType;
using rtcp::PostPolarisations;
using rtcp::PreFlaggerType;

std::string warningOn(const ObservationSettings& s, const std::string& key) {
  for (const rtcp::ParsetWarning& w : s.warnings)
    if (w.key == key) return w.message;
  return "";
}

Keys allOn() {
  Keys keys;
  keys.set("OLAP.CNProc.onlineFlagging", "T")
      .set("OLAP.CNProc.onlinePreCorrelationFlagging", "T")
      .set("OLAP.CNProc.onlinePostCorrelationFlagging", "T");
  return keys;
}

}  // namespace

class FlaggingSettingsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(FlaggingSettingsTest);
  CPPUNIT_TEST(testOffByDefault);
  CPPUNIT_TEST(testBgpKeys);
  CPPUNIT_TEST(testStageWithoutTheSwitch);
  CPPUNIT_TEST(testSwitchWithoutAStage);
  CPPUNIT_TEST(testTypes);
  CPPUNIT_TEST(testBadTypesNameKeyAndLine);
  CPPUNIT_TEST(testOwnKeys);
  CPPUNIT_TEST(testBadOwnKeysNameKeyAndLine);
  CPPUNIT_TEST(testEffectiveParset);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testOffByDefault() {
    const FlaggingSettings f = settingsOf(Keys()).flagging;
    CPPUNIT_ASSERT(!f.online && !f.preCorrelation && !f.postCorrelation);
    CPPUNIT_ASSERT(!f.preCorrelationNoChannels && !f.detectBrokenStations);
    CPPUNIT_ASSERT(!f.anyPreCorrelation());
    CPPUNIT_ASSERT_EQUAL(std::string("online flagging: off"), f.summaryLine());
  }

  void testBgpKeys() {
    const ObservationSettings s = settingsOf(allOn());
    const FlaggingSettings& f = s.flagging;
    CPPUNIT_ASSERT(f.online && f.preCorrelation && f.postCorrelation);
    CPPUNIT_ASSERT(!f.preCorrelationNoChannels);
    CPPUNIT_ASSERT(f.detectBrokenStations);  // with pre-correlation flagging, by default
    CPPUNIT_ASSERT(f.preType == PreFlaggerType::kSumThreshold);
    CPPUNIT_ASSERT(f.preStatistics == FlaggerStatistics::kWinsorized);
    CPPUNIT_ASSERT(f.postType == PostFlaggerType::kAoflagger);
    CPPUNIT_ASSERT(s.warnings.empty());
    CPPUNIT_ASSERT(contains(f.summaryLine(), "pre-correlation SUM_THRESHOLD"));
    CPPUNIT_ASSERT(contains(f.summaryLine(), "post-correlation AOFlagger"));
    CPPUNIT_ASSERT_EQUAL(32, f.postWindow);  // docs/PERFORMANCE.md: 0.6 of 16's cost
    CPPUNIT_ASSERT_EQUAL(4, f.postOverlap);
    CPPUNIT_ASSERT(f.postPolarisations == PostPolarisations::kStokesI);  // rtcp's strategy's
    CPPUNIT_ASSERT_EQUAL(1, f.postThreads);
    CPPUNIT_ASSERT(
        contains(f.summaryLine(), "rtcp's online strategy, polarisations I, windows of 32"));
    // The view across subbands: on with pre-correlation flagging, by default.
    CPPUNIT_ASSERT(f.subbandLevel.on);
    CPPUNIT_ASSERT_EQUAL(8, f.subbandLevel.halfWindow);
    CPPUNIT_ASSERT_EQUAL(6.0, f.subbandLevel.sigmas);
    CPPUNIT_ASSERT_EQUAL(15.0, f.subbandLevel.minimumDb);
    CPPUNIT_ASSERT(contains(f.summaryLine(), "whole subbands above the bandpass"));

    Keys keys = allOn();
    keys.set("OLAP.CNProc.onlinePreCorrelationNoChannelsFlagging", "T")
        .set("OLAP.CNProc.onlinePostCorrelationFlaggingDetectBrokenStations", "F");
    const FlaggingSettings g = settingsOf(keys).flagging;
    CPPUNIT_ASSERT(g.preCorrelationNoChannels);
    CPPUNIT_ASSERT(!g.detectBrokenStations);

    // The key says otherwise: off with pre-correlation flagging, on without it.
    keys = allOn();
    keys.set("Rtcp.Flagging.subbandLevel.enabled", "F");
    CPPUNIT_ASSERT(!settingsOf(keys).flagging.subbandLevel.on);
    keys = allOn();
    keys.set("OLAP.CNProc.onlinePreCorrelationFlagging", "F")
        .set("Rtcp.Flagging.subbandLevel.enabled", "T");
    const FlaggingSettings h = settingsOf(keys).flagging;
    CPPUNIT_ASSERT(!h.preCorrelation && h.subbandLevel.on);
    CPPUNIT_ASSERT(contains(h.summaryLine(), "whole subbands above the bandpass"));
    // Without the switch, nothing (a warning naming the key).
    Keys alone;
    alone.set("Rtcp.Flagging.subbandLevel.enabled", "T");
    const ObservationSettings off = settingsOf(alone);
    CPPUNIT_ASSERT(!off.flagging.subbandLevel.on);
    CPPUNIT_ASSERT(contains(warningOn(off, "Rtcp.Flagging.subbandLevel.enabled"),
                            "OLAP.CNProc.onlineFlagging is not"));
  }

  void testStageWithoutTheSwitch() {
    Keys keys;
    keys.set("OLAP.CNProc.onlinePreCorrelationFlagging", "T");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT(!s.flagging.preCorrelation);
    const std::string warning = warningOn(s, "OLAP.CNProc.onlinePreCorrelationFlagging");
    CPPUNIT_ASSERT_MESSAGE(
        warning,
        contains(warning, "test.parset:" + std::to_string(keys.lineOf(
                                               "OLAP.CNProc.onlinePreCorrelationFlagging"))));
    CPPUNIT_ASSERT_MESSAGE(warning, contains(warning, "OLAP.CNProc.onlineFlagging is not"));
  }

  void testSwitchWithoutAStage() {
    Keys keys;
    keys.set("OLAP.CNProc.onlineFlagging", "T");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT(s.flagging.online && !s.flagging.anyPreCorrelation());
    CPPUNIT_ASSERT(contains(warningOn(s, "OLAP.CNProc.onlineFlagging"), "no stage is on"));
  }

  void testTypes() {
    Keys keys = allOn();
    keys.set("OLAP.CNProc.onlinePreCorrelationFlaggingType", "INTEGRATED_SUM_THRESHOLD_2D")
        .set("OLAP.CNProc.onlinePreCorrelationFlaggingStatisticsType", "NORMAL")
        .set("OLAP.CNProc.onlinePostCorrelationFlaggingType", "AOFLAGGER");
    FlaggingSettings f = settingsOf(keys).flagging;
    CPPUNIT_ASSERT(f.preType == PreFlaggerType::kIntegratedSumThreshold2D);
    CPPUNIT_ASSERT(f.preStatistics == FlaggerStatistics::kNormal);

    // BG/P's variants with history: the variant without, and a warning.
    keys.set("OLAP.CNProc.onlinePreCorrelationFlaggingType",
             "INTEGRATED_SUM_THRESHOLD_WITH_HISTORY")
        .set("OLAP.CNProc.onlinePostCorrelationFlaggingType", "SMOOTHED_SUM_THRESHOLD");
    const ObservationSettings s = settingsOf(keys);
    CPPUNIT_ASSERT(s.flagging.preType == PreFlaggerType::kIntegratedSumThreshold);
    CPPUNIT_ASSERT(s.flagging.postType == PostFlaggerType::kSmoothedSumThreshold);
    CPPUNIT_ASSERT(
        contains(warningOn(s, "OLAP.CNProc.onlinePreCorrelationFlaggingType"), "no history"));
    CPPUNIT_ASSERT(
        contains(warningOn(s, "OLAP.CNProc.onlinePostCorrelationFlaggingType"), "AOFlagger"));
    CPPUNIT_ASSERT(s.flagging.postStatistics == FlaggerStatistics::kWinsorized);

    // The post-correlation note only when that stage runs; the variant's whether or not.
    keys.set("OLAP.CNProc.onlinePostCorrelationFlagging", "F")
        .set("OLAP.CNProc.onlinePreCorrelationFlagging", "F")
        .set("OLAP.CNProc.onlinePostCorrelationFlaggingStatisticsType", "NORMAL");
    const ObservationSettings off = settingsOf(keys);
    CPPUNIT_ASSERT(off.flagging.postType == PostFlaggerType::kSmoothedSumThreshold);
    CPPUNIT_ASSERT(off.flagging.postStatistics == FlaggerStatistics::kNormal);
    CPPUNIT_ASSERT(warningOn(off, "OLAP.CNProc.onlinePostCorrelationFlaggingType").empty());
    CPPUNIT_ASSERT(
        contains(warningOn(off, "OLAP.CNProc.onlinePreCorrelationFlaggingType"), "no history"));
  }

  void testBadTypesNameKeyAndLine() {
    Keys keys = allOn();
    keys.set("OLAP.CNProc.onlinePreCorrelationFlaggingType", "KURTOSIS");
    const std::string pre = errorOf(keys, "OLAP.CNProc.onlinePreCorrelationFlaggingType");
    CPPUNIT_ASSERT_MESSAGE(pre, contains(pre, "'KURTOSIS' is no pre-correlation flagger type"));
    CPPUNIT_ASSERT_MESSAGE(pre, contains(pre, "INTEGRATED_SUM_THRESHOLD_2D"));
    CPPUNIT_ASSERT_MESSAGE(pre, !contains(pre, "WITH_HISTORY"));  // variants are not listed
    keys = allOn();
    keys.set("OLAP.CNProc.onlinePostCorrelationFlaggingType", "KURTOSIS");
    const std::string post = errorOf(keys, "OLAP.CNProc.onlinePostCorrelationFlaggingType");
    CPPUNIT_ASSERT_MESSAGE(post, contains(post, "'KURTOSIS' is no post-correlation flagger type"));
    CPPUNIT_ASSERT_MESSAGE(post, contains(post, "(AOFLAGGER, THRESHOLD, SUM_THRESHOLD,"));
    keys = allOn();
    keys.set("OLAP.CNProc.onlinePreCorrelationFlaggingStatisticsType", "MEDIAN");
    CPPUNIT_ASSERT(contains(errorOf(keys, "OLAP.CNProc.onlinePreCorrelationFlaggingStatisticsType"),
                            "'MEDIAN' is no statistics type (WINSORIZED, NORMAL)"));
    keys = allOn();
    keys.set("OLAP.CNProc.onlinePostCorrelationFlaggingStatisticsType", "MEDIAN");
    CPPUNIT_ASSERT(
        contains(errorOf(keys, "OLAP.CNProc.onlinePostCorrelationFlaggingStatisticsType"),
                 "'MEDIAN' is no statistics type (WINSORIZED, NORMAL)"));
    keys = allOn();
    keys.set("OLAP.CNProc.onlineFlagging", "maybe");
    errorOf(keys, "OLAP.CNProc.onlineFlagging");
  }

  void testOwnKeys() {
    Keys keys = allOn();
    keys.set("Rtcp.Flagging.preCorrelation.threshold", "5.5")
        .set("Rtcp.Flagging.preCorrelation.spectraPerCell", "32")
        .set("Rtcp.Flagging.preCorrelation.maxWindow", "16")
        .set("Rtcp.Flagging.brokenStation.flaggedFraction", "0.8")
        .set("Rtcp.Flagging.brokenStation.powerRatio", "0.1")
        .set("Rtcp.Flagging.postCorrelation.strategy", "/opt/lofar-lba.lua")
        .set("Rtcp.Flagging.postCorrelation.window", "24")
        .set("Rtcp.Flagging.postCorrelation.overlap", "6")
        .set("Rtcp.Flagging.postCorrelation.polarisations", "XXYY")
        .set("Rtcp.Flagging.postCorrelation.threads", "4")
        .set("Rtcp.Flagging.subbandLevel.halfWindow", "4")
        .set("Rtcp.Flagging.subbandLevel.sigmas", "8")
        .set("Rtcp.Flagging.subbandLevel.minimumDb", "12.5");
    const ObservationSettings s = settingsOf(keys);
    const FlaggingSettings& f = s.flagging;
    CPPUNIT_ASSERT_EQUAL(5.5, f.preThreshold);
    CPPUNIT_ASSERT_EQUAL(32, f.spectraPerCell);
    CPPUNIT_ASSERT_EQUAL(16, f.maxWindow);
    CPPUNIT_ASSERT_EQUAL(0.8, f.brokenFlaggedFraction);
    CPPUNIT_ASSERT_EQUAL(0.1, f.brokenPowerRatio);
    CPPUNIT_ASSERT_EQUAL(std::string("/opt/lofar-lba.lua"), f.strategy);
    CPPUNIT_ASSERT_EQUAL(24, f.postWindow);
    CPPUNIT_ASSERT_EQUAL(6, f.postOverlap);
    CPPUNIT_ASSERT(f.postPolarisations == PostPolarisations::kParallel);
    CPPUNIT_ASSERT_EQUAL(4, f.postThreads);
    CPPUNIT_ASSERT_EQUAL(4, f.subbandLevel.halfWindow);
    CPPUNIT_ASSERT_EQUAL(8.0, f.subbandLevel.sigmas);
    CPPUNIT_ASSERT_EQUAL(12.5, f.subbandLevel.minimumDb);
    CPPUNIT_ASSERT(s.unknownKeys.empty());
  }

  void testBadOwnKeysNameKeyAndLine() {
    auto bad = [](const std::string& key, const std::string& value, const std::string& part) {
      Keys keys = allOn();
      keys.set(key, value);
      const std::string message = errorOf(keys, key);
      CPPUNIT_ASSERT_MESSAGE(message, contains(message, part));
    };
    bad("Rtcp.Flagging.preCorrelation.threshold", "-1", "outside");
    bad("Rtcp.Flagging.preCorrelation.spectraPerCell", "0", "outside");
    bad("Rtcp.Flagging.preCorrelation.spectraPerCell", "1000000", "outside");
    bad("Rtcp.Flagging.preCorrelation.maxWindow", "24", "not a power of two");
    bad("Rtcp.Flagging.brokenStation.flaggedFraction", "1.5", "outside");
    bad("Rtcp.Flagging.postCorrelation.overlap", "16", "nothing of a window of 32");
    bad("Rtcp.Flagging.postCorrelation.polarisations", "XY", "none of all, XXYY, I");
    bad("Rtcp.Flagging.postCorrelation.threads", "0", "outside");
    bad("Rtcp.Flagging.postCorrelation.window", "0", "outside");
    bad("Rtcp.Flagging.subbandLevel.halfWindow", "0", "outside");
    bad("Rtcp.Flagging.subbandLevel.minimumDb", "-3", "outside");
    bad("Rtcp.Flagging.subbandLevel.enabled", "perhaps", "subbandLevel.enabled");
  }

  void testEffectiveParset() {
    Keys keys = allOn();
    keys.set("OLAP.CNProc.onlinePreCorrelationFlaggingType", "THRESHOLD")
        .set("Rtcp.Flagging.postCorrelation.strategy", "'/opt/my strategy.lua'");
    const ObservationSettings s = settingsOf(keys);
    const rtcp::Parset p = s.toParset();
    CPPUNIT_ASSERT(p.getBool("OLAP.CNProc.onlineFlagging"));
    CPPUNIT_ASSERT_EQUAL(std::string("THRESHOLD"),
                         p.getString("OLAP.CNProc.onlinePreCorrelationFlaggingType"));
    const ObservationSettings again =
        ObservationSettings::fromParset(rtcp::Parset::fromString(p.toString()), table());
    CPPUNIT_ASSERT(again.flagging == s.flagging);
    CPPUNIT_ASSERT_EQUAL(std::string("/opt/my strategy.lua"), again.flagging.strategy);
    // Off, too, round-trips.
    const ObservationSettings off = settingsOf(Keys());
    CPPUNIT_ASSERT(ObservationSettings::fromParset(off.toParset(), table()).flagging ==
                   off.flagging);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(FlaggingSettingsTest);
