// Schedule files (comments, relative paths, start times, errors), planning with and
// without --now, summary.json parsing and the error lines taken from observe's stderr.
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <fstream>

#include "NightlyReport.h"
#include "ObservationRunner.h"
#include "Schedule.h"
#include "rtcp/Files.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/SampleTime.h"

namespace rtcp::nightly {
namespace {

/// A fresh directory with two parsets (only their times matter here).
struct Fixture {
  Fixture() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/rtcp-nightly-XXXXXX";
    dir = mkdtemp(pattern.data());
    std::filesystem::create_directories(dir + "/sub");
    std::ofstream(dir + "/sub/a.parset") << "Observation.startTime = '2026-11-22 20:00:00'\n"
                                            "Observation.stopTime = '2026-11-22 20:00:30'\n";
    std::ofstream(dir + "/b.parset") << "Observation.startTime = '2026-11-22 21:00:00'\n"
                                        "Observation.stopTime = '2026-11-22 21:01:00'\n";
  }
  ~Fixture() { std::filesystem::remove_all(dir); }
  std::string dir;
};

}  // namespace

class ScheduleTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ScheduleTest);
  CPPUNIT_TEST(testParse);
  CPPUNIT_TEST(testPlan);
  CPPUNIT_TEST(testErrors);
  CPPUNIT_TEST(testSummary);
  CPPUNIT_TEST(testErrorLines);
  CPPUNIT_TEST(testReportShowsPlotsHereAndNamesThoseElsewhere);
  CPPUNIT_TEST(testReportListsRecordingsAndDumps);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testParse() {
    Fixture f;
    std::ofstream(f.dir + "/night.schedule")
        << "# tonight\n\nsub/a.parset   # at its own time\n"
           "'2026-11-23 01:00:00' b.parset\n2026-11-23T02:00:00 "
        << f.dir << "/b.parset\n"
        << "missing.parset\n";
    const Schedule s = Schedule::fromFile(f.dir + "/night.schedule");
    CPPUNIT_ASSERT_EQUAL(size_t(4), s.entries().size());
    const auto& e = s.entries();
    CPPUNIT_ASSERT_EQUAL(f.dir + "/sub/a.parset", e[0].parset);
    CPPUNIT_ASSERT_EQUAL(3, e[0].line);
    CPPUNIT_ASSERT(!e[0].scheduledStart);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-11-22 20:00:00"), *e[0].parsetStart, 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(30.0, e[0].duration(), 1e-6);
    CPPUNIT_ASSERT_EQUAL(f.dir + "/b.parset", e[1].parset);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-11-23 01:00:00"), *e[1].scheduledStart, 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-11-23 02:00:00"), *e[2].scheduledStart, 1e-6);
    CPPUNIT_ASSERT_EQUAL(f.dir + "/missing.parset", e[3].parset);  // observe will say why
    CPPUNIT_ASSERT(!e[3].parsetStart);
  }

  void testPlan() {
    Fixture f;
    const std::string text =
        "sub/a.parset\n'2026-11-23 01:00:00' b.parset\nmissing.parset\nb.parset\n";
    Schedule s = Schedule::fromString(text, f.dir);
    s.plan(false, 0);
    const auto& e = s.entries();
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-11-22 20:00:00"), e[0].plannedStart, 1e-6);
    CPPUNIT_ASSERT(!e[0].startNow);  // observe waits for the parset's own time
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-11-23 01:00:00"), e[1].plannedStart, 1e-6);
    CPPUNIT_ASSERT(e[1].startNow);                 // moved by the schedule
    CPPUNIT_ASSERT_EQUAL(0.0, e[2].plannedStart);  // unknown: right after the one before
    CPPUNIT_ASSERT(!e[3].startNow);
    const double now = parseUtc("2030-01-01 00:00:00");
    s.plan(true, now);  // everything shifted so that the first starts now
    CPPUNIT_ASSERT_DOUBLES_EQUAL(now, e[0].plannedStart, 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(now + 5 * 3600, e[1].plannedStart, 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(now + 3600, e[3].plannedStart, 1e-6);
    for (const ScheduleEntry& entry : e) CPPUNIT_ASSERT(entry.startNow);
  }

  void testErrors() {
    auto message = [](const std::string& text) {
      try {
        Schedule::fromString(text, "/tmp", "night.schedule");
      } catch (const ScheduleError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    CPPUNIT_ASSERT(message("a.parset\n2026-13-45 25:00:00 b.parset\n")
                       .starts_with("night.schedule:2: bad start time"));
    CPPUNIT_ASSERT(message("a.parset b.parset\n").starts_with("night.schedule:1: "));
    CPPUNIT_ASSERT(message("2026-11-22 20:00:00\n").starts_with("night.schedule:1: "));
    CPPUNIT_ASSERT(message("# nothing\n").find("lists no parsets") != std::string::npos);
  }

  void testSummary() {
    const ObservationSummary s = ObservationSummary::fromJson(R"({
      "observationId": 1001, "parset": "x.parset", "status": "failed", "reason": "ionproc died",
      "start": "2026-11-22 20:00:00", "stop": "2026-11-22 20:00:30", "durationSeconds": 31.5,
      "realTimeFactor": 0.98, "bytesWritten": 123456789, "measurementSets": ["a.MS", "b.MS"],
      "stations": [{"name": "CS001", "packetsReceived": 990, "packetsExpected": 1000,
                    "packetsLost": 10, "lossFraction": 0.01}],
      "blocksDropped": 2, "integrationsDropped": 1, "exitCodes": {"ionproc": 134, "correlator": 0},
      "plots": []})",
                                                              "summary.json");
    CPPUNIT_ASSERT_EQUAL(int64_t(1001), s.observationId);
    CPPUNIT_ASSERT(!s.ok);
    CPPUNIT_ASSERT_EQUAL(std::string("ionproc died"), s.reason);
    CPPUNIT_ASSERT_EQUAL(uint64_t(123456789), s.bytesWritten);
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.measurementSets.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(10), s.stations.at(0).packetsLost);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.01, s.stations.at(0).lossFraction, 1e-12);
    CPPUNIT_ASSERT_EQUAL(134, s.exitCodes.at("ionproc"));
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), s.blocksDropped);
    CPPUNIT_ASSERT_THROW(ObservationSummary::fromJson("{\"status\": \"ok\",", "s.json"),
                         std::runtime_error);
    CPPUNIT_ASSERT_THROW(ObservationSummary::fromJson("{\"status\": \"maybe\"}", "s.json"),
                         std::runtime_error);
  }

  /// A plot here is a thumbnail; one made on a storage host (host:path) is named, since a
  /// browser here cannot reach it.
  void testReportShowsPlotsHereAndNamesThoseElsewhere() {
    Fixture f;
    NightlyReport report(f.dir, "night.schedule", 0);
    ObservationResult result;
    result.directory = f.dir + "/01_a";
    result.summary.emplace();
    result.summary->plots = {f.dir + "/01_a/plots/flags.png", "st1:/data/L7_inspect/flags.png"};
    report.add(result);
    const std::string html = readFile(report.htmlPath());
    CPPUNIT_ASSERT_MESSAGE(html,
                           html.find("<img src=\"01_a/plots/flags.png\"") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        html, html.find("plot on st1:/data/L7_inspect/flags.png") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(html,
                           html.find("st1:/data/L7_inspect/flags.png\"") == std::string::npos);
  }

  /// The station data an observation kept, a line each in both reports: the recording and
  /// each dump with its window, size and what it lacks; and its beam-formed files' losses
  /// and ionproc's beam-formed blocks.
  void testReportListsRecordingsAndDumps() {
    Fixture f;
    NightlyReport report(f.dir, "night.schedule", 0);
    ObservationResult result;
    result.directory = f.dir + "/01_a";
    result.summary.emplace();
    result.summary->recording = {"/rec",
                                 "/rec/replay.parset",
                                 "complete",
                                 "2026-11-22 20:00:00",
                                 "2026-11-22 20:00:30",
                                 {"CS001LBA"},
                                 2,
                                 4096,
                                 16,
                                 0,
                                 {}};
    result.summary->dumps = {{"/obs/dumps/a",
                              "/obs/dumps/a/dump.parset",
                              "partial",
                              "2026-11-22 20:00:01",
                              "2026-11-22 20:00:03",
                              {"CS001LBA"},
                              2,
                              2048,
                              8,
                              0,
                              {"CS001LBA stream 0 ..: gone from the buffer"}}};
    // A beam-formed observation: per file what it holds and lost, and what ionproc sent.
    result.summary->beamFormedFiles = {{"/obs/L7_SAP000_B000_S0_P000_bf.h5", 4096, 2, 8, 8, 3}};
    result.summary->beamFormedBlocks = {16, 15, 1, 4, 2, 0};
    report.add(result);
    const std::string text = readFile(report.textPath());
    CPPUNIT_ASSERT_MESSAGE(text,
                           text.find("beam-formed:     /obs/L7_SAP000_B000_S0_P000_bf.h5: 8 / "
                                     "8 blocks, 3 subband-blocks lost") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("beam-formed sent: 16 blocks queued, 15 sent, 1 "
                                           "dropped, 4 spooled, 2 resent, 0 not kept to "
                                           "resend") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        text, text.find("recording:       /rec: complete, 4096 bytes, "
                        "2026-11-22 20:00:00 .. 2026-11-22 20:00:30 UTC") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        text, text.find("dump:            /obs/dumps/a: partial, 2048 bytes") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("1 part(s) missing") != std::string::npos);
    const std::string html = readFile(report.htmlPath());
    CPPUNIT_ASSERT_MESSAGE(html, html.find("<li>dump: /obs/dumps/a: partial") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(html, html.find("<li>beam-formed sent by ionproc: 16 blocks queued, "
                                           "15 sent, 1 dropped") != std::string::npos);
  }

  void testErrorLines() {
    const std::string log =
        "2026-11-22 20:00:00.000 observe[12] INFO  observe: checking parset\n"
        "2026-11-22 20:00:00.001 observe[12] ERROR parset: x.parset:3: unknown station 'XX999'\n"
        "2026-11-22 20:00:00.002 observe[12] ERROR observe: 1 error in the parset\n";
    CPPUNIT_ASSERT_EQUAL(
        std::string("parset: x.parset:3: unknown station 'XX999'; observe: 1 error in the parset"),
        errorLines(log));
    CPPUNIT_ASSERT_EQUAL(std::string("c; d; e"), errorLines("a\nb\nc\nd\ne\n"));
    CPPUNIT_ASSERT_EQUAL(std::string("terminate: std::runtime_error"),
                         errorLines("x\nterminate: std::runtime_error\ny\n"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ScheduleTest);

}  // namespace rtcp::nightly
