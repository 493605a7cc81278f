// summary.json, the contract between observe (which writes it) and nightly (which reads
// it): what toJson() writes, fromJson() reads back field for field.
#include <cppunit/extensions/HelperMacros.h>

#include <stdexcept>

#include "rtcp/ObservationSummary.h"

using namespace rtcp;

class ObservationSummaryTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ObservationSummaryTest);
  CPPUNIT_TEST(testRoundTrip);
  CPPUNIT_TEST(testStatus);
  CPPUNIT_TEST(testErrorsNameTheFile);
  CPPUNIT_TEST(testDegraded);
  CPPUNIT_TEST(testHostPaths);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRoundTrip() {
    ObservationSummary s;
    s.observationId = 1001;
    s.parset = "/obs/L1001 \"quoted\".parset";
    s.ok = true;
    s.reason = "line one\nline two";
    s.start = "2026-11-22 20:00:00";
    s.stop = "2026-11-22 20:00:30";
    s.durationSeconds = 30.25;
    s.wallSeconds = 41.5;
    s.realTimeFactor = 0.73;
    s.bytesWritten = 123456789012ULL;
    s.measurementSets = {"/out/L1001_SB150_uv.MS", "/out/L1001_SB151_uv.MS"};
    s.beamFormedFiles = {{"/out/L1001_SAP000_B000_S0_P000_bf.h5", 1234, 2, 8, 8, 1}};
    s.beamFormedBlocks = {16, 14, 2, 5, 3, 1};
    s.stations = {{"CS001", 990, 1000, 10, 0.01, {}, 3, 2, 1, 4, 5, 0.0125, 7, 0},
                  {"RS106", 1000, 1000, 0, 0, {}, 0, 0, 0, 0, 0, 0, 0, 0}};
    s.integrationsExpected = 60;
    s.degradations = {"CS001: 4 packets stamped after the observation or ahead of the clock"};
    s.blocksDropped = 3;
    s.integrationsDropped = 2;
    s.integrationsStored = 58;
    s.exitCodes = {{"ionproc", 0}, {"correlator", 137}};
    s.cpuSeconds = {{"ionproc", 6.5}, {"correlator", 88.25}};
    s.plots = {"/out/plots/autocorrelations.png"};
    s.flagging = {"rank 0: broken stations, flagged whole: RS106LBA in 4 of 4 subband-blocks"};
    s.warnings = {"CS001 lost 1 % of its packets"};
    s.recording = {"/rec",    "/rec/replay.parset",
                   "partial", s.start,
                   s.stop,    {"CS001", "RS106"},
                   2,         123456,
                   990,       10,
                   {}};
    s.dumps = {{"/obs/dumps/a",
                "/obs/dumps/a/dump.parset",
                "partial",
                "2026-11-22 20:00:01",
                "2026-11-22 20:00:03",
                {"CS001"},
                2,
                4096,
                12,
                0,
                {"CS001 stream 0 2026-11-22 20:00:01 .. 2026-11-22 20:00:02 UTC: gone from the "
                 "buffer"}}};

    StationSummary& more = s.stations[0];  // every number written and read back
    more.packetsAfterWindow = 6;
    more.packetsRecorded = 980;
    more.packetsNotRecorded = 10;
    more.preCorrelationFlagged = 0.02;
    more.postCorrelationFlagged = 0.03;
    more.brokenSubbandBlocks = 8;
    more.incoherentIntegrations = 9;
    more.subbandLevelFlagged = 0.0625;
    more.subbandLevelFlaggedBlocks = 11;

    const std::string json = s.toJson();
    CPPUNIT_ASSERT_MESSAGE(
        json, json.find("\"brokenSubbandBlocks\": 8, \"incoherentIntegrations\": "
                        "9, \"subbandLevelFlagged\": 0.0625, "
                        "\"subbandLevelFlaggedBlocks\": 11, \"ports\": [") != std::string::npos);
    for (const char* written :
         {"\"beamFormedFiles\": [\n    {\"path\": \"/out/L1001_SAP000_B000_S0_P000_bf.h5\", "
          "\"subbands\": 2, \"bytes\": 1234, \"blocksExpected\": 8, \"blocksWritten\": 8, "
          "\"subbandBlocksLost\": 1}\n  ],\n",
          "\"beamFormedBlocks\": {\"queued\": 16, \"sent\": 14, \"dropped\": 2, \"spooled\": 5, "
          "\"resent\": 3, \"unprotected\": 1},\n",
          "{\"name\": \"CS001\", \"packetsReceived\": 990, \"packetsExpected\": 1000, "
          "\"packetsLost\": 10, \"lossFraction\": 0.01, \"packetsLate\": 3, "})
      CPPUNIT_ASSERT_MESSAGE(json, json.find(written) != std::string::npos);
    const ObservationSummary r = ObservationSummary::fromJson(json, "summary.json");
    CPPUNIT_ASSERT_EQUAL(s.observationId, r.observationId);
    CPPUNIT_ASSERT_EQUAL(s.parset, r.parset);
    CPPUNIT_ASSERT(r.ok);
    CPPUNIT_ASSERT_EQUAL(s.reason, r.reason);
    CPPUNIT_ASSERT_EQUAL(s.start, r.start);
    CPPUNIT_ASSERT_EQUAL(s.stop, r.stop);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(s.durationSeconds, r.durationSeconds, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(s.wallSeconds, r.wallSeconds, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(s.realTimeFactor, r.realTimeFactor, 1e-12);
    CPPUNIT_ASSERT_EQUAL(s.bytesWritten, r.bytesWritten);
    CPPUNIT_ASSERT(s.measurementSets == r.measurementSets);
    CPPUNIT_ASSERT(s.beamFormedFiles == r.beamFormedFiles);
    CPPUNIT_ASSERT(s.beamFormedBlocks == r.beamFormedBlocks);
    CPPUNIT_ASSERT_EQUAL(s.stations.size(), r.stations.size());
    for (size_t i = 0; i < s.stations.size(); ++i) {
      CPPUNIT_ASSERT_EQUAL(s.stations[i].name, r.stations[i].name);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsReceived, r.stations[i].packetsReceived);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsExpected, r.stations[i].packetsExpected);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsLost, r.stations[i].packetsLost);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s.stations[i].lossFraction, r.stations[i].lossFraction, 1e-12);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsLate, r.stations[i].packetsLate);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsDuplicated, r.stations[i].packetsDuplicated);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsRejected, r.stations[i].packetsRejected);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsImplausible, r.stations[i].packetsImplausible);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsBeforeStart, r.stations[i].packetsBeforeStart);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsBeforeWindow, r.stations[i].packetsBeforeWindow);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s.stations[i].flaggedFraction, r.stations[i].flaggedFraction,
                                   1e-12);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsAfterWindow, r.stations[i].packetsAfterWindow);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsRecorded, r.stations[i].packetsRecorded);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].packetsNotRecorded, r.stations[i].packetsNotRecorded);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s.stations[i].preCorrelationFlagged,
                                   r.stations[i].preCorrelationFlagged, 1e-12);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s.stations[i].postCorrelationFlagged,
                                   r.stations[i].postCorrelationFlagged, 1e-12);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].brokenSubbandBlocks, r.stations[i].brokenSubbandBlocks);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].incoherentIntegrations,
                           r.stations[i].incoherentIntegrations);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s.stations[i].subbandLevelFlagged,
                                   r.stations[i].subbandLevelFlagged, 1e-12);
      CPPUNIT_ASSERT_EQUAL(s.stations[i].subbandLevelFlaggedBlocks,
                           r.stations[i].subbandLevelFlaggedBlocks);
    }
    CPPUNIT_ASSERT(r.status() == ObservationStatus::kDegraded);
    CPPUNIT_ASSERT(s.degradations == r.degradations);
    CPPUNIT_ASSERT_EQUAL(s.integrationsExpected, r.integrationsExpected);
    CPPUNIT_ASSERT_EQUAL(s.blocksDropped, r.blocksDropped);
    CPPUNIT_ASSERT_EQUAL(s.integrationsDropped, r.integrationsDropped);
    CPPUNIT_ASSERT_EQUAL(s.integrationsStored, r.integrationsStored);
    CPPUNIT_ASSERT(s.exitCodes == r.exitCodes);
    CPPUNIT_ASSERT(s.cpuSeconds == r.cpuSeconds);
    CPPUNIT_ASSERT(s.plots == r.plots);
    CPPUNIT_ASSERT(s.flagging == r.flagging);
    CPPUNIT_ASSERT(s.warnings == r.warnings);
    CPPUNIT_ASSERT(s.recording == r.recording);
    CPPUNIT_ASSERT(s.dumps == r.dumps);
    const std::string text = s.toText();  // the windows, sizes and losses said
    CPPUNIT_ASSERT_MESSAGE(text, text.find("sent by ionproc: 16 blocks queued, 14 sent, 2 "
                                           "dropped, 5 spooled, 3 resent, 1 not kept to "
                                           "resend") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("recording     /rec: partial, 123456 bytes, "
                                           "2026-11-22 20:00:00 .. 2026-11-22 20:00:30 UTC, 2 "
                                           "station(s) (CS001, RS106), 2 subband(s); 990 packets "
                                           "recorded, 10 not recorded") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        text, text.find("missing     CS001 stream 0 2026-11-22 20:00:01 .. "
                        "2026-11-22 20:00:02 UTC: gone from the buffer") != std::string::npos);
    // Without recordings or dumps: "recording": null, read back as none.
    const ObservationSummary none =
        ObservationSummary::fromJson(ObservationSummary{}.toJson(), "none.json");
    CPPUNIT_ASSERT(none.recording.directory.empty() && none.dumps.empty());
  }

  void testStatus() {
    ObservationSummary s;
    s.ok = false;
    CPPUNIT_ASSERT(!ObservationSummary::fromJson(s.toJson(), "a.json").ok);
    CPPUNIT_ASSERT(
        ObservationSummary::fromJson(R"({"status": "ok", "blocksDropped": null})", "b.json").ok);
    const ObservationSummary d = ObservationSummary::fromJson(
        R"({"status": "degraded", "degradations": ["CS001: 5 % lost"]})", "c.json");
    CPPUNIT_ASSERT(d.ok);
    CPPUNIT_ASSERT(d.status() == ObservationStatus::kDegraded);
    CPPUNIT_ASSERT(d.toJson().find(R"("status": "degraded")") != std::string::npos);
  }

  /// assess(): what is lost, flagged, dropped, implausible or duplicated beyond the
  /// threshold degrades the observation, each with its cause; below it the status is ok.
  void testDegraded() {
    ObservationSummary s;
    s.ok = true;
    StationSummary clean{"RS106", 10000, 10000, 0, 0, {}, 0, 0, 0, 0, 7, 0.001};
    s.stations = {clean};
    s.integrationsExpected = 1000;
    s.integrationsDropped = 10;  // 1 %: not beyond
    s.assess();
    CPPUNIT_ASSERT(s.status() == ObservationStatus::kOk);
    CPPUNIT_ASSERT(s.toJson().find(R"("status": "ok")") != std::string::npos);

    StationSummary lossy{"CS001", 9000, 10000, 1000, 0.1, {}, 600, 0, 0, 0, 0, 0.08, 0, 0};
    StationSummary forged{"CS002", 10000, 10000, 0, 0, {}, 0, 200, 0, 10, 0, 0, 0, 0};
    s.stations = {lossy, clean, forged};
    s.blocksDropped = 2;
    s.integrationsDropped = 18;
    s.assess();
    CPPUNIT_ASSERT(s.status() == ObservationStatus::kDegraded);
    const std::vector<std::string> expected = {
        "CS001: 10 % of its packets lost (600 arrived late), 8 % of its samples flagged",
        "CS002: 10 packets stamped after the observation or ahead of the clock rejected, 200 "
        "duplicated packets (the first to arrive kept)",
        "2 blocks served flagged: the correlator ranks fell behind",
        "18 of 1000 integrations did not reach storage"};
    CPPUNIT_ASSERT_EQUAL(expected.size(), s.degradations.size());
    for (size_t i = 0; i < expected.size(); ++i)
      CPPUNIT_ASSERT_EQUAL(expected[i], s.degradations[i]);
    CPPUNIT_ASSERT(s.toText().find("observation 0: degraded") != std::string::npos);
    s.ok = false;  // a failure outranks degradation
    CPPUNIT_ASSERT(s.status() == ObservationStatus::kFailed);
  }

  void testErrorsNameTheFile() {
    auto message = [](const std::string& text) {
      try {
        ObservationSummary::fromJson(text, "obs/summary.json");
      } catch (const std::runtime_error& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    CPPUNIT_ASSERT(message("{\"status\": \"ok\",").starts_with("obs/summary.json:1: "));
    CPPUNIT_ASSERT_EQUAL(
        std::string("obs/summary.json: status 'maybe' is neither ok, degraded nor failed"),
        message("{\"status\": \"maybe\"}"));
    CPPUNIT_ASSERT(message("{\"status\": \"ok\", \"bytesWritten\": \"many\"}")
                       .starts_with("obs/summary.json: unexpected contents: "));
    CPPUNIT_ASSERT_THROW(ObservationSummary::fromFile("/nonexistent/summary.json"),
                         std::runtime_error);
  }

  /// Entries on another host are host:path; a path here may hold a colon after a slash.
  void testHostPaths() {
    using Split = std::pair<std::string, std::string>;
    CPPUNIT_ASSERT(splitHostPath("st1:/data/L1_inspect/flags.png") ==
                   Split("st1", "/data/L1_inspect/flags.png"));
    CPPUNIT_ASSERT(splitHostPath("/obs/L1/plots/flags.png") ==
                   Split("", "/obs/L1/plots/flags.png"));
    CPPUNIT_ASSERT(splitHostPath("/obs/a:b/x.MS") == Split("", "/obs/a:b/x.MS"));
    CPPUNIT_ASSERT(splitHostPath("obs/x.MS") == Split("", "obs/x.MS"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ObservationSummaryTest);
