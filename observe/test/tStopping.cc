// Stopping an observation early: SIGTERM keeps every integration received (flushed and
// readable in the MSs, storage-sink's reserve file gone); SIGHUP (a dropped ssh session)
// and observe's own death leave no part running; a summary is always written. And the
// parset check: linear, bounded by sane sizes, and a stop signal ends it within a second.
#include <cppunit/extensions/HelperMacros.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <thread>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/Baselines.h"
#include "rtcp/StorageStatus.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;
using Clock = std::chrono::steady_clock;

namespace {

/// The parent of process pid (from /proc/PID/stat), or -1.
pid_t parentOf(pid_t pid) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  int ppid = -1;
  char state = 0;
  if (close == std::string::npos ||
      std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2)
    return -1;
  return ppid;
}

/// Every process descended from root (children, their children, ...).
std::set<pid_t> descendants(pid_t root) {
  std::set<pid_t> found{root};
  for (bool more = true; more;) {
    more = false;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      const pid_t pid = pid_t(std::stoi(name));
      if (!found.count(pid) && found.count(parentOf(pid))) more = found.insert(pid).second;
    }
  }
  found.erase(root);
  return found;
}

/// Whether pid still runs (a zombie has ended).
bool alive(pid_t pid) {
  const std::string stat = readFile("/proc/" + std::to_string(pid) + "/stat");
  const size_t close = stat.rfind(')');
  return close != std::string::npos && stat.find(" Z ", close) != close + 1;
}

/// What of pids still runs, as "pid (comm)" for a message.
std::string stillRunning(const std::set<pid_t>& pids) {
  std::string running;
  for (const pid_t pid : pids)
    if (alive(pid))
      running +=
          std::to_string(pid) + " (" + readFile("/proc/" + std::to_string(pid) + "/comm") + ") ";
  return running;
}

/// Waits until storage-sink's status says it wrote at least n integrations.
void waitForWritten(const std::string& obs, uint64_t n, const std::string& log) {
  const auto giveUp = Clock::now() + std::chrono::seconds(60);
  for (;;) {
    const std::string status = obs + "/storage-sink.status";
    if (std::filesystem::exists(status) &&
        storage::StorageStatus::read(status).integrationsWritten >= n)
      return;
    CPPUNIT_ASSERT_MESSAGE(readFile(log), Clock::now() < giveUp);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

/// A 20 s observation of three stations and two subbands in DIR/out, observed into DIR/obs.
SmallObservation longObservation(const std::string& dir, int64_t obsId) {
  SmallObservation o;
  o.obsId = obsId;
  o.stations = {"CS001", "CS002", "RS106"};
  o.seconds = 20;
  o.outputDir = dir + "/out";
  return o;
}

/// Integrations of the MS that hold data (not flagged gaps).
int64_t integrationsWithData(const std::string& path, int nrBaselines) {
  const MsContents ms = readMeasurementSet(path);
  int64_t present = 0;
  for (size_t row = 0; row < ms.nrRows; row += size_t(nrBaselines)) present += !ms.flagRow[row];
  return present;
}

/// Files storage-sink left beside the MSs (its disk-space reserve).
std::string reserveFiles(const std::string& directory) {
  std::string found;
  for (const auto& entry : std::filesystem::directory_iterator(directory))
    if (entry.path().filename().string().find("storage-reserve") != std::string::npos)
      found += entry.path().string() + " ";
  return found;
}

/// A parset of the station list given (the rest as SmallObservation's).
std::string parsetWithStations(const std::string& dir, const std::string& stations) {
  SmallObservation o;
  o.outputDir = dir + "/out";
  std::string text = makeParset(o);
  const std::string key = "Observation.VirtualInstrument.stationList = [";
  const size_t at = text.find(key) + key.size();
  text.replace(at, text.find(']', at) - at, stations);
  const std::string path = dir + "/many.parset";
  std::ofstream(path) << text;
  return path;
}

/// n stations the station table does not know: XX000000, XX000001, ...
std::string unknownStations(int n) {
  std::string list;
  char name[16];
  for (int i = 0; i < n; ++i) {
    std::snprintf(name, sizeof name, "XX%06d", i);
    list += (i ? ", " : "") + std::string(name);
  }
  return list;
}

}  // namespace

class ObserveStoppingTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ObserveStoppingTest);
  CPPUNIT_TEST(testTermKeepsEveryIntegrationReceived);
  CPPUNIT_TEST(testInterruptAtTheStart);
  CPPUNIT_TEST(testHangupStopsEveryPart);
  CPPUNIT_TEST(testObserveKilledStopsEveryPart);
  CPPUNIT_TEST(testKilledStorageSinkCountsWhatIsOnDisk);
  CPPUNIT_TEST(testHugeParsetsAreRefusedQuickly);
  CPPUNIT_TEST(testTermDuringTheCheck);
  CPPUNIT_TEST(testBuffersThatDoNotFitAreRefused);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// SIGTERM a few seconds into the observation: storage-sink writes what it received and
  /// closes the MSs (exit 0), its reserve file goes; the MSs hold every integration the
  /// sink took in, and observe says it was interrupted.
  void testTermKeepsEveryIntegrationReceived() {
    TempDir dir;
    const SmallObservation o = longObservation(dir.path(), 4751);
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    waitForWritten(obs, 6, log);
    kill(observer, SIGTERM);
    const int code = waitProgram(observer);
    const std::string text = readFile(log);
    CPPUNIT_ASSERT_MESSAGE(text, code == 1);
    const std::string reason = summaryValue(obs, "reason");
    CPPUNIT_ASSERT_MESSAGE(reason, reason.find("interrupted by SIGTERM") != std::string::npos);
    const std::string codes = summaryValue(obs, "exitCodes");
    CPPUNIT_ASSERT_MESSAGE(codes, codes.find("\"storage-sink\": 0") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, std::string(), reserveFiles(o.outputDir));

    const storage::StorageStatus sink = storage::StorageStatus::read(obs + "/storage-sink.status");
    CPPUNIT_ASSERT(sink.finished);
    const int nb = nrBaselines(int(o.stations.size()));
    int64_t present = 0;
    for (const char* subband : {"000", "001"})
      present += integrationsWithData(o.outputDir + "/L4751_SAP000_SB" + subband + "_uv.MS", nb);
    std::cerr << "SIGTERM: " << present << " integrations in the MSs, storage-sink received "
              << sink.blocksReceived << " blocks (" << sink.blocksRejected << " rejected)\n";
    CPPUNIT_ASSERT(present >= 6);  // as many as written when SIGTERM came, at least
    CPPUNIT_ASSERT_EQUAL(sink.blocksReceived - sink.blocksRejected, uint64_t(present));
    CPPUNIT_ASSERT_EQUAL(uint64_t(present), sink.integrationsWritten);
  }

  /// SIGINT the moment observe has started ionproc (its log says so), five times: observe
  /// stops storage-sink and ionproc while they may still be on their way into main (exec,
  /// dynamic loading), before they take their stop signals. Each must still stop cleanly
  /// (exit 0, not death by SIGINT: 130), and the summary says the observation was
  /// interrupted before the ranks started.
  void testInterruptAtTheStart() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4755;
    o.stations = {"CS001", "CS002"};
    for (int attempt = 0; attempt < 5; ++attempt) {
      const std::string n = std::to_string(attempt);
      o.outputDir = dir.path() + "/out" + n;  // MSs of its own: one made before is refused
      const std::string parset = writeParset(dir.path() + "/obs" + n + ".parset", o);
      const std::string obs = dir.path() + "/obs" + n, log = dir.path() + "/observe" + n + ".log";
      const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
      const auto giveUp = Clock::now() + std::chrono::seconds(30);
      while (readFile(log).find("starting ionproc") == std::string::npos) {
        CPPUNIT_ASSERT_MESSAGE(readFile(log), Clock::now() < giveUp);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      kill(observer, SIGINT);
      const std::set<pid_t> parts = descendants(observer);
      const int code = waitProgram(observer);
      const std::string text = readFile(log);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 1, code);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(text, std::string("\"failed\""), summaryValue(obs, "status"));
      const std::string reason = summaryValue(obs, "reason");
      CPPUNIT_ASSERT_MESSAGE(reason, reason.find("interrupted by SIGINT") != std::string::npos);
      const std::string codes = summaryValue(obs, "exitCodes");
      std::cerr << "SIGINT at the start, attempt " << attempt << ": " << codes << "\n";
      CPPUNIT_ASSERT_MESSAGE(codes + "\n" + text,
                             codes.find("\"storage-sink\": 0") != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(codes + "\n" + text,
                             codes.find("\"ionproc\": 0") != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(text, text.find("starting correlator") == std::string::npos);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(text, std::string(), stillRunning(parts));
    }
  }

  /// SIGHUP (the terminal or ssh session gone): observe stops every part in order and
  /// writes its summary; nothing it started is left running.
  void testHangupStopsEveryPart() {
    TempDir dir;
    const SmallObservation o = longObservation(dir.path(), 4752);
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    waitForWritten(obs, 4, log);
    const std::set<pid_t> parts = descendants(observer);
    CPPUNIT_ASSERT_MESSAGE(readFile(log), parts.size() >= 5);  // sink, ionproc, mpirun, ranks, sim
    kill(observer, SIGHUP);
    const int code = waitProgram(observer);
    CPPUNIT_ASSERT_MESSAGE(readFile(log), code == 1);
    CPPUNIT_ASSERT_EQUAL(std::string("\"failed\""), summaryValue(obs, "status"));
    const std::string reason = summaryValue(obs, "reason");
    CPPUNIT_ASSERT_MESSAGE(reason, reason.find("interrupted by SIGHUP") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), std::string(), stillRunning(parts));
    CPPUNIT_ASSERT_EQUAL(std::string(), reserveFiles(o.outputDir));
  }

  /// observe killed outright: its parts get SIGTERM from the kernel (PR_SET_PDEATHSIG) and
  /// stop; storage-sink still closes its MSs and removes its reserve file.
  void testObserveKilledStopsEveryPart() {
    TempDir dir;
    const SmallObservation o = longObservation(dir.path(), 4753);
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    waitForWritten(obs, 4, log);
    const std::set<pid_t> parts = descendants(observer);
    CPPUNIT_ASSERT(parts.size() >= 5);
    kill(observer, SIGKILL);
    waitProgram(observer);
    const auto giveUp = Clock::now() + std::chrono::seconds(30);
    while (!stillRunning(parts).empty() && Clock::now() < giveUp)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CPPUNIT_ASSERT_EQUAL(std::string(), stillRunning(parts));
    CPPUNIT_ASSERT_EQUAL(std::string(), reserveFiles(o.outputDir));
    const int nb = nrBaselines(int(o.stations.size()));
    int64_t present = 0;
    for (const char* subband : {"000", "001"})
      present += integrationsWithData(o.outputDir + "/L4753_SAP000_SB" + subband + "_uv.MS", nb);
    CPPUNIT_ASSERT(present >= 4);  // as many as written when observe was killed, at least
  }

  /// storage-sink killed four times (restarted three times, then left dead): the summary's
  /// stored and dropped integrations are what the MSs on disk hold, not what ionproc sent.
  void testKilledStorageSinkCountsWhatIsOnDisk() {
    TempDir dir;
    const SmallObservation o = longObservation(dir.path(), 4754);
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    waitForWritten(obs, 2, log);
    std::set<pid_t> killed;
    const auto giveUp = Clock::now() + std::chrono::seconds(60);
    while (killed.size() < 4 && Clock::now() < giveUp) {
      for (const pid_t pid : descendants(observer))
        if (readFile("/proc/" + std::to_string(pid) + "/comm") == "storage-sink\n" &&
            !killed.count(pid)) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // let it write some
          kill(pid, SIGKILL);
          killed.insert(pid);
        }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), size_t(4), killed.size());
    const int code = waitProgram(observer);
    CPPUNIT_ASSERT_MESSAGE(readFile(log), code == 1);
    const int nb = nrBaselines(int(o.stations.size()));
    int64_t onDisk = 0;
    for (const char* subband : {"000", "001"}) {
      const std::string ms = o.outputDir + "/L4754_SAP000_SB" + subband + "_uv.MS";
      try {
        onDisk += integrationsWithData(ms, nb);
      } catch (const std::exception& e) {  // killed inside a flush: holds nothing readable
        std::cerr << ms << ": " << e.what() << "\n";
      }
    }
    const std::string stored = summaryValue(obs, "integrationsStored");
    const std::string dropped = summaryValue(obs, "integrationsDropped");
    const int64_t expected = std::stoll(summaryValue(obs, "integrationsExpected"));
    std::cerr << "storage-sink killed 4 times: " << onDisk
              << " integrations on disk; summary: " << stored << " stored, " << dropped
              << " dropped of " << expected << "\n";
    CPPUNIT_ASSERT_EQUAL(std::to_string(onDisk), stored);
    CPPUNIT_ASSERT_EQUAL(std::to_string(expected - onDisk), dropped);
  }

  /// 10^6 stations (a 9 MB line) and 60 000 (under the line limit, over the station
  /// limit): refused in well under 2 s each, naming the line or the key.
  void testHugeParsetsAreRefusedQuickly() {
    TempDir dir;
    for (const int n : {1'000'000, 60'000}) {
      const std::string parset = parsetWithStations(dir.path(), unknownStations(n));
      const std::string log = dir.path() + "/observe.log";
      const auto started = Clock::now();
      const int code = runProgram(observeCommand({parset, "--now", "--check-only"}), log);
      const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
      const std::string text = readFile(log);
      std::cerr << n << " stations: refused in " << seconds << " s\n";
      CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 1, code);
      CPPUNIT_ASSERT_MESSAGE(text, seconds < 2);
      const std::string expected =
          n == 60'000 ? "60000 entries, more than the 1024" : "longer than 1048576 bytes";
      CPPUNIT_ASSERT_MESSAGE(text, text.find(expected) != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(
          text, text.find("Observation.VirtualInstrument.stationList") != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(text, text.size() < 100'000);  // not a line per station
    }
  }

  /// A parset of 3 million keys takes seconds to check: SIGTERM ends observe within 1 s.
  void testTermDuringTheCheck() {
    TempDir dir;
    SmallObservation o;
    o.outputDir = dir.path() + "/out";
    const std::string parset = dir.path() + "/big.parset";
    {
      std::ofstream file(parset);
      file << makeParset(o);
      for (int i = 0; i < 3'000'000; ++i) file << "Unused.key" << i << " = " << i << "\n";
    }
    const std::string log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--check-only"}), log);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    const auto signalled = Clock::now();
    kill(observer, SIGTERM);
    const int code = waitProgram(observer);
    const double seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
    const std::string text = readFile(log);
    std::cerr << "SIGTERM during the check: observe ended " << seconds << " s later\n";
    CPPUNIT_ASSERT_MESSAGE(text, text.find("interrupted by SIGTERM") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 1, code);
    CPPUNIT_ASSERT_MESSAGE(text, seconds < 1);
  }

  /// 38 stations, 60 subbands and 60 s of station buffer: ionproc's buffers alone would
  /// take about 110 GB. Refused before anything starts, naming the keys that set the size.
  void testBuffersThatDoNotFitAreRefused() {
    TempDir dir;
    SmallObservation o;
    o.stations = {"CS001", "CS002", "CS003", "CS004", "CS005", "CS006", "CS007", "CS011",
                  "CS013", "CS017", "CS021", "CS024", "CS026", "CS028", "CS030", "CS031",
                  "CS032", "CS101", "CS103", "CS201", "CS301", "CS302", "CS401", "CS501",
                  "RS106", "RS205", "RS208", "RS210", "RS305", "RS306", "RS307", "RS310",
                  "RS406", "RS407", "RS409", "RS503", "RS508", "RS509"};  // the table's 38
    o.subbands = "[300..359]";
    o.outputDir = dir.path() + "/out";
    o.extra = "OLAP.nrSecondsOfBuffer = 60\n";
    const std::string parset = writeParset(dir.path() + "/big.parset", o);
    const std::string log = dir.path() + "/observe.log";
    const int code =
        runProgram(observeCommand({parset, "--now", "--dir", dir.path() + "/obs"}), log);
    const std::string text = readFile(log);
    std::cerr << text.substr(
                     text.find("would need") == std::string::npos ? 0 : text.find("would need"),
                     600)
              << "\n";
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 1, code);
    for (const char* key :
         {"would need", "ionproc's station buffers", "Observation.VirtualInstrument.stationList",
          "Observation.Beam[*].subbandList", "OLAP.nrSecondsOfBuffer"})
      CPPUNIT_ASSERT_MESSAGE(std::string(key) + " in " + text, text.find(key) != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("nothing started") != std::string::npos);
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path() + "/obs"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ObserveStoppingTest);

}  // namespace rtcp::observe::test
