// observe as a user meets it with a broken parset: a non-zero exit, every error with its
// key, and nothing started (no observation directory, no logs). And its warning when
// casacore's measures tables do not cover the observation (observe --check-only).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "MeasuresTables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::test {

class ParsetErrorsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ParsetErrorsTest);
  CPPUNIT_TEST(testEveryErrorAndNothingStarted);
  CPPUNIT_TEST(testHelp);
  CPPUNIT_TEST(testMeasuresDataCoverage);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryErrorAndNothingStarted() {
    storage::test::TempDir dir;
    SmallObservation o;
    o.start = "2020-01-01 00:00:00";  // in the past, no --now
    o.stations = {"CS001", "CS999", "RS106"};
    const int port = freeUdpPort();
    o.inputs = {"udp:127.0.0.1:" + std::to_string(port),
                "udp:127.0.0.1:" + std::to_string(port + 1),
                "udp:localhost:" + std::to_string(port)};
    o.subbands = "[300, 777]";
    o.outputDir = dir.path() + "/out";
    o.extra = "Observation.stopTime = '2019-12-31 23:59:00'\nOLAP.realTme = T\n";  // replaces the
                                                                                   // stop time
    const std::string parset = writeParset(dir.path() + "/broken.parset", o);
    const std::string obs = dir.path() + "/obs";
    const std::string log = dir.path() + "/observe.log";
    CPPUNIT_ASSERT(runProgram(observeCommand({parset, "--dir", obs, "--ranks", "64"}), log) != 0);
    const std::string text = readFile(log);
    for (const std::string& expected : std::vector<std::string>{
             "key 'Observation.stopTime': stop time '2019-12-31 23:59:00' is not after start time",
             "key 'Observation.startTime': start time '2020-01-01 00:00:00' is in the past",
             "key 'Observation.VirtualInstrument.stationList': unknown station 'CS999'",
             "key 'Observation.Beam[0].subbandList': subband 777 is outside 0..511",
             "key 'PIC.Core.RS106LBA.RSP.ports': input 'udp:localhost:" + std::to_string(port) +
                 "'",
             "--ranks 64: more ranks than the", "nothing started"})
      CPPUNIT_ASSERT_MESSAGE("missing '" + expected + "' in:\n" + text,
                             text.find(expected) != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, !std::filesystem::exists(obs));
    CPPUNIT_ASSERT_MESSAGE(text, !std::filesystem::exists(o.outputDir));
  }

  /// observe --check-only on a valid parset dated `start`, casacore pointed at the tables
  /// of casarc; its exit code and log.
  static std::pair<int, std::string> check(const std::string& dir, const std::string& casarc,
                                           const std::string& start, const std::string& name) {
    SmallObservation o;
    o.start = start;
    o.realTime = false;  // a past date is no error for a replay
    o.outputDir = dir + "/" + name;
    const std::string parset = writeParset(dir + "/" + name + ".parset", o);
    const std::string log = dir + "/" + name + ".log";
    std::string command;
    for (const std::string& word :
         observeCommand({parset, "--check-only", "--dir", dir + "/" + name + ".obs"}))
      command += word + " ";
    const int status = rtcp::test::runWithCasarc(casarc, command + "> " + log + " 2>&1");
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, readFile(log)};
  }

  /// What casacore itself says converting a UTC time of that date to UT1 and TAI with the
  /// tables of casarc (python-casacore).
  static std::string casacoreSays(const std::string& dir, const std::string& casarc,
                                  const std::string& date) {
    const std::string log = dir + "/casacore.log";
    const std::string python =
        "/usr/bin/python3 -c \"from casacore.measures import measures; m = measures(); "
        "e = m.epoch('utc', '" +
        date + "'); m.measure(e, 'ut1'); m.measure(e, 'tai')\"";
    rtcp::test::runWithCasarc(casarc, python + " > " + log + " 2>&1");
    return readFile(log);
  }

  void testMeasuresDataCoverage() {
    storage::test::TempDir dir;
    const double today = std::floor(rtcp::test::mjdNow());
    // IERS tables for the last 30 and the next 60 days, leap seconds dated 10 days ago.
    const std::string fresh = rtcp::test::writeMeasuresTables(dir.path() + "/fresh",
                                                              {today - 30, today + 60, today - 10});
    const auto day = [&](double mjd) {
      return formatUtc(mjdSecondsToUnix(mjd * 86400)).substr(0, 10);
    };
    const std::string inside = day(today - 5) + " 12:00:00",
                      outside = day(today - 400) + " 12:00:00";

    const auto [insideCode, insideLog] = check(dir.path(), fresh, inside, "inside");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(insideLog, 0, insideCode);
    CPPUNIT_ASSERT_MESSAGE(insideLog, insideLog.find("measures data") == std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(insideLog, insideLog.find("nothing started") != std::string::npos);
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path() + "/inside.obs"));

    const auto [outsideCode, outsideLog] = check(dir.path(), fresh, outside, "outside");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(outsideLog, 0, outsideCode);  // a warning, not an error
    for (const std::string& expected :
         {std::string("WARN"),
          std::string("key 'Observation.startTime': casacore's measures data do not cover"),
          "Earth orientation: IERSeop97 (" + dir.path() +
              "/fresh/geodetic/IERSeop97): " + day(today - 30) + " to " + day(today + 60),
          std::string("measures.directory"), std::string("WSRT_Measures")})
      CPPUNIT_ASSERT_MESSAGE("missing '" + expected + "' in:\n" + outsideLog,
                             outsideLog.find(expected) != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(outsideLog, outsideLog.find("Leap seconds") == std::string::npos);

    // Leap seconds dated 400 days ago: valid for 180 days, so not for today.
    const std::string stale = rtcp::test::writeMeasuresTables(
        dir.path() + "/stale", {today - 30, today + 60, today - 400});
    const auto [staleCode, staleLog] = check(dir.path(), stale, inside, "stale");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(staleLog, 0, staleCode);
    CPPUNIT_ASSERT_MESSAGE(staleLog,
                           staleLog.find("Leap seconds: TAI_UTC (" + dir.path() +
                                         "/stale/geodetic/TAI_UTC)") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(staleLog, staleLog.find("Earth orientation") == std::string::npos);

    // casacore agrees: quiet where observe is quiet, complaining where observe warns.
    const std::string quiet = casacoreSays(dir.path(), fresh, day(today - 5));
    for (const char* complaint :
         {"outside the range", "out-of-date", "cannot be found", "WARN", "SEVERE"})
      CPPUNIT_ASSERT_MESSAGE(quiet, quiet.find(complaint) == std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        "casacore on the outside date",
        casacoreSays(dir.path(), fresh, day(today - 400)).find("outside the range") !=
            std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        "casacore on stale leap seconds",
        casacoreSays(dir.path(), stale, day(today - 5)).find("out-of-date") != std::string::npos);
  }

  void testHelp() {
    storage::test::TempDir dir;
    CPPUNIT_ASSERT_EQUAL(0, runProgram(observeCommand({"--help"}), dir.path() + "/help.log"));
    CPPUNIT_ASSERT(readFile(dir.path() + "/help.log").find("usage: observe PARSET") !=
                   std::string::npos);
    CPPUNIT_ASSERT(runProgram(observeCommand({}), dir.path() + "/none.log") != 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ParsetErrorsTest);

}  // namespace rtcp::observe::test
