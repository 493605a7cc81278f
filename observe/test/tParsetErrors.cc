// observe as a user meets it with a broken parset: a non-zero exit, every error with its
// key, and nothing started (no observation directory, no logs). And its warning when
// casacore's measures tables do not cover the observation, and LOFAR's COBALT parset as it
// ran (observe --check-only).
#include <cppunit/extensions/HelperMacros.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "MeasuresTables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe::test {

class ParsetErrorsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ParsetErrorsTest);
  CPPUNIT_TEST(testEveryErrorAndNothingStarted);
  CPPUNIT_TEST(testHelp);
  CPPUNIT_TEST(testMeasuresDataCoverage);
  CPPUNIT_TEST(testCobaltParsetAsRun);
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
    std::string help;  // the help with its line breaks and column padding as single spaces
    for (const char c : readFile(dir.path() + "/help.log"))
      if (!std::isspace(static_cast<unsigned char>(c)))
        help += c;
      else if (!help.empty() && help.back() != ' ')
        help += ' ';
    CPPUNIT_ASSERT(help.find("usage: observe PARSET") != std::string::npos);
    // The defaults ObservationPlan::make and run() apply, as the help states them.
    CPPUNIT_ASSERT_MESSAGE(help, help.find("--dir arg observation directory (default: the output "
                                           "directory of the first subband whose MS is written "
                                           "on this host, else ./L<ObsID>)") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        help, help.find("--ranks arg correlator ranks (default: one per compute "
                        "node of Cobalt.Nodes, else min(2, cores))") != std::string::npos);
    CPPUNIT_ASSERT(runProgram(observeCommand({}), dir.path() + "/none.log") != 0);
  }

  /// LOFAR's COBALT parset as it ran: COBALT's default additions (its nodes, the nodes in use,
  /// every antenna field's input ports on them) before CorrProc_173014.param, as
  /// runObservation.sh joins them. --check-only says what matters in a few lines (hundreds of
  /// LOFAR's keys rtcp has no use for counted in one, none called misspelt) and names the
  /// cluster's hosts, which do not resolve here, at once: no wait for ssh to give up.
  void testCobaltParsetAsRun() {
    storage::test::TempDir dir;
    std::string text;
    for (const char* file : {"HardwareList.parset", "HardwareUsed.parset", "StationStreams.parset",
                             "CorrProc_173014.param"})
      text += readFile(rtcp::test::testDataDir() + "/lofar-parsets/" + file);
    const std::string parset = dir.path() + "/L173014.parset";
    std::ofstream(parset) << text;
    const std::string log = dir.path() + "/observe.log";
    const double start = wallClock();
    const int status = runProgram(
        observeCommand({parset, "--check-only", "--now", "--dir", dir.path() + "/obs"}), log);
    const double seconds = wallClock() - start;
    const std::string out = readFile(log);
    CPPUNIT_ASSERT_MESSAGE(out, status != 0);  // hosts that do not resolve are errors
    CPPUNIT_ASSERT_MESSAGE(std::to_string(seconds) + " s\n" + out, seconds < 10);
    for (const char* expected :
         {"key 'Cobalt.Nodes': the compute nodes' hosts (PIC.Core.Cobalt.<node>.host) do not "
          "resolve here: cbt001, cbt002, cbt003, cbt004, cbt005, cbt006, cbt007, cbt008",
          "--mpi-hosts localhost:N", "cbt007-10GB01 (CS001HBA0, CS001HBA1",
          "the output hosts do not resolve here: locus001, locus003",
          "parset keys not used by rtcp", "nothing started"})
      CPPUNIT_ASSERT_MESSAGE("missing '" + std::string(expected) + "' in:\n" + out,
                             out.find(expected) != std::string::npos);
    size_t warnings = 0;
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
      warnings += line.find(" WARN ") != std::string::npos;
      CPPUNIT_ASSERT_MESSAGE(line, line.find("misspelt") == std::string::npos);
    }
    CPPUNIT_ASSERT_MESSAGE(std::to_string(warnings) + " warning lines in:\n" + out, warnings < 10);
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path() + "/obs"));
  }
};

/// One observation per directory and MS: what another run left is refused before anything
/// starts, and a directory in use by another observe is refused.
class RerunTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(RerunTest);
  CPPUNIT_TEST(testDirectoryOfAnotherRun);
  CPPUNIT_TEST(testMeasurementSetsOfAnotherRun);
  CPPUNIT_TEST(testBeamFormedFilesOfAnotherRun);
  CPPUNIT_TEST(testDirectoryInUse);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testDirectoryOfAnotherRun() {
    storage::test::TempDir dir;
    const std::string obs = dir.path() + "/obs";
    std::filesystem::create_directories(obs);
    { std::ofstream(obs + "/summary.json") << "{\"observationId\": 1001}\n"; }
    const auto [code, text] = observeNow(dir.path(), obs, {});
    CPPUNIT_ASSERT_MESSAGE(text, code != 0);
    CPPUNIT_ASSERT_MESSAGE(text, contains(text, "holds another run's files (" + obs +
                                                    "/summary.json): choose a new directory "
                                                    "with --dir"));
    nothingStarted(obs, text);
    CPPUNIT_ASSERT_EQUAL(std::string("{\"observationId\": 1001}\n"),
                         readFile(obs + "/summary.json"));
  }

  void testMeasurementSetsOfAnotherRun() {
    storage::test::TempDir dir;
    const std::string ms = dir.path() + "/out/L4711_SAP000_SB001_uv.MS";
    std::filesystem::create_directories(ms);
    const auto [code, text] = observeNow(dir.path(), dir.path() + "/obs", {});
    CPPUNIT_ASSERT_MESSAGE(text, code != 0);
    CPPUNIT_ASSERT_MESSAGE(text, contains(text,
                                          "1 of the observation's 2 MeasurementSets exist "
                                          "already, from another run (" +
                                              ms + ")"));
    nothingStarted(dir.path() + "/obs", text);
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path() + "/obs"));
    // --check-only says so too.
    const auto [checked, checkText] = observeNow(dir.path(), dir.path() + "/obs", {"--check-only"});
    CPPUNIT_ASSERT_MESSAGE(checkText, checked != 0 && contains(checkText, ms));
  }

  /// storage-sink would make each beam-formed file anew: one of another run is refused.
  void testBeamFormedFilesOfAnotherRun() {
    storage::test::TempDir dir;
    const std::string bf = dir.path() + "/bf/L4711_SAP000_B000_S0_P000_bf.h5";
    std::filesystem::create_directories(dir.path() + "/bf");
    { std::ofstream(bf) << "an earlier run's file\n"; }
    const auto [code, text] =
        observeNow(dir.path(), dir.path() + "/obs", {},
                   "Observation.DataProducts.Output_CoherentStokes.enabled = T\n"
                   "Observation.DataProducts.Output_CoherentStokes.locations = [localhost:" +
                       dir.path() +
                       "/bf]\n"
                       "Observation.Beam[0].nrTiedArrayBeams = 1\n"
                       "Observation.Beam[0].TiedArrayBeam[0].angle1 = 5.2336866848\n"
                       "Observation.Beam[0].TiedArrayBeam[0].angle2 = 0.7109425145\n"
                       "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16\n");
    CPPUNIT_ASSERT_MESSAGE(text, code != 0);
    CPPUNIT_ASSERT_MESSAGE(text, contains(text,
                                          "1 of the observation's 1 beam-formed files exist "
                                          "already, from another run (" +
                                              bf + ")"));
    nothingStarted(dir.path() + "/obs", text);
    CPPUNIT_ASSERT_EQUAL(std::string("an earlier run's file\n"), readFile(bf));
  }

  /// A second observation in the directory of one that runs (its lock held) is refused.
  void testDirectoryInUse() {
    storage::test::TempDir dir;
    const std::string obs = dir.path() + "/obs";
    std::filesystem::create_directories(obs);
    const int fd = ::open((obs + "/observe.lock").c_str(), O_RDWR | O_CREAT, 0644);
    CPPUNIT_ASSERT(fd >= 0 && ::flock(fd, LOCK_EX) == 0);
    CPPUNIT_ASSERT_EQUAL(ssize_t(6), ::write(fd, "12345\n", 6));
    const auto [code, text] = observeNow(dir.path(), obs, {});
    ::close(fd);
    CPPUNIT_ASSERT_MESSAGE(text, code != 0);
    CPPUNIT_ASSERT_MESSAGE(text, contains(text, "the observation directory " + obs +
                                                    " is in use by another observation (observe "
                                                    "process 12345)"));
    nothingStarted(obs, text);
    CPPUNIT_ASSERT(!std::filesystem::exists(obs + "/observation.parset"));
    CPPUNIT_ASSERT(!std::filesystem::exists(obs + "/observation.secret"));
  }

 private:
  static bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
  }
  /// observe --now of a small live observation into obs; its exit code and log.
  static std::pair<int, std::string> observeNow(const std::string& dir, const std::string& obs,
                                                const std::vector<std::string>& options,
                                                const std::string& extra = "") {
    SmallObservation o;
    o.outputDir = dir + "/out";
    o.extra = extra;
    std::vector<std::string> arguments{writeParset(dir + "/rerun.parset", o), "--now", "--dir",
                                       obs};
    arguments.insert(arguments.end(), options.begin(), options.end());
    const std::string log = dir + "/rerun-" + std::to_string(++runs_) + ".log";
    const int code = runProgram(observeCommand(arguments), log);
    return {code, readFile(log)};
  }
  static void nothingStarted(const std::string& obs, const std::string& text) {
    CPPUNIT_ASSERT_MESSAGE(text, contains(text, "nothing started") || contains(text, "in use"));
    CPPUNIT_ASSERT_MESSAGE(text, !contains(text, "starting storage-sink"));
    CPPUNIT_ASSERT(!std::filesystem::exists(obs + "/storage-sink.log"));
  }
  static inline int runs_ = 0;
};

CPPUNIT_TEST_SUITE_REGISTRATION(RerunTest);
CPPUNIT_TEST_SUITE_REGISTRATION(ParsetErrorsTest);

}  // namespace rtcp::observe::test
