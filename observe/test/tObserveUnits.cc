// observe's pieces alone: the parset checker (every problem, with key and line), the
// plan (--now shift, effective parset), child processes, the summary's JSON, the
// progress line.
#include <cppunit/extensions/HelperMacros.h>

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "ChildProcess.h"
#include "ObservationPlan.h"
#include "rtcp/ObservationSummary.h"
#include "ObserveTestUtil.h"
#include "ParsetChecker.h"
#include "ProgressMonitor.h"
#include "StorageTestUtil.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::test {

using storage::test::TempDir;

namespace {

bool hasProblem(const CheckResult& r, const std::string& key, int line, const std::string& text, bool error = true) {
  for (const ParsetProblem& p : r.problems)
    if (p.key == key && p.line == line && p.error == error && p.message.find(text) != std::string::npos) return true;
  return false;
}

std::string describe(const CheckResult& r) {
  std::string text;
  for (const ParsetProblem& p : r.problems) text += (p.error ? "E " : "W ") + p.message + "\n";
  return text;
}

}  // namespace

class ObserveUnitTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ObserveUnitTest);
  CPPUNIT_TEST(testCheckerReportsEveryError);
  CPPUNIT_TEST(testCheckerAcceptsGoodParset);
  CPPUNIT_TEST(testEvenShift);
  CPPUNIT_TEST(testPlan);
  CPPUNIT_TEST(testChildProcess);
  CPPUNIT_TEST(testSummaryJson);
  CPPUNIT_TEST(testProgressLine);
  CPPUNIT_TEST(testMergedStatus);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCheckerReportsEveryError() {
    TempDir dir;
    const std::string file = dir.path() + "/file";
    std::ofstream(file) << "not a directory\n";
    const std::string parset = dir.path() + "/bad.parset";
    std::ofstream(parset) << "Observation.ObsID = 7\n"                                       // 1
                             "Observation.startTime = '2020-01-01 00:00:10'\n"               // 2
                             "Observation.stopTime = '2020-01-01 00:00:05'\n"                // 3
                             "Observation.antennaSet = LBA_OUTER\n"                          // 4
                             "Observation.bandFilter = LBA_30_90\n"                          // 5
                             "Observation.VirtualInstrument.stationList = [CS001, XX999, CS002, CS003]\n"  // 6
                             "Observation.Beam[0].angle1 = 5.23\nObservation.Beam[0].angle2 = 0.71\n"  // 7, 8
                             "Observation.Beam[0].subbandList = [300, 512]\n"                // 9
                             "PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]\n"         // 10
                             "PIC.Core.CS002LBA.RSP.ports = [udp:localhost:10010, file:missing.rsp]\n"  // 11
                             "PIC.Core.CS003LBA.RSP.ports = [udp:10.255.255.1:10030]\n"     // 12
                             "Observation.DataProducts.Output_Correlated.locations = [localhost:" + file + "/out]\n";  // 13
    const CheckResult r = ParsetChecker({false, 3, 2, file + "/obs", parseUtc("2026-01-01 00:00:00")}).check(parset);
    CPPUNIT_ASSERT(r.hasErrors());
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.stopTime", 3, "is not after start time"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.startTime", 2, "in the past"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.VirtualInstrument.stationList", 6, "unknown station 'XX999'"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.Beam[0].subbandList", 9, "subband 512 is outside 0..511"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "PIC.Core.CS002LBA.RSP.ports", 11, "already an input of station 'CS001'"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "PIC.Core.CS002LBA.RSP.ports", 11, "missing.rsp' of station 'CS002' does not exist"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "PIC.Core.CS002LBA.RSP.ports", 11, "reach different hosts"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "PIC.Core.CS003LBA.RSP.ports", 12, "host '10.255.255.1' is not this machine"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.DataProducts.Output_Correlated.locations", 13, "cannot be created"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "--dir", 0, "cannot be created"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "--ranks", 0, "more ranks than the 2 cores"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), !r.settings);
    // --now makes a past start acceptable; a port bound by someone else is named
    const int busy = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(10010);
    const bool bound = bind(busy, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    const CheckResult now = ParsetChecker({true, 1, 2, "", parseUtc("2026-01-01 00:00:00")}).check(parset);
    CPPUNIT_ASSERT(!hasProblem(now, "Observation.startTime", 2, "in the past"));
    if (bound) CPPUNIT_ASSERT_MESSAGE(describe(now), hasProblem(now, "PIC.Core.CS001LBA.RSP.ports", 10, "port in use"));
    close(busy);
  }

  void testCheckerAcceptsGoodParset() {
    TempDir dir;
    SmallObservation o;
    o.outputDir = dir.path() + "/out";
    o.extra = "Observation.typo = 1\n";
    const std::string parset = writeParset(dir.path() + "/good.parset", o);
    const CheckResult r = ParsetChecker({false, 2, 2, "", parseUtc("2025-12-31 23:00:00")}).check(parset);
    CPPUNIT_ASSERT_MESSAGE(describe(r), !r.hasErrors());
    CPPUNIT_ASSERT(r.settings);
    const std::string text = readFile(parset);
    const int typoLine = int(std::count(text.begin(), text.end(), '\n'));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.typo", typoLine, "unknown key", false));
  }

  void testEvenShift() {
    const double start = parseUtc("2026-01-01 00:00:00");
    const double now = start + 1000.3;
    const double shift = ObservationPlan::evenShift(start, now, 4);
    CPPUNIT_ASSERT_EQUAL(1006.0, shift);  // 1004.3 rounded up to even
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, std::fmod(shift, 2.0), 0.0);
    CPPUNIT_ASSERT(start + shift >= now + 4);
    CPPUNIT_ASSERT_EQUAL(-100.0, ObservationPlan::evenShift(start, start - 104, 4));  // a later start comes forward
  }

  void testPlan() {
    TempDir dir;
    SmallObservation o;
    o.outputDir = "relative-out";
    const std::string recording = dir.path() + "/CS002.rsp";
    std::ofstream(recording) << "x";
    o.stations = {"CS001", "CS002"};
    o.inputs = {"udp:127.0.0.1:" + std::to_string(freeUdpPort()), "file:CS002.rsp"};
    const std::string path = writeParset(dir.path() + "/plan.parset", o);
    const double now = parseUtc("2026-03-01 12:00:00.5");
    const ObservationPlan plan = ObservationPlan::make(Parset::fromFile(path), {true, dir.path() + "/obs", now, 4});
    const ObservationSettings& s = plan.settings;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-03-01 12:00:06"), s.startTime, 1e-6);  // even shift, >= now + 4
    CPPUNIT_ASSERT_DOUBLES_EQUAL(o.seconds, s.stopTime - s.startTime, 1e-6);
    CPPUNIT_ASSERT_EQUAL(int(plan.storagePort), s.correlatedOutput.storagePort);
    CPPUNIT_ASSERT_EQUAL("file:" + recording, s.stations[1].inputs[0]);  // relative to the parset
    CPPUNIT_ASSERT_EQUAL((std::filesystem::current_path() / "relative-out").string(), s.correlatedOutput.directories[0]);
    CPPUNIT_ASSERT_EQUAL(dir.path() + "/obs", plan.directory);
    CPPUNIT_ASSERT_EQUAL(size_t(2), plan.measurementSets.size());
    // Only CS001 is simulated here: station-sim gets a parset of its own.
    CPPUNIT_ASSERT_EQUAL(dir.path() + "/obs/station-sim.parset", plan.stationSimParsetPath);
    plan.write();
    const ObservationSettings effective = ObservationSettings::fromFile(plan.parsetPath);
    CPPUNIT_ASSERT(effective.startTime == s.startTime && effective.stations == s.stations);
    const ObservationSettings simulated = ObservationSettings::fromFile(plan.stationSimParsetPath);
    CPPUNIT_ASSERT_EQUAL(1, simulated.nrStations());
    CPPUNIT_ASSERT_EQUAL(std::string("CS001"), simulated.stations[0].name);
  }

  void testChildProcess() {
    TempDir dir;
    ChildProcess exits("exits", {"/bin/sh", "-c", "echo to-the-log >&2; exit 3"}, dir.path() + "/exits.log");
    exits.start();
    CPPUNIT_ASSERT(exits.waitFor(10));
    CPPUNIT_ASSERT_EQUAL(3, *exits.exitCode());
    CPPUNIT_ASSERT_EQUAL(std::string("to-the-log\n"), readFile(dir.path() + "/exits.log"));
    // SIGINT reaches the child's whole group, even while observe blocks it.
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigset_t old;
    pthread_sigmask(SIG_BLOCK, &block, &old);
    ChildProcess sleeper("sleeper", {"/bin/sh", "-c", "sleep 30 & wait"}, dir.path() + "/sleeper.log");
    sleeper.start();
    CPPUNIT_ASSERT(!sleeper.waitFor(0.2));
    sleeper.signal(SIGINT);
    CPPUNIT_ASSERT(sleeper.waitFor(10));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    CPPUNIT_ASSERT(*sleeper.exitCode() != 0);
    ChildProcess missing("missing", {dir.path() + "/no-such-program"}, dir.path() + "/missing.log");
    CPPUNIT_ASSERT_THROW(missing.start(), std::runtime_error);
  }

  void testSummaryJson() {
    TempDir dir;
    ObservationSummary s;
    s.observationId = 12;
    s.parset = "/tmp/a \"quoted\" parset";
    s.reason = "line one\nline two";
    s.measurementSets = {"/x/L12_SB300_uv.MS"};
    s.stations = {{"CS001", 90, 100, 10, 0.1}};
    s.exitCodes = {{"ionproc", 0}, {"correlator", 1}};
    s.write(dir.path());
    CPPUNIT_ASSERT_EQUAL(std::string("\"failed\""), summaryValue(dir.path(), "status"));
    CPPUNIT_ASSERT_EQUAL(std::string("\"line one\\nline two\""), summaryValue(dir.path(), "reason"));
    CPPUNIT_ASSERT_EQUAL(std::string("[{\"name\": \"CS001\", \"packetsReceived\": 90, \"packetsExpected\": 100, "
                                     "\"packetsLost\": 10, \"lossFraction\": 0.1}]"),
                         summaryValue(dir.path(), "stations"));
    CPPUNIT_ASSERT_EQUAL(std::string("{\"correlator\": 1, \"ionproc\": 0}"), summaryValue(dir.path(), "exitCodes"));
    CPPUNIT_ASSERT(readFile(dir.path() + "/summary.txt").find("FAILED") != std::string::npos);
  }

  void testProgressLine() {
    TempDir dir;
    SmallObservation o;
    o.stations = {"CS001", "CS002"};
    o.outputDir = dir.path();
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    ProgressMonitor monitor(s, {dir.path() + "/status"}, false);
    ion::IonStatus before, now;
    before.wallTime = 100;
    before.nrBlocks = now.nrBlocks = 4;
    before.blockDuration = now.blockDuration = 1;
    before.stations = {{"CS001", 0, 0, 0, 0, 0, 0, 0, 0, -1}, {"CS002", 0, 0, 0, 0, 0, 0, 0, 0, -1}};
    now = before;
    now.wallTime = 101;
    now.newestBlock = 1;
    now.newestBlockLag = 0.5;
    now.stations = {{"CS001", 12207, 12207, 0, 0, 2, 1000, 10, 0, 1}, {"CS002", 12207, 12207, 0, 0, 2, 1000, 0, 3, 1}};
    const std::string line = monitor.line(now, &before);
    // 2 subbands x 16 samples x 8 bytes + 16 header bytes per packet
    const double gbps = 2 * 12207 * (16 + 2 * 16 * 8) * 8 / 1e9;
    char rate[32];
    std::snprintf(rate, sizeof rate, "in %.3f Gb/s", gbps);
    CPPUNIT_ASSERT_MESSAGE(line, line.find("2.0/4.0 s observed") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(line, line.find(rate) != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(line, line.find("CS001 1.0%") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(line, line.find("dropped 3 blocks") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(line, line.find("margin 2.00 s of 2.50 s buffer") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(line, line.find("storage-sink") == std::string::npos);
    now.storageQueued = 2;  // integrations ready, storage-sink not reached yet
    CPPUNIT_ASSERT(monitor.line(now, &before).find("waiting for storage-sink") != std::string::npos);
    now.storageConnections = 1;
    CPPUNIT_ASSERT(monitor.line(now, &before).find("storage-sink") == std::string::npos);
  }

  /// Two ionprocs (one per input host): stations back in station-list order, the
  /// observation as far as the slower one, counters summed, finished when both are.
  void testMergedStatus() {
    SmallObservation o;
    o.stations = {"CS001", "CS002", "RS106"};
    o.outputDir = "/tmp";
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    ion::IonStatus output, other;
    output.wallTime = 10, other.wallTime = 11;
    output.finished = true;
    output.newestBlock = 5, other.newestBlock = 3;
    output.integrations = 12, output.storageSent = 10, output.storageConnections = 1;
    output.stations = {{"CS002", 7, 7, 0, 0, 6, 600, 0, 0, 5}};
    other.stations = {{"RS106", 5, 5, 0, 0, 4, 400, 0, 0, 3}, {"CS001", 5, 5, 0, 0, 4, 400, 0, 0, 3}};
    const ion::IonStatus merged = mergeStatuses(s, {output, other});
    CPPUNIT_ASSERT_EQUAL(size_t(3), merged.stations.size());
    CPPUNIT_ASSERT_EQUAL(std::string("CS001"), merged.stations[0].name);
    CPPUNIT_ASSERT_EQUAL(std::string("CS002"), merged.stations[1].name);
    CPPUNIT_ASSERT_EQUAL(std::string("RS106"), merged.stations[2].name);
    CPPUNIT_ASSERT_EQUAL(int64_t(3), merged.newestBlock);
    CPPUNIT_ASSERT_EQUAL(11.0, merged.wallTime);
    CPPUNIT_ASSERT(!merged.finished);
    CPPUNIT_ASSERT_EQUAL(uint64_t(12), merged.integrations);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), merged.storageConnections);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ObserveUnitTest);

}  // namespace rtcp::observe::test
