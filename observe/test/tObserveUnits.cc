// observe's pieces alone: the parset checker (every problem, with key and line), the
// plan (--now shift, effective parset), child processes, the summary's JSON, the
// progress line.
#include <cppunit/extensions/HelperMacros.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "BeamFormedChecks.h"
#include "ChildProcess.h"
#include "FlaggingReport.h"
#include "HydraLaunch.h"
#include "MemoryPlan.h"
#include "ObservationPlan.h"
#include "ObserveTestUtil.h"
#include "ParsetChecker.h"
#include "ProgressMonitor.h"
#include "StorageTestUtil.h"
#include "rtcp/BeamFormedSendPool.h"
#include "rtcp/IntegrationSendPool.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::test {

using storage::test::TempDir;

namespace {

bool hasProblem(const CheckResult& r, const std::string& key, int line, const std::string& text,
                bool error = true) {
  for (const ParsetProblem& p : r.problems)
    if (p.key == key && p.line == line && p.error == error &&
        p.message.find(text) != std::string::npos)
      return true;
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
  CPPUNIT_TEST(testNowLeavesTimeToFaultBuffersIn);
  CPPUNIT_TEST(testChildProcess);
  CPPUNIT_TEST(testSummaryJson);
  CPPUNIT_TEST(testFlaggingReportsPerStation);
  CPPUNIT_TEST(testProgressLine);
  CPPUNIT_TEST(testMergedStatus);
  CPPUNIT_TEST(testCheckerAcrossHosts);
  CPPUNIT_TEST(testCheckerBeamFormedOutputs);
  CPPUNIT_TEST(testPlanAcrossHosts);
  CPPUNIT_TEST(testHydraCommand);
  CPPUNIT_TEST(testPartOutput);
  CPPUNIT_TEST(testOutOfMemoryRecords);
  CPPUNIT_TEST(testMemoryRefusal);
  CPPUNIT_TEST(testPlanCountsBeamFormedPool);
  CPPUNIT_TEST(testPlanCountsIntegrationPool);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCheckerReportsEveryError() {
    TempDir dir;
    const std::string file = dir.path() + "/file";
    std::ofstream(file) << "not a directory\n";
    const std::string parset = dir.path() + "/bad.parset";
    std::ofstream(parset)
        << "Observation.ObsID = 7\n"                                                     // 1
           "Observation.startTime = '2020-01-01 00:00:10'\n"                             // 2
           "Observation.stopTime = '2020-01-01 00:00:05'\n"                              // 3
           "Observation.antennaSet = LBA_OUTER\n"                                        // 4
           "Observation.bandFilter = LBA_30_90\n"                                        // 5
           "Observation.VirtualInstrument.stationList = [CS001, XX999, CS002, CS003]\n"  // 6
           "Observation.Beam[0].angle1 = 5.23\nObservation.Beam[0].angle2 = 0.71\n"      // 7, 8
           "Observation.Beam[0].subbandList = [300, 512]\n"                              // 9
           "PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]\n"                       // 10
           "PIC.Core.CS002LBA.RSP.ports = [udp:localhost:10010, file:missing.rsp]\n"     // 11
           "PIC.Core.CS003LBA.RSP.ports = [udp:10.255.255.1:10030]\n"                    // 12
           "Observation.DataProducts.Output_Correlated.locations = [localhost:" +
               file + "/out]\n";  // 13
    const CheckResult r =
        ParsetChecker({false, 3, 2, file + "/obs", parseUtc("2026-01-01 00:00:00")}).check(parset);
    CPPUNIT_ASSERT(r.hasErrors());
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           hasProblem(r, "Observation.stopTime", 3, "is not after start time"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.startTime", 2, "in the past"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.VirtualInstrument.stationList",
                                                   6, "unknown station 'XX999'"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "Observation.Beam[0].subbandList", 9,
                                                   "subband 512 is outside 0..511"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "PIC.Core.CS002LBA.RSP.ports", 11,
                                                   "already an input of station 'CS001LBA'"));
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           hasProblem(r, "PIC.Core.CS002LBA.RSP.ports", 11,
                                      "missing.rsp' of station 'CS002LBA' does not exist"));
    CPPUNIT_ASSERT_MESSAGE(
        describe(r), hasProblem(r, "PIC.Core.CS002LBA.RSP.ports", 11, "reach different hosts"));
    // An input on another host is that host's ionproc's (observe starts it there).
    CPPUNIT_ASSERT_MESSAGE(describe(r), !hasProblem(r, "PIC.Core.CS003LBA.RSP.ports", 12, ""));
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           hasProblem(r, "Observation.DataProducts.Output_Correlated.locations", 13,
                                      "cannot be created"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "--dir", 0, "cannot be created"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, "--ranks", 0, "more ranks than the 2 cores"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), !r.settings);
    // --now makes a past start acceptable; a port bound by someone else is named
    const int busy = socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(10010);
    const bool bound = bind(busy, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
    const CheckResult now =
        ParsetChecker({true, 1, 2, "", parseUtc("2026-01-01 00:00:00")}).check(parset);
    CPPUNIT_ASSERT(!hasProblem(now, "Observation.startTime", 2, "in the past"));
    if (bound)
      CPPUNIT_ASSERT_MESSAGE(describe(now),
                             hasProblem(now, "PIC.Core.CS001LBA.RSP.ports", 10, "port in use"));
    close(busy);
  }

  void testCheckerAcceptsGoodParset() {
    TempDir dir;
    SmallObservation o;
    o.outputDir = dir.path() + "/out";
    // A key close to one rtcp reads is listed as a likely misspelling; another key under
    // LOFAR's own prefixes is only counted.
    o.extra = "Observation.lofarOnly = 1\nObservation.sampleClok = 200\n";
    const std::string parset = writeParset(dir.path() + "/good.parset", o);
    const CheckResult r =
        ParsetChecker({false, 2, 2, "", parseUtc("2025-12-31 23:00:00")}).check(parset);
    CPPUNIT_ASSERT_MESSAGE(describe(r), !r.hasErrors());
    CPPUNIT_ASSERT(r.settings);
    const std::string text = readFile(parset);
    const int typoLine = int(std::count(text.begin(), text.end(), '\n'));
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           hasProblem(r, "Observation.sampleClok", typoLine, "misspelt?", false));
    CPPUNIT_ASSERT_MESSAGE(
        describe(r), describe(r).find("unknown key Observation.lofarOnly") == std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           describe(r).find("2 parset keys not used by rtcp") != std::string::npos);
  }

  void testEvenShift() {
    const double start = parseUtc("2026-01-01 00:00:00");
    const double now = start + 1000.3;
    const double shift = ObservationPlan::evenShift(start, now, 4);
    CPPUNIT_ASSERT_EQUAL(1006.0, shift);  // 1004.3 rounded up to even
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, std::fmod(shift, 2.0), 0.0);
    CPPUNIT_ASSERT(start + shift >= now + 4);
    CPPUNIT_ASSERT_EQUAL(
        -100.0, ObservationPlan::evenShift(start, start - 104, 4));  // a later start comes forward
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
    const ObservationPlan plan = ObservationPlan::make(
        Parset::fromFile(path), {true, dir.path() + "/obs", now, 4, 4200, ""});
    const ObservationSettings& s = plan.settings;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-03-01 12:00:06"), s.startTime,
                                 1e-6);  // even shift, >= now + 4
    CPPUNIT_ASSERT_DOUBLES_EQUAL(o.seconds, s.stopTime - s.startTime, 1e-6);
    CPPUNIT_ASSERT_EQUAL(int(plan.storagePort), s.correlatedOutput.storagePort);
    CPPUNIT_ASSERT_EQUAL("file:" + recording, s.stations[1].inputs[0]);  // relative to the parset
    CPPUNIT_ASSERT_EQUAL((std::filesystem::current_path() / "relative-out").string(),
                         s.correlatedOutput.directories[0]);
    CPPUNIT_ASSERT_EQUAL(dir.path() + "/obs", plan.directory);
    CPPUNIT_ASSERT_EQUAL(size_t(2), plan.measurementSets.size());
    // Only CS001 is simulated here: station-sim gets a parset of its own.
    CPPUNIT_ASSERT_EQUAL(dir.path() + "/obs/station-sim.parset", plan.stationSimParsetPath);
    plan.createDirectory();
    plan.write(ObservationSecret::generate());
    // The secret only this user reads; no input for parts on other hosts (there are none).
    struct stat status {};
    CPPUNIT_ASSERT_EQUAL(0, ::stat(plan.secretPath.c_str(), &status));
    CPPUNIT_ASSERT_EQUAL(0600u, unsigned(status.st_mode & 0777));
    CPPUNIT_ASSERT(!std::filesystem::exists(plan.remoteInputPath));
    const ObservationSettings effective = ObservationSettings::fromFile(plan.parsetPath);
    CPPUNIT_ASSERT(effective.startTime == s.startTime && effective.stations == s.stations);
    const ObservationSettings simulated = ObservationSettings::fromFile(plan.stationSimParsetPath);
    CPPUNIT_ASSERT_EQUAL(1, simulated.nrStations());
    CPPUNIT_ASSERT_EQUAL(std::string("CS001LBA"), simulated.stations[0].name);
  }

  /// --now adds the seconds ionproc may take to fault its buffers in: 4 stations x 48
  /// subbands of 16 bits (8 bytes a sample) at 195312.5 samples/s, each buffer of 3 blocks
  /// of 1 s in flight, the filter history, the coarse delays and 0.5 s of latency
  /// (OLAP.maxNetworkDelay and input ahead of the clock): more than the 2.5 s asked, 3.5 s
  /// and the delays, 1.05 GB, 5.26 s at 0.2 GB/s: what the station input allocates
  /// (StationBufferSize.h).
  void testNowLeavesTimeToFaultBuffersIn() {
    TempDir dir;
    SmallObservation o;
    o.subbands = "[300..347]";
    o.outputDir = dir.path() + "/out";
    const std::string path = writeParset(dir.path() + "/large.parset", o);
    const double now = parseUtc("2026-03-01 12:00:00.5");
    const ObservationPlan plan = ObservationPlan::make(
        Parset::fromFile(path), {true, dir.path() + "/obs", now, 4, 4200, ""});
    CPPUNIT_ASSERT_DOUBLES_EQUAL(5.26, ObservationPlan::bufferFaultSeconds(plan.settings), 0.01);
    // now + 9.26 s = 12:00:09.76, rounded up to an even shift
    CPPUNIT_ASSERT_DOUBLES_EQUAL(parseUtc("2026-03-01 12:00:10"), plan.settings.startTime, 1e-6);
  }

  void testChildProcess() {
    TempDir dir;
    ChildProcess exits("exits", {"/bin/sh", "-c", "echo to-the-log >&2; exit 3"},
                       dir.path() + "/exits.log");
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
    ChildProcess sleeper("sleeper", {"/bin/sh", "-c", "sleep 30 & wait"},
                         dir.path() + "/sleeper.log");
    sleeper.start();
    CPPUNIT_ASSERT(!sleeper.waitFor(0.2));
    sleeper.signal(SIGINT);
    CPPUNIT_ASSERT(sleeper.waitFor(10));
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    CPPUNIT_ASSERT(*sleeper.exitCode() != 0);
    ChildProcess missing("missing", {dir.path() + "/no-such-program"}, dir.path() + "/missing.log");
    CPPUNIT_ASSERT_THROW(missing.start(), std::runtime_error);
    // A part on another host: its parset on standard input, standard output into a file
    // of its own (status lines), and signals to mpiexec alone, not its process group.
    std::ofstream(dir.path() + "/parset") << "Observation.ObsID = 1\n";
    ChildProcess remote(
        "remote",
        {"/bin/sh", "-c",
         "cat; echo to-the-log >&2; trap 'echo got INT; kill $!; exit 0' INT; sleep 30 & wait"},
        dir.path() + "/remote.log",
        ChildStreams{dir.path() + "/parset", dir.path() + "/remote.out", false});
    remote.start();
    for (int i = 0; i < 100 && readFile(dir.path() + "/remote.log").empty(); ++i) usleep(20000);
    remote.signal(SIGINT);  // to the shell alone: its sleep goes on, the shell ends
    CPPUNIT_ASSERT(remote.waitFor(10));
    CPPUNIT_ASSERT_EQUAL(0, *remote.exitCode());
    CPPUNIT_ASSERT_EQUAL(std::string("Observation.ObsID = 1\ngot INT\n"),
                         readFile(dir.path() + "/remote.out"));
    CPPUNIT_ASSERT_EQUAL(std::string("to-the-log\n"), readFile(dir.path() + "/remote.log"));
  }

  /// Two ranks' pre-correlation counts are added up per station; AOFlagger's per-station
  /// counts, broken subband-blocks and incoherent subband-integrations land on the stations
  /// they name; the JSON carries them back.
  void testFlaggingReportsPerStation() {
    const std::vector<std::string> lines = {
        "rank 0: pre-correlation flagging: flagged of the samples that arrived: CS001LBA 1.00 % "
        "(10 of 1000), RS106LBA 100.00 % (1000 of 1000)",
        "rank 0: broken stations, flagged whole: RS106LBA in 3 of 3 subband-blocks (3 no "
        "signal, 0 only interference)",
        "rank 1: pre-correlation flagging: flagged of the samples that arrived: CS001LBA 3.00 % "
        "(30 of 1000), RS106LBA 50.00 % (500 of 1000)",
        "rank 1: broken stations, flagged whole: RS106LBA in 1 of 3 subband-blocks (1 no "
        "signal, 0 only interference)",
        "post-correlation flagging (AOFlagger, /usr/share/aoflagger/strategies/lofar-default.lua):"
        " 5 of 400 cross-correlation visibilities (1.25 %) in 8 integrations, 12 baseline "
        "windows, 0.1 s",
        "post-correlation flagging per station, of its cross-correlation visibilities: CS001LBA "
        "2.50 % (5 of 200), RS106LBA 0.00 % (0 of 200)",
        "post-correlation broken stations (no sky in their cross-correlations), flagged whole: "
        "RS106LBA in 7 of 8 subband-integrations"};
    std::vector<StationSummary> stations(3);
    stations[0].name = "CS001LBA";
    stations[1].name = "RS106LBA";
    stations[2].name = "RS205LBA";
    addFlaggingReports(lines, stations);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.02, stations[0].preCorrelationFlagged, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.75, stations[1].preCorrelationFlagged, 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.025, stations[0].postCorrelationFlagged, 1e-12);
    CPPUNIT_ASSERT_EQUAL(uint64_t(4), stations[1].brokenSubbandBlocks);
    CPPUNIT_ASSERT_EQUAL(uint64_t(7), stations[1].incoherentIntegrations);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), stations[0].brokenSubbandBlocks);
    CPPUNIT_ASSERT_EQUAL(0.0, stations[2].preCorrelationFlagged);
    stations[0].subbandLevelFlagged = 0.0625;  // ionproc's view across subbands
    stations[0].subbandLevelFlaggedBlocks = 3;
    ObservationSummary summary;
    summary.ok = true;
    summary.stations = stations;
    summary.flagging = lines;
    const ObservationSummary back = ObservationSummary::fromJson(summary.toJson(), "test");
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0625, back.stations[0].subbandLevelFlagged, 1e-9);
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), back.stations[0].subbandLevelFlaggedBlocks);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.75, back.stations[1].preCorrelationFlagged, 1e-9);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.025, back.stations[0].postCorrelationFlagged, 1e-9);
    CPPUNIT_ASSERT_EQUAL(uint64_t(7), back.stations[1].incoherentIntegrations);
    const std::string text = summary.toText();
    CPPUNIT_ASSERT_MESSAGE(text, text.find("flagged online: 75 % before correlation, 0 % after "
                                           "(AOFlagger), broken in 4 subband-blocks, no sky in "
                                           "7 subband-integrations") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        text, text.find("3 subband-blocks far above the bandpass (6.25 %)") != std::string::npos);
  }

  void testSummaryJson() {
    TempDir dir;
    ObservationSummary s;
    s.observationId = 12;
    s.parset = "/tmp/a \"quoted\" parset";
    s.reason = "line one\nline two";
    s.measurementSets = {"/x/L12_SB300_uv.MS"};
    s.stations = {
        {"CS001LBA", 90, 100, 10, 0.1, {{90, 100, 10}, {0, 0, 0}}, 4, 1, 2, 3, 0, 0.125, 0, 0}};
    s.exitCodes = {{"ionproc", 0}, {"correlator", 1}};
    s.write(dir.path());
    CPPUNIT_ASSERT_EQUAL(std::string("\"failed\""), summaryValue(dir.path(), "status"));
    CPPUNIT_ASSERT_EQUAL(std::string("\"line one\\nline two\""),
                         summaryValue(dir.path(), "reason"));
    CPPUNIT_ASSERT_EQUAL(
        std::string("[{\"name\": \"CS001LBA\", \"packetsReceived\": 90, \"packetsExpected\": 100, "
                    "\"packetsLost\": 10, \"lossFraction\": 0.1, \"packetsLate\": 4, "
                    "\"packetsDuplicated\": 1, \"packetsRejected\": 2, \"packetsImplausible\": 3, "
                    "\"packetsBeforeStart\": 0, \"packetsBeforeWindow\": 0, "
                    "\"packetsAfterWindow\": 0, \"packetsRecorded\": 0, \"packetsNotRecorded\": 0, "
                    "\"flaggedFraction\": 0.125, \"preCorrelationFlagged\": 0, "
                    "\"postCorrelationFlagged\": 0, \"brokenSubbandBlocks\": 0, "
                    "\"incoherentIntegrations\": 0, \"subbandLevelFlagged\": 0, "
                    "\"subbandLevelFlaggedBlocks\": 0, \"ports\": [{\"packetsReceived\": 90, "
                    "\"packetsExpected\": 100, \"packetsLost\": 10}, {\"packetsReceived\": 0, "
                    "\"packetsExpected\": 0, \"packetsLost\": 0}]}]"),
        summaryValue(dir.path(), "stations"));
    // The second port carries no subband: not counted as lost.
    CPPUNIT_ASSERT(readFile(dir.path() + "/summary.txt").find("ports: 0: 10 lost, 1: unused") !=
                   std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string("{\"correlator\": 1, \"ionproc\": 0}"),
                         summaryValue(dir.path(), "exitCodes"));
    CPPUNIT_ASSERT(readFile(dir.path() + "/summary.txt").find("FAILED") != std::string::npos);
  }

  void testProgressLine() {
    TempDir dir;
    SmallObservation o;
    o.stations = {"CS001", "CS002"};
    o.outputDir = dir.path();
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    ProgressMonitor monitor(s, {dir.path() + "/status"}, false);
    ion::IonStatus before, now;
    before.wallTime = 100;
    before.nrBlocks = now.nrBlocks = 4;
    before.blockDuration = now.blockDuration = 1;
    before.stations = {{"CS001", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, {}, 0, 0},
                       {"CS002", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, {}, 0, 0}};
    now = before;
    now.wallTime = 101;
    now.newestBlock = 1;
    now.newestBlockLag = 0.5;
    now.stations = {{"CS001", 12207, 12207, 0, 0, 0, 0, 0, 2, 1000, 10, 0, 1, {}, 0, 0},
                    {"CS002", 12207, 12207, 0, 0, 0, 0, 0, 2, 1000, 0, 3, 1, {}, 0, 0}};
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
    CPPUNIT_ASSERT(monitor.line(now, &before).find("waiting for storage-sink") !=
                   std::string::npos);
    now.storageConnections = 1;
    CPPUNIT_ASSERT(monitor.line(now, &before).find("storage-sink") == std::string::npos);
  }

  /// Two ionprocs (one per input host): stations back in station-list order, the
  /// observation as far as the slower one, counters summed, finished when both are.
  void testMergedStatus() {
    SmallObservation o;
    o.stations = {"CS001", "CS002", "RS106"};
    o.outputDir = "/tmp";
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    ion::IonStatus output, other;
    output.wallTime = 10, other.wallTime = 11;
    output.finished = true;
    output.newestBlock = 5, other.newestBlock = 3;
    output.integrations = 12, output.storageSent = 10, output.storageConnections = 1;
    output.stations = {{"CS002", 7, 7, 0, 0, 0, 0, 0, 6, 600, 0, 0, 5, {}, 0, 0}};
    other.stations = {{"RS106", 5, 5, 0, 0, 0, 0, 0, 4, 400, 0, 0, 3, {}},
                      {"CS001", 5, 5, 0, 0, 0, 0, 0, 4, 400, 0, 0, 3, {}, 0, 0}};
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

  /// Observations across hosts: what the checker refuses (a relative output directory on
  /// another host, --ranks against the parset's compute nodes) and what it lets through.
  void testCheckerAcrossHosts() {
    TempDir dir;
    SmallObservation o;
    o.stations = {"CS001", "CS002"};
    o.inputs = {"udp:in1.example:10010", "udp:in2.example:10010"};  // the same port on two hosts
    o.outputHost = "st1.example";
    o.outputDir = "relative/out";
    o.extra =
        "Cobalt.Nodes = [cn1_0, cn2_0]\nPIC.Core.Cobalt.cn1_0.host = "
        "cn1\nPIC.Core.Cobalt.cn2_0.host = cn2\n";
    const std::string parset = writeParset(dir.path() + "/hosts.parset", o);
    const double wall = parseUtc("2025-12-31 23:00:00");
    const CheckResult r =
        ParsetChecker({false, 3, 2, dir.path() + "/obs", wall, true, false}).check(parset);
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           describe(r).find("'st1.example:relative/out' on another host needs an "
                                            "absolute directory") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        describe(r), describe(r).find("names 2 compute nodes (one rank each), but --ranks is 3") !=
                         std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        describe(r), describe(r).find("more ranks than") == std::string::npos);  // their cores
    CPPUNIT_ASSERT_MESSAGE(describe(r),  // the same port on two hosts is no clash
                           describe(r).find("already an input") == std::string::npos);
    o.outputDir = "/data/out";
    const CheckResult good = ParsetChecker({false, 2, 1, dir.path() + "/obs", wall, false, false})
                                 .check(writeParset(dir.path() + "/good.parset", o));
    // Its only errors: the test's made-up hosts do not resolve here.
    for (const ParsetProblem& problem : good.problems)
      CPPUNIT_ASSERT_MESSAGE(
          describe(good),
          !problem.error || problem.message.find("do not resolve here") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(describe(good), describe(good).find("in1.example") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(describe(good), describe(good).find("cn2") != std::string::npos);
  }

  /// The beam-formed outputs' locations are checked as the correlated output's: a directory
  /// that cannot be made here, a relative directory on another host and a host that does
  /// not resolve, each under its own output's key and line.
  void testCheckerBeamFormedOutputs() {
    TempDir dir;
    const std::string file = dir.path() + "/file";
    std::ofstream(file) << "not a directory\n";
    SmallObservation o;
    o.steps = 12288;  // blocks of whole beam-formed samples (16 channels x 16 integrated)
    o.outputDir = dir.path() + "/out";
    o.extra = twoTabKeys(o, {"localhost:" + file + "/bf"}, {"bf.invalid:relative", "IQUV"});
    const std::string parset = writeParset(dir.path() + "/bf.parset", o);
    // The line of a key in a parset file.
    auto lineOf = [](const std::string& key, const std::string& path) {
      const std::string text = readFile(path);
      return 1 + int(std::count(text.begin(), text.begin() + long(text.find(key + " =")), '\n'));
    };
    const std::string coherent = "Observation.DataProducts.Output_CoherentStokes.locations";
    const std::string incoherent = "Observation.DataProducts.Output_IncoherentStokes.locations";
    const double wall = parseUtc("2025-12-31 23:00:00");
    const CheckResult r = ParsetChecker({false, 1, 2, "", wall}).check(parset);
    CPPUNIT_ASSERT_MESSAGE(describe(r), r.settings);  // the settings hold; this host does not
    CPPUNIT_ASSERT_MESSAGE(describe(r),
                           hasProblem(r, coherent, lineOf(coherent, parset), "cannot be created"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, incoherent, lineOf(incoherent, parset),
                                                   "output location 'bf.invalid:relative' on "
                                                   "another host needs an absolute directory"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), hasProblem(r, incoherent, lineOf(incoherent, parset),
                                                   "the output hosts do not resolve here: "
                                                   "bf.invalid"));
    CPPUNIT_ASSERT_MESSAGE(describe(r), describe(r).find("Output_Correlated") == std::string::npos);
    // Beam-formed output alone writes something; no output at all is a warning.
    o.extra += "Observation.DataProducts.Output_Correlated.enabled = F\n";
    const CheckResult beamFormedOnly =
        ParsetChecker({false, 1, 2, "", wall}).check(writeParset(dir.path() + "/bf2.parset", o));
    CPPUNIT_ASSERT_MESSAGE(describe(beamFormedOnly),
                           describe(beamFormedOnly).find("writes nothing") == std::string::npos);
    SmallObservation none;
    none.outputDir = o.outputDir;
    none.extra = "Observation.DataProducts.Output_Correlated.enabled = F\n";
    const std::string noneParset = writeParset(dir.path() + "/none.parset", none);
    const CheckResult nothing = ParsetChecker({false, 1, 2, "", wall}).check(noneParset);
    const std::string enabled = "Observation.DataProducts.Output_Correlated.enabled";
    CPPUNIT_ASSERT_MESSAGE(
        describe(nothing),
        hasProblem(nothing, enabled, lineOf(enabled, noneParset), "writes nothing", false));
  }

  /// Which part runs where: an ionproc and a station-sim per input host, a storage-sink per
  /// output host, one rank per compute node; ports the documented ones.
  void testPlanAcrossHosts() {
    TempDir dir;
    SmallObservation o;
    o.stations = {"CS001", "CS002", "RS106"};
    o.inputs = {"udp:in1.example:10010", "udp:in2.example:10010", "udp:in2.example:10011"};
    o.outputHost = "st1.example";
    o.outputDir = "/data/out";
    o.extra =
        "Cobalt.Nodes = [cn1_0, cn1_1, cn2_0]\nPIC.Core.Cobalt.cn1_0.host = cn1\n"
        "PIC.Core.Cobalt.cn1_1.host = cn1\nPIC.Core.Cobalt.cn2_0.host = cn2\n";
    const std::string path = writeParset(dir.path() + "/hosts.parset", o);
    PlanOptions options{true, dir.path() + "/obs", parseUtc("2026-03-01 12:00:00.5"), 4, 4321, ""};
    ObservationPlan plan = ObservationPlan::make(Parset::fromFile(path), options);
    CPPUNIT_ASSERT(plan.acrossHosts());
    CPPUNIT_ASSERT_EQUAL(size_t(2), plan.ionprocs.size());
    CPPUNIT_ASSERT(plan.ionprocs[0].remote && plan.ionprocs[1].remote);
    CPPUNIT_ASSERT_EQUAL(std::string("in2.example"), plan.ionprocs[1].inputHost);
    CPPUNIT_ASSERT_EQUAL(uint16_t(4321), plan.ionprocs[1].linkPort);
    CPPUNIT_ASSERT((plan.ionprocs[1].stations == std::vector<std::string>{"CS002LBA", "RS106LBA"}));
    CPPUNIT_ASSERT_EQUAL(uint16_t(4100),
                         plan.storagePort);  // the parset's (default) port, not a local free one
    CPPUNIT_ASSERT_EQUAL(size_t(1), plan.remoteStorageSinks.size());
    CPPUNIT_ASSERT_EQUAL(std::string("storage-sink@st1.example"), plan.remoteStorageSinks[0].name);
    CPPUNIT_ASSERT(plan.measurementSets.empty());
    CPPUNIT_ASSERT_EQUAL(std::string("st1.example:/data/out/L4711_SAP000_SB001_uv.MS"),
                         plan.remoteMeasurementSets.at(1));
    CPPUNIT_ASSERT_EQUAL(std::string("cn1:2,cn2:1"), plan.computeHosts);
    CPPUNIT_ASSERT_EQUAL(3, plan.computeNodes);
    CPPUNIT_ASSERT(plan.stationSimParsetPath.empty());  // nothing simulated here
    CPPUNIT_ASSERT_EQUAL(size_t(2), plan.remoteStationSims.size());
    CPPUNIT_ASSERT_EQUAL(std::string("in2.example"), plan.remoteStationSims[1].host);
    plan.createDirectory();
    const ObservationSecret secret = ObservationSecret::generate();
    plan.write(secret);
    // Parts on other hosts read the secret line, then the effective parset, from standard
    // input (mode 0600); the remote storage-sinks are fed that file.
    struct stat status {};
    CPPUNIT_ASSERT_EQUAL(0, ::stat(plan.remoteInputPath.c_str(), &status));
    CPPUNIT_ASSERT_EQUAL(0600u, unsigned(status.st_mode & 0777));
    {
      std::ifstream input(plan.remoteInputPath);
      const ObservationSecret read = ObservationSecret::readLine(input, plan.remoteInputPath);
      CPPUNIT_ASSERT_EQUAL(secret.runId(), read.runId());
      std::ostringstream rest;
      rest << input.rdbuf();
      CPPUNIT_ASSERT(rest.str().find("OLAP.Storage.port") != std::string::npos);
      CPPUNIT_ASSERT(rest.str().find("rtcp-secret") == std::string::npos);
    }
    CPPUNIT_ASSERT(readFile(plan.parsetPath).find("rtcp-secret") == std::string::npos);
    for (const RemotePartPlan& sink : plan.remoteStorageSinks)
      CPPUNIT_ASSERT_EQUAL(plan.remoteInputPath, sink.parsetPath);
    const ObservationSettings sim =
        ObservationSettings::fromFile(plan.remoteStationSims[1].parsetPath);
    CPPUNIT_ASSERT_EQUAL(2, sim.nrStations());
    CPPUNIT_ASSERT_EQUAL(std::string("RS106LBA"), sim.stations[1].name);
    // --mpi-hosts overrides the parset's nodes.
    options.computeHosts = "a,b";
    CPPUNIT_ASSERT_EQUAL(std::string("a,b"),
                         ObservationPlan::make(Parset::fromFile(path), options).computeHosts);
  }

  void testHydraCommand() {
    const std::vector<std::string> command =
        hydraCommand(LauncherOptions{"ssh", "/opt/remote-shell"}, "in1", 1,
                     {"/opt/rtcp/ionproc", "-", "--status", "-"});
    const std::string text = [&] {
      std::string t;
      for (const std::string& a : command) t += a + "|";
      return t;
    }();
    CPPUNIT_ASSERT_MESSAGE(
        text,
        text.find(
            "|-launcher|ssh|-launcher-exec|/opt/remote-shell|-hosts|in1|-n|1|-wdir|/|sh|-c|") !=
            std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.ends_with("|sh|/opt/rtcp/ionproc|-|--status|-|"));
    // The wrapper, run here by sh, reports the start and the part's exit code.
    TempDir dir;
    const std::string out = dir.path() + "/out";
    std::vector<std::string> wrapped(std::find(command.begin(), command.end(), std::string("sh")),
                                     command.end());
    wrapped.resize(4);
    wrapped.front() = "/bin/sh";  // runProgram takes a path
    wrapped.insert(wrapped.end(), {"/bin/sh", "-c", "echo part; exit 3"});
    CPPUNIT_ASSERT_EQUAL(3, runProgram(wrapped, out));
    PartOutput output(out, 1);
    output.update();
    CPPUNIT_ASSERT(output.started());
    CPPUNIT_ASSERT(output.exitCode() == 3);
    // A part that takes its stop signals itself runs with them blocked from exec on: a
    // SIGINT before it took them waits for it instead of killing it (130 unblocked).
    for (const bool blocked : {true, false}) {
      const std::vector<std::string> part = hydraCommand(
          LauncherOptions{}, "in1", 1, {"/bin/sh", "-c", "kill -INT $$; exit 3"}, blocked);
      std::vector<std::string> wrapper(std::find(part.begin(), part.end(), std::string("sh")),
                                       part.end());
      wrapper.front() = "/bin/sh";
      const std::string partOut = dir.path() + (blocked ? "/blocked" : "/unblocked");
      CPPUNIT_ASSERT_EQUAL(blocked ? 3 : 130, runProgram(wrapper, partOut));
      PartOutput reported(partOut, 1);
      reported.update();
      CPPUNIT_ASSERT(reported.exitCode() == (blocked ? 3 : 130));
    }
  }

  void testPartOutput() {
    TempDir dir;
    const std::string path = dir.path() + "/correlator.out";
    PartOutput output(path, 2);
    CPPUNIT_ASSERT(!output.update());  // no file yet
    ion::IonStatus status;
    status.nrBlocks = 7;
    status.stations = {{"CS001", 1, 1, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, {}, 0, 0}};
    std::ofstream file(path);
    file << "rtcp-part-started\n"
         << status.formatLine().substr(0, 20) << std::flush;  // a line half written
    CPPUNIT_ASSERT(!output.update());
    CPPUNIT_ASSERT(!output.started());  // one of two
    file << status.formatLine().substr(20) << "\nrtcp-part-started\nrtcp-part-exit 0\n"
         << std::flush;
    CPPUNIT_ASSERT(output.update());
    CPPUNIT_ASSERT(output.started());
    CPPUNIT_ASSERT_EQUAL(int64_t(7), output.status()->nrBlocks);
    CPPUNIT_ASSERT(!output.exitCode());  // one of two
    file << "rtcp-ms subband=301 integrations=4 missing=1 bytes=123456 path=/data/out "
            "dir/L1_SB301_uv.MS\n"
         << "rtcp-part-exit 137\n"
         << std::flush;
    output.update();
    CPPUNIT_ASSERT(output.exitCode() == 137);
    CPPUNIT_ASSERT_EQUAL(size_t(1), output.measurementSets().size());
    const WrittenMeasurementSet& ms = output.measurementSets()[0];
    CPPUNIT_ASSERT_EQUAL(std::string("/data/out dir/L1_SB301_uv.MS"), ms.path);
    CPPUNIT_ASSERT_EQUAL(301, ms.subband);
    CPPUNIT_ASSERT_EQUAL(int64_t(1), ms.missing);
    CPPUNIT_ASSERT_EQUAL(uint64_t(123456), ms.bytes);
    // What a part's log says went wrong: its last error, not Hydra's noise.
    std::ofstream(dir.path() + "/log") << "2026-01-01 00:00:00.000 ionproc[9] ERROR ionproc: "
                                          "cannot listen on tcp:0.0.0.0:4200: Address in use\n"
                                       << "[mpiexec@launch] Press Ctrl-C again to force abort\n";
    CPPUNIT_ASSERT_EQUAL(std::string("ionproc: cannot listen on tcp:0.0.0.0:4200: Address in use"),
                         lastProblem(dir.path() + "/log"));
    std::ofstream(dir.path() + "/log2") << "ssh: connect to host in9 port 22: No route to host\n";
    CPPUNIT_ASSERT_EQUAL(std::string("ssh: connect to host in9 port 22: No route to host"),
                         lastProblem(dir.path() + "/log2"));
  }

  /// The kernel log's out-of-memory kills, as /dev/kmsg gives them (Linux 6.1).
  void testOutOfMemoryRecords() {
    const std::optional<OomKill> kill = parseOomKill(
        "3,1234,98765432,-;Out of memory: Killed process 4321 (ionproc) total-vm:88000000kB, "
        "anon-rss:23000000kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:45000kB oom_score_adj:0");
    CPPUNIT_ASSERT(kill);
    CPPUNIT_ASSERT_EQUAL(4321, kill->pid);
    CPPUNIT_ASSERT_EQUAL(std::string("ionproc"), kill->program);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(98.765432, kill->bootSeconds, 1e-9);
    const std::optional<OomKill> cgroup = parseOomKill(
        "3,1235,98765500,-;Memory cgroup out of memory: Killed process 77 (correlator) "
        "total-vm:1kB");
    CPPUNIT_ASSERT(cgroup && cgroup->pid == 77 && cgroup->program == "correlator");
    CPPUNIT_ASSERT(!parseOomKill("6,1236,98765600,-;ionproc[4321]: segfault at 0"));
    CPPUNIT_ASSERT(!parseOomKill("6,1237,98765700,-;Killed process 12 (x) by a user"));
  }

  /// A plan that does not fit names its largest part and that part's keys; one that fits
  /// into 90 % of what the host has is no refusal.
  void testMemoryRefusal() {
    const std::vector<MemoryItem> plan{
        {"ionproc's station buffers", 88e9, "77 antenna fields (...stationList) x 488 subbands"},
        {"storage-sink's staging and open MSs", 2e9, "488 MSs"}};
    const std::string refusal = memoryRefusal(plan, HostMemory{24e9, "MemAvailable"});
    CPPUNIT_ASSERT_MESSAGE(refusal, refusal.find("would need 90 GB") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(refusal, refusal.find("90 % of MemAvailable") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(refusal, refusal.find("88 GB = 77 antenna fields") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string(), memoryRefusal(plan, HostMemory{100e9, "MemAvailable"}));
    CPPUNIT_ASSERT(!memoryRefusal(plan, HostMemory{99e9, "MemAvailable"}).empty());
  }

  /// ionproc's pool of beam-formed blocks to storage is in the plan, as ionproc makes it:
  /// the queue (two blocks of each TAB and subband, at least --output-queue) and what a
  /// sink's sync takes to confirm (1 s of 0.042 s blocks, + 2), within --retain-mb.
  void testPlanCountsBeamFormedPool() {
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(storage::test::beamFormedParset(78)));
    const BeamFormedSendPool pool = beamFormedSendPool(s);
    const size_t blockBytes = 64 + 2 * 16 * 512 * 4;  // Stokes I, 16 channels, 512 samples
    CPPUNIT_ASSERT_EQUAL(blockBytes, pool.blockBytes);
    CPPUNIT_ASSERT_EQUAL(size_t(16), pool.queueBlocks);           // --output-queue beyond 2 x 2
    CPPUNIT_ASSERT_EQUAL(size_t((24 + 2) * 2), pool.keptBlocks);  // 1 TAB x 2 subbands a block
    CPPUNIT_ASSERT_EQUAL(size_t(1), pool.connections);
    CPPUNIT_ASSERT_EQUAL(size_t(16 + 52 + 8), pool.slots());
    CPPUNIT_ASSERT_EQUAL(size_t(15), beamFormedSendPool(s, 16, 1 << 20).keptBlocks);  // 1 MiB
    const std::vector<MemoryItem> plan = planMemory(s, {1, 0, false, 0});
    const auto item = std::find_if(plan.begin(), plan.end(), [](const MemoryItem& i) {
      return i.part == "ionproc's beam-formed blocks to storage";
    });
    CPPUNIT_ASSERT(item != plan.end());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(double(76 * blockBytes), item->bytes, 1);
    CPPUNIT_ASSERT_MESSAGE(item->keys, item->keys.find("nrTiedArrayBeams") != std::string::npos);
    // Not on a host without ionproc, nor without beam-formed output.
    for (const MemoryItem& i : planMemory(s, {0, 0, true, 0})) CPPUNIT_ASSERT(i.part != item->part);
    storage::test::TestObservation correlated;
    correlated.location = "localhost:/data";
    const ObservationSettings c =
        ObservationSettings::fromParset(Parset::fromString(makeParset(correlated)));
    CPPUNIT_ASSERT_EQUAL(size_t(0), beamFormedSendPool(c).slots());
  }

  /// ionproc's integrations to storage are in the plan, as ionproc makes them: per
  /// storage host the queue (--output-queue, at least two integrations of each subband it
  /// carries) and the slots for 16 MiB in flight and --retain-mb, at most the integrations
  /// it carries.
  void testPlanCountsIntegrationPool() {
    storage::test::TestObservation o;  // 4 stations, 8 channels, 2 subbands, 6 integrations
    o.location = "localhost:/data";
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    const IntegrationSendPool pool = integrationSendPool(s);
    const size_t integrationBytes =
        64 + 10 * 8 * (4 * 8 + 4);  // 10 baselines: visibilities, counts
    CPPUNIT_ASSERT_EQUAL(integrationBytes, pool.integrationBytes);
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 2), pool.integrations);
    CPPUNIT_ASSERT_EQUAL(size_t(1), pool.connections.size());
    const IntegrationConnectionPool& local = pool.connections.at("localhost");
    CPPUNIT_ASSERT_EQUAL(kDefaultOutputQueue, local.queueIntegrations);  // beyond 2 x 2 subbands
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 2), local.integrations);
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 2), local.slots);  // 272 MiB would hold 96 000
    CPPUNIT_ASSERT_EQUAL(size_t(2 * 2),
                         integrationSendPool(s, 3).connections.at("localhost").queueIntegrations);
    // Integrations of 2.4 MB: (1 MiB + 16 MiB) / 2.4 MB + 2 slots.
    const size_t large = 2400000;
    CPPUNIT_ASSERT_EQUAL(size_t(7 + 2), IntegrationSendPool::slotsFor(large, 1 << 20, 0));
    CPPUNIT_ASSERT_EQUAL(size_t(5), IntegrationSendPool::slotsFor(large, 1 << 20, 5));
    CPPUNIT_ASSERT_EQUAL(IntegrationSendPool::kMaxSlots,
                         IntegrationSendPool::slotsFor(64, 1 << 30, 0));

    const std::vector<MemoryItem> plan = planMemory(s, {1, 0, false, 0});
    const auto item = std::find_if(plan.begin(), plan.end(), [](const MemoryItem& i) {
      return i.part == "ionproc's integrations to storage";
    });
    CPPUNIT_ASSERT(item != plan.end());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(double((16 + 12) * integrationBytes), item->bytes, 1);
    CPPUNIT_ASSERT_MESSAGE(item->keys,
                           item->keys.find("Output_Correlated.locations") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(item->keys, item->keys.find("--retain-mb 256 MiB") != std::string::npos);
    // Each storage host its connection, bounded by the subbands it carries: st1 the
    // first of 20 subbands, st2 the other 19, as ionproc groups them
    // (StorageSender::destinations).
    o.location = "st1:/data";
    for (int i = 1; i < 20; ++i) o.location += ", st2:/data";
    o.subbands = "[300..319]";
    const ObservationSettings two =
        ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    CPPUNIT_ASSERT_EQUAL(std::string("st2"), correlatedStorageHost(two, 1));
    CPPUNIT_ASSERT_EQUAL(std::string("st2"), correlatedStorageHost(two, 19));
    const std::map<std::string, std::vector<int>> groups = correlatedConnections(two);
    CPPUNIT_ASSERT_EQUAL(size_t(2), groups.size());
    CPPUNIT_ASSERT(groups.at("st1") == std::vector<int>{0});
    CPPUNIT_ASSERT_EQUAL(size_t(19), groups.at("st2").size());
    CPPUNIT_ASSERT_EQUAL(1, groups.at("st2").front());
    const IntegrationSendPool spread = integrationSendPool(two, kDefaultOutputQueue, 1 << 20);
    CPPUNIT_ASSERT_EQUAL(size_t(2), spread.connections.size());
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 20), spread.integrations);
    const IntegrationConnectionPool& st1 = spread.connections.at("st1");
    const IntegrationConnectionPool& st2 = spread.connections.at("st2");
    CPPUNIT_ASSERT_EQUAL(size_t(1), st1.subbands);
    CPPUNIT_ASSERT_EQUAL(kDefaultOutputQueue, st1.queueIntegrations);  // not 2 x 20 subbands
    CPPUNIT_ASSERT_EQUAL(size_t(6), st1.integrations);
    CPPUNIT_ASSERT_EQUAL(size_t(6), st1.slots);
    CPPUNIT_ASSERT_EQUAL(size_t(19), st2.subbands);
    CPPUNIT_ASSERT_EQUAL(size_t(2 * 19), st2.queueIntegrations);
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 19), st2.integrations);
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 19), st2.slots);  // 17 MiB would hold 6 000
    // The plan counts each connection with its own bound: (16 + 6) + (38 + 114).
    const std::vector<MemoryItem> spreadPlan = planMemory(two, {1, 0, false, 0});
    const auto spreadItem = std::find_if(spreadPlan.begin(), spreadPlan.end(),
                                         [&](const MemoryItem& i) { return i.part == item->part; });
    CPPUNIT_ASSERT(spreadItem != spreadPlan.end());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(double((16 + 6 + 38 + 114) * integrationBytes), spreadItem->bytes,
                                 1);
    CPPUNIT_ASSERT_MESSAGE(spreadItem->keys,
                           spreadItem->keys.find("2 storage hosts") != std::string::npos);
    // Not on a host without ionproc, nor without correlated output.
    for (const MemoryItem& i : planMemory(s, {0, 0, true, 2})) CPPUNIT_ASSERT(i.part != item->part);
    const ObservationSettings b =
        ObservationSettings::fromParset(Parset::fromString(storage::test::beamFormedParset(79)));
    CPPUNIT_ASSERT_EQUAL(0.0, integrationSendPool(b).bytes());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ObserveUnitTest);

}  // namespace rtcp::observe::test
