// storage-sink killed in the middle of a live observation: observe starts it again, the
// new one reopens the MSs and appends, ionproc sends what it kept meanwhile (its queue and
// spool) and again what the killed sink had not yet said was on its disk
// (taken in, not yet flushed into the MSs). Nothing is lost; every integration is in its
// MS once. And the disk of the MSs filling up: observe fails with the reason, naming the
// directory; the MSs are partial, open in casacore and hold what the summary says.
#include <cppunit/extensions/HelperMacros.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <sstream>
#include <thread>

#include "BeamFormedChecks.h"
#include "BeamFormedHoldings.h"
#include "DiskSpace.h"
#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "SmallFileSystem.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "rtcp/Baselines.h"
#include "rtcp/Integrations.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StorageStatus.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

namespace {

/// The child of `parent` running `program` (by its /proc comm), or -1.
pid_t childNamed(pid_t parent, const std::string& program) {
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string stat = readFile(entry.path().string() + "/stat");
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) != 2) continue;
    std::string comm = readFile(entry.path().string() + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (ppid == parent && comm == program) return pid_t(std::stoi(name));
  }
  return -1;
}

/// Runs observe on `parset` into `obs` (its log: `log`), kills its storage-sink (SIGKILL)
/// once `wroteEnough` says of its status that it wrote enough (within 60 s), and asserts
/// that observe succeeded all the same, warning that the sink died.
void observeKillingTheSink(const std::string& parset, const std::string& obs,
                           const std::string& log,
                           const std::function<bool(const storage::StorageStatus&)>& wroteEnough) {
  const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
  const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    const std::string status = obs + "/storage-sink.status";
    if (std::filesystem::exists(status) && wroteEnough(storage::StorageStatus::read(status))) break;
    CPPUNIT_ASSERT_MESSAGE(readFile(log), std::chrono::steady_clock::now() < giveUp);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const pid_t sink = childNamed(observer, "storage-sink");
  CPPUNIT_ASSERT_MESSAGE(readFile(log), sink > 0);
  kill(sink, SIGKILL);
  const int code = waitProgram(observer);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), 0, code);
  const std::string warnings = summaryValue(obs, "warnings");
  CPPUNIT_ASSERT_MESSAGE(warnings,
                         warnings.find("storage-sink died (SIGKILL") != std::string::npos);
}

}  // namespace

class ObserveStorageFaultsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ObserveStorageFaultsTest);
  CPPUNIT_TEST(testKilledStorageSinkIsRestarted);
  CPPUNIT_TEST(testKilledStorageSinkKeepsBeamFormedFiles);
  CPPUNIT_TEST(testStoppedStorageSinkLosesNothing);
  CPPUNIT_TEST(testDiskFullFailsTheObservation);
  CPPUNIT_TEST(testReadOnlyOutputDirectory);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testKilledStorageSinkIsRestarted() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4741;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 10;
    o.outputDir = dir.path() + "/out";
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    // Killed once it wrote a few integrations.
    observeKillingTheSink(parset, obs, log, [](const storage::StorageStatus& status) {
      return status.integrationsWritten >= 6;
    });
    CPPUNIT_ASSERT(std::filesystem::exists(obs + "/storage-sink.restart1.log"));
    const std::string codes = summaryValue(obs, "exitCodes");
    CPPUNIT_ASSERT_MESSAGE(codes, codes.find("\"storage-sink\": 0") != std::string::npos);

    // Every MS: the whole grid once (nothing appended twice), each integration the
    // correlator's or a flagged gap; the gaps are what the summary says was dropped.
    const ObservationSettings settings = ObservationSettings::fromFile(obs + "/observation.parset");
    const int64_t nrIntegrations = settings.nrIntegrations();
    const int nb = nrBaselines(int(o.stations.size()));
    int64_t gaps = 0, present = 0;
    for (const char* subband : {"000", "001"}) {
      const MsContents ms =
          readMeasurementSet(o.outputDir + "/L4741_SAP000_SB" + subband + "_uv.MS");
      CPPUNIT_ASSERT_EQUAL(size_t(nrIntegrations * nb), ms.nrRows);
      for (int64_t i = 0; i < nrIntegrations; ++i) {
        int flaggedRows = 0;
        for (int b = 0; b < nb; ++b) flaggedRows += ms.flagRow[size_t(i * nb + b)];
        CPPUNIT_ASSERT(flaggedRows == 0 || flaggedRows == nb);
        CPPUNIT_ASSERT(i == 0 || ms.time[size_t(i * nb)] > ms.time[size_t((i - 1) * nb)]);
        (flaggedRows ? gaps : present) += 1;
      }
    }
    std::cerr << "storage-sink killed and restarted: " << present << " integrations written, "
              << gaps << " flagged; summary: integrationsDropped "
              << summaryValue(obs, "integrationsDropped") << "\n";
    CPPUNIT_ASSERT_EQUAL(std::to_string(gaps), summaryValue(obs, "integrationsDropped"));
    CPPUNIT_ASSERT_EQUAL(int64_t(0), gaps);
    CPPUNIT_ASSERT_EQUAL(2 * nrIntegrations, present);
  }

  /// The storage-sink writing beam-formed files (a coherent TAB and an incoherent one,
  /// Stokes I) killed after a few blocks: the restarted one continues the files, ionproc
  /// sends it what it kept (queued, spooled, and what the killed one had not said was in
  /// its files). Read back with h5py: every block of both files, from before the kill and
  /// after it, with its valid fractions and the same power; the summary's counts are what
  /// the files hold.
  void testKilledStorageSinkKeepsBeamFormedFiles() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4744;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 5;
    o.steps = 3072;  // blocks of 16 x 3072 samples, 0.25 s
    o.outputDir = dir.path() + "/out";
    const std::string bf = "localhost:" + dir.path() + "/bf";
    o.extra = twoTabKeys(o, {bf, "I", 4}, {bf, "I", 4});
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    // Killed once it wrote 4 blocks of each file (a second of data).
    uint64_t writtenBeforeTheKill = 0;
    observeKillingTheSink(parset, obs, log, [&](const storage::StorageStatus& status) {
      writtenBeforeTheKill = status.beamFormedBlocksWritten;
      return writtenBeforeTheKill >= 8;
    });
    const std::string restarted = readFile(obs + "/storage-sink.restart1.log");
    CPPUNIT_ASSERT_MESSAGE(restarted, restarted.find("reopened, holding") != std::string::npos);
    const std::string ionprocLog = readFile(obs + "/ionproc.log");
    const size_t sent = ionprocLog.find("beam-formed: ");
    CPPUNIT_ASSERT_MESSAGE(ionprocLog, sent != std::string::npos);
    std::cerr << "ionproc: " << ionprocLog.substr(sent, ionprocLog.find('\n', sent) - sent) << "\n";

    // Each file, block by block, from h5py; the summary's figures are what they hold.
    const ObservationSettings settings = ObservationSettings::fromFile(obs + "/observation.parset");
    const int64_t blocks = nrProcessedBlocks(settings);
    const std::string listed = summaryValue(obs, "beamFormedFiles");
    for (int tab = 0; tab < 2; ++tab) {
      const storage::BeamFormedFileLayout layout(settings, tab, dir.path() + "/bf");
      const std::string name = std::filesystem::path(layout.h5Path).filename();
      const std::string out = dir.path() + "/" + name + ".blocks.txt";
      const std::string command = "/usr/bin/python3 " + rtcp::test::sourceDir() +
                                  "/observe/test/check_beamformed_blocks.py " + dir.path() +
                                  "/bf " + name + " " + std::to_string(layout.samplesPerBlock) +
                                  " " + std::to_string(layout.rowShift) + " " +
                                  std::to_string(blocks) + " > " + out + " 2>&1";
      CPPUNIT_ASSERT_EQUAL_MESSAGE(command + "\n" + readFile(out), 0, std::system(command.c_str()));
      std::istringstream lines(readFile(out));
      std::string word;
      int64_t rows = 0, held = 0, subbands = 0, heldBlocks = 0, lost = 0;
      lines >> word >> rows >> word >> subbands;
      CPPUNIT_ASSERT_EQUAL(blocks * layout.samplesPerBlock - layout.rowShift, rows);
      std::vector<double> means;
      for (int64_t b = 0; b < blocks; ++b) {
        double mean = 0;
        int64_t number = -1;
        lines >> word >> number >> word >> held >> word >> mean;
        CPPUNIT_ASSERT_EQUAL(b, number);
        heldBlocks += held > 0;
        lost += subbands - held;
        means.push_back(mean);
      }
      std::cerr << name << ": " << heldBlocks << " of " << blocks << " blocks, " << lost
                << " subband-blocks lost; storage-sink killed after " << writtenBeforeTheKill
                << " blocks written\n"
                << readFile(out);
      // Every block, before the kill and after it, whole, and the sky's power in each.
      CPPUNIT_ASSERT_EQUAL(blocks, heldBlocks);
      CPPUNIT_ASSERT_EQUAL(int64_t(0), lost);
      std::vector<double> sorted = means;
      std::sort(sorted.begin(), sorted.end());
      const double median = sorted[sorted.size() / 2];
      CPPUNIT_ASSERT(median > 0);
      for (int64_t b = 1; b < blocks; ++b)  // block 0: the filter banks' start-up
        CPPUNIT_ASSERT_MESSAGE(readFile(out), std::abs(means[size_t(b)] / median - 1) < 0.05);
      // The summary counts what the file holds.
      const size_t at = listed.find("\"" + layout.h5Path + "\"");
      CPPUNIT_ASSERT_MESSAGE(listed, at != std::string::npos);
      const std::string figures = listed.substr(at, listed.find('}', at) - at);
      for (const std::string& expected : {"\"blocksWritten\": " + std::to_string(heldBlocks),
                                          "\"subbandBlocksLost\": " + std::to_string(lost)})
        CPPUNIT_ASSERT_MESSAGE(figures, figures.find(expected) != std::string::npos);
    }
  }

  /// storage-sink stopped (SIGSTOP) for 5 s: ionproc's queue overflows into its spool,
  /// which it sends after SIGCONT; nothing is lost (before the spool: 18 integrations).
  void testStoppedStorageSinkLosesNothing() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4743;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 10;
    // 1024 channels, 48 spectra: 0.25 s integrations of 220 kB blocks; twelve subbands
    // make 53 MB in 5 s, more than the socket buffers and ionproc's queue (24) hold. (TCP
    // may grow the sink's receive buffer to net.ipv4.tcp_rmem's 32 MB, and its sender's
    // to 4 MB: six subbands, 26 MB, once all went into them under ctest -j2.)
    o.channels = 1024;
    o.steps = 48;
    o.subbands = "[300..311]";
    o.outputDir = dir.path() + "/out";
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      const std::string status = obs + "/storage-sink.status";
      if (std::filesystem::exists(status) &&
          storage::StorageStatus::read(status).integrationsWritten >= 4)
        break;
      CPPUNIT_ASSERT_MESSAGE(readFile(log), std::chrono::steady_clock::now() < giveUp);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const pid_t sink = childNamed(observer, "storage-sink");
    CPPUNIT_ASSERT(sink > 0);
    kill(sink, SIGSTOP);
    std::this_thread::sleep_for(std::chrono::seconds(5));
    kill(sink, SIGCONT);
    const int code = waitProgram(observer);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), 0, code);
    const std::string ionprocLog = readFile(obs + "/ionproc.log");
    CPPUNIT_ASSERT_MESSAGE(ionprocLog, ionprocLog.find("spooling to " + obs) != std::string::npos);
    const size_t sent = ionprocLog.rfind("storage: ", ionprocLog.find(" integrations sent"));
    CPPUNIT_ASSERT(sent != std::string::npos);
    std::cerr << "storage-sink stopped 5 s: summary: integrationsDropped "
              << summaryValue(obs, "integrationsDropped") << " of "
              << summaryValue(obs, "integrationsExpected")
              << "; ionproc: " << ionprocLog.substr(sent, ionprocLog.find('\n', sent) - sent)
              << "\n";
    CPPUNIT_ASSERT_EQUAL(std::string("0"), summaryValue(obs, "integrationsDropped"));
    const int64_t nrIntegrations =
        ObservationSettings::fromFile(obs + "/observation.parset").nrIntegrations();
    for (const char* subband :
         {"000", "001", "002", "003", "004", "005", "006", "007", "008", "009", "010", "011"}) {
      const MsContents ms =
          readMeasurementSet(o.outputDir + "/L4743_SAP000_SB" + subband + "_uv.MS");
      CPPUNIT_ASSERT_EQUAL(size_t(nrIntegrations * nrBaselines(3)), ms.nrRows);
      for (size_t row = 0; row < ms.nrRows; ++row) CPPUNIT_ASSERT(!ms.flagRow[row]);
    }
  }

  void testDiskFullFailsTheObservation() {
    TempDir dir;
    rtcp::test::SmallFileSystem disk(dir.path() + "/disk", 96 << 20);
    SmallObservation o;
    o.obsId = 4742;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 10;
    o.outputDir = disk.path() + "/out";
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      const std::string status = obs + "/storage-sink.status";
      if (std::filesystem::exists(status) && storage::StorageStatus::read(status).listening) break;
      CPPUNIT_ASSERT_MESSAGE(readFile(log), std::chrono::steady_clock::now() < giveUp);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    // Room for the first tile of both MSs and a few integrations each.
    const uint64_t tile = storage::msTileBytes(3, o.channels);
    const uint64_t integration = storage::msIntegrationBytes(3, o.channels);
    disk.fillLeaving(disk.path() + "/filler", 2 * tile + 8 * integration);
    const int code = waitProgram(observer);
    const std::string text = readFile(log);
    CPPUNIT_ASSERT_MESSAGE(text, code != 0 && code < 128);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, std::string("\"failed\""), summaryValue(obs, "status"));
    const std::string reason = summaryValue(obs, "reason");
    CPPUNIT_ASSERT_MESSAGE(reason, reason.find("storage-sink") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        reason, reason.find("the file system of " + o.outputDir + " is full") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string("[]"), summaryValue(obs, "measurementSets"));
    const std::string partial = summaryValue(obs, "partialMeasurementSets");
    std::filesystem::remove(disk.path() + "/filler");
    int64_t present = 0;
    for (const char* subband : {"000", "001"}) {
      const std::string path = o.outputDir + "/L4742_SAP000_SB" + subband + "_uv.MS";
      CPPUNIT_ASSERT_MESSAGE(partial, partial.find(path) != std::string::npos);
      const MsContents ms = readMeasurementSet(path);
      const int nb = nrBaselines(3);
      CPPUNIT_ASSERT_EQUAL(size_t(0), ms.nrRows % size_t(nb));
      for (size_t i = 0; i < ms.nrRows / size_t(nb); ++i) present += !ms.flagRow[i * size_t(nb)];
    }
    const int64_t expected = std::stoll(summaryValue(obs, "integrationsExpected"));
    std::cerr << "disk full: " << present << " of " << expected
              << " integrations in the MSs; summary: integrationsDropped "
              << summaryValue(obs, "integrationsDropped") << "; reason " << reason << "\n";
    CPPUNIT_ASSERT(present > 0 && present < expected);
    CPPUNIT_ASSERT_EQUAL(std::to_string(expected - present),
                         summaryValue(obs, "integrationsDropped"));
  }

  /// The MSs' directory on a read-only file system (read-only even for root): the check
  /// refuses the observation naming the key and the directory; nothing is started, so no
  /// summary can claim anything stored or dropped.
  void testReadOnlyOutputDirectory() {
    TempDir dir;
    rtcp::test::SmallFileSystem disk(dir.path() + "/disk", 16 << 20);
    std::filesystem::create_directories(disk.path() + "/out");
    disk.makeReadOnly();
    SmallObservation o;
    o.obsId = 4744;
    o.stations = {"CS001", "CS002"};
    o.seconds = 3;
    o.outputDir = disk.path() + "/out";
    const std::string parset = writeParset(dir.path() + "/obs.parset", o);
    const std::string obs = dir.path() + "/obs", log = dir.path() + "/observe.log";
    const int code = runProgram(observeCommand({parset, "--now", "--dir", obs}), log);
    const std::string text = readFile(log);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 1, code);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("Output_Correlated.locations': output directory '" +
                                           o.outputDir + "' is not writable") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("nothing started") != std::string::npos);
    CPPUNIT_ASSERT(!std::filesystem::exists(o.outputDir + "/L4744_SAP000_SB000_uv.MS"));
    CPPUNIT_ASSERT(!std::filesystem::exists(obs + "/summary.json"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ObserveStorageFaultsTest);

}  // namespace rtcp::observe::test
