// Station data kept (observe --record-input, rtcp-trigger): a live observation fed by
// station-sim over UDP and recorded by ionproc replays through the same chain
// (DIR/replay.parset) to the same MS rows: times, visibilities, weights and flags equal,
// bit for bit (the chain is deterministic for the same samples); a dump asked with
// rtcp-trigger during a live observation replays (its dump.parset) to the live rows of
// its integrations bit for bit and to the live beam-formed samples (to float rounding)
// and valid fractions (bit for bit: the beam former's state rebuilt over the dump's
// lead-in), a trigger without the secret is refused, a window partly
// gone from the buffer is dumped as far as it is there, with the missing part said, and
// the summary lists the recording and the dumps with their windows, sizes and losses; a
// disk that fills during a recording costs the recording, counted, not the observation.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "BeamFormedChecks.h"
#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "SmallFileSystem.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "rtcp/Baselines.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StatusFile.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

namespace {

/// The MSs of an observation directory, in subband order.
std::vector<MsContents> readOutputs(const std::string& obs) {
  const ObservationSettings s = ObservationSettings::fromFile(obs + "/observation.parset");
  std::vector<MsContents> result;
  for (size_t i = 0; i < s.correlatedOutput.filenames.size(); ++i)
    result.push_back(readMeasurementSet(s.correlatedOutput.directories[i] + "/" +
                                        s.correlatedOutput.filenames[i]));
  return result;
}

/// Rows [firstRow, +nrRows) of a and rows [0, nrRows) of b: the same times, baselines,
/// weights and flags, and visibilities that differ by at most `tolerance` times the
/// largest |visibility| of a's rows (0: bit for bit); "" or what differs.
std::string compareRows(const MsContents& a, size_t firstRow, const MsContents& b, size_t nrRows,
                        double tolerance = 0) {
  if (firstRow + nrRows > a.nrRows || nrRows > b.nrRows) return "too few rows";
  const size_t perRow = a.data.size() / a.nrRows;
  if (perRow != b.data.size() / b.nrRows) return "rows of another shape";
  double scale = 0;
  for (size_t i = firstRow * perRow; i < (firstRow + nrRows) * perRow; ++i)
    scale = std::max(scale, double(std::abs(a.data[i])));
  for (size_t r = 0; r < nrRows; ++r) {
    if (a.time[firstRow + r] != b.time[r] || a.antenna1[firstRow + r] != b.antenna1[r] ||
        a.antenna2[firstRow + r] != b.antenna2[r])
      return "row " + std::to_string(r) + ": time or baseline differ";
    for (size_t i = 0; i < perRow; ++i) {
      const size_t x = (firstRow + r) * perRow + i, y = r * perRow + i;
      const double difference =
          std::abs(std::complex<double>(a.data[x]) - std::complex<double>(b.data[y]));
      if (difference > tolerance * scale || a.weightSpectrum[x] != b.weightSpectrum[y] ||
          a.flag[x] != b.flag[y]) {
        std::ostringstream out;
        out << "row " << r << " value " << i << ": " << a.data[x] << " weight "
            << a.weightSpectrum[x] << " vs " << b.data[y] << " weight " << b.weightSpectrum[y]
            << " (largest |visibility| " << scale << ")";
        return out.str();
      }
    }
  }
  return "";
}

}  // namespace

class StationDataTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationDataTest);
  CPPUNIT_TEST(testRecordedInputReplaysToTheSameRows);
  CPPUNIT_TEST(testTriggersDuringAnObservation);
  CPPUNIT_TEST(testFullDiskDuringRecording);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRecordedInputReplaysToTheSameRows() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4731;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 3;
    o.outputDir = dir.path() + "/live";
    o.extra = "OLAP.maxNetworkDelay = 1\n";  // nothing late on a loaded machine
    const std::string recordings = dir.path() + "/recorded";
    observeSuccessfully(writeParset(dir.path() + "/live.parset", o), dir.path() + "/live-obs",
                        {"--now", "--record-input", recordings}, dir.path() + "/live.log");
    const ObservationSummary live =
        ObservationSummary::fromFile(dir.path() + "/live-obs/summary.json");
    // The summary's recording: the whole observation, its stations and subbands, its size.
    const StationDataSummary& recorded = live.recording;
    CPPUNIT_ASSERT_EQUAL(recordings, recorded.directory);
    CPPUNIT_ASSERT_EQUAL(std::string("complete"), recorded.status);
    CPPUNIT_ASSERT_EQUAL(live.start, recorded.from);
    CPPUNIT_ASSERT_EQUAL(live.stop, recorded.to);
    CPPUNIT_ASSERT_EQUAL(size_t(3), recorded.stations.size());
    CPPUNIT_ASSERT_EQUAL(2, recorded.nrSubbands);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), recorded.packetsNotRecorded);
    uint64_t onDisk = 0, packets = 0;
    for (const auto& entry : std::filesystem::directory_iterator(recordings))
      if (entry.path().extension() == ".rsp") onDisk += entry.file_size();
    for (const StationSummary& st : live.stations) packets += st.packetsRecorded;
    CPPUNIT_ASSERT_EQUAL(onDisk, recorded.bytes);
    CPPUNIT_ASSERT_EQUAL(packets, recorded.packets);
    CPPUNIT_ASSERT(recorded.bytes > 0 && recorded.bytes % recorded.packets == 0);
    for (const StationSummary& st : live.stations) {
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsNotRecorded);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLate);
      // Every valid packet stored, inside the observation and in its margins, is recorded.
      CPPUNIT_ASSERT_EQUAL_MESSAGE(
          st.name, st.packetsReceived + st.packetsBeforeWindow + st.packetsAfterWindow,
          st.packetsRecorded);
      CPPUNIT_ASSERT(std::filesystem::exists(recordings + "/" + st.name + "-0.rsp"));
    }

    observeSuccessfully(recordings + "/replay.parset", dir.path() + "/replay-obs", {},
                        dir.path() + "/replay.log");
    const std::vector<MsContents> a = readOutputs(dir.path() + "/live-obs");
    const std::vector<MsContents> b = readOutputs(dir.path() + "/replay-obs");
    CPPUNIT_ASSERT_EQUAL(size_t(2), a.size());
    CPPUNIT_ASSERT_EQUAL(a.size(), b.size());
    for (size_t sb = 0; sb < a.size(); ++sb) {
      CPPUNIT_ASSERT_EQUAL(a[sb].nrRows, b[sb].nrRows);
      const std::string problem = compareRows(a[sb], 0, b[sb], a[sb].nrRows);
      CPPUNIT_ASSERT_MESSAGE("subband " + std::to_string(sb) + ": " + problem, problem.empty());
    }
  }

  /// One live observation (9 s of 1.007 s blocks, buffers of 4 s; correlated, and
  /// beam-formed: a coherent TAB of Stokes I dedispersed at DM 26.76, incoherent Stokes I),
  /// three triggers: without the secret (refused, nothing written); 3.1 s .. 4.5 s after the
  /// start, asked at 3 s (written as the rest arrives: complete, blocks 3 and 4 after a
  /// lead-in of blocks 1 and 2 for the beam former; its replay gives the live rows of those
  /// integrations bit for bit, and the live beam-formed valid fractions bit for bit and
  /// samples to float rounding); 1 s ..
  /// 3 s asked at 6.6 s (the buffer holds 2.6 s on: partial, the gone part said). The live
  /// observation loses nothing to them: no packet late or lost, no block dropped.
  void testTriggersDuringAnObservation() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4732;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 9;
    o.steps = 12288;  // blocks the beam former's delay-compensation channels divide
    o.outputDir = dir.path() + "/live";
    const std::string bf = "localhost:" + dir.path() + "/bf";
    o.extra = "OLAP.nrSecondsOfBuffer = 4\nOLAP.maxNetworkDelay = 0.5\n" +
              twoTabKeys(o, {bf, "I", 4}, {bf, "I", 16}, 26.76);
    const std::string obs = dir.path() + "/live-obs";
    const pid_t observer = startProgram(
        observeCommand({writeParset(dir.path() + "/live.parset", o), "--now", "--dir", obs}),
        dir.path() + "/live.log");
    const double start = waitForTriggerPort(obs);
    const std::string trigger = executable("ionproc/rtcp-trigger");
    auto utc = [&](double seconds) { return formatUtc(start + seconds); };

    const std::string wrongSecret = dir.path() + "/wrong.secret";
    ObservationSecret::generate().writeFile(wrongSecret);
    sleepUntil(start + 2.5);
    const int refused = runProgram({trigger, obs, "--from", utc(1), "--to", utc(2), "--out",
                                    dir.path() + "/refused", "--secret-file", wrongSecret},
                                   dir.path() + "/refused.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/refused.log"), 2, refused);
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path() + "/refused"));

    sleepUntil(start + 3);
    const int complete = runProgram({trigger, obs, "--from", utc(3.1), "--to", utc(4.5)},
                                    dir.path() + "/complete.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/complete.log"), 0, complete);

    sleepUntil(start + 6.6);  // one station only: its recordings alone, its name alone
    const std::string partialDir = obs + "/dumps/partial";
    const int partial = runProgram({trigger, obs, "--from", utc(1), "--to", utc(3), "--stations",
                                    "CS002", "--out", partialDir},
                                   dir.path() + "/partial.log");
    const std::string partialLog = readFile(dir.path() + "/partial.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(partialLog, 1, partial);
    CPPUNIT_ASSERT_MESSAGE(partialLog,
                           partialLog.find("gone from the buffer") != std::string::npos);
    const ObservationSettings ps = ObservationSettings::fromFile(partialDir + "/dump.parset");
    CPPUNIT_ASSERT_EQUAL(1, ps.nrStations());
    const std::string cs002 = ps.stations[0].name;
    CPPUNIT_ASSERT_MESSAGE(cs002, cs002.starts_with("CS002"));
    for (const auto& entry : std::filesystem::directory_iterator(partialDir))
      if (entry.path().extension() == ".rsp")
        CPPUNIT_ASSERT_MESSAGE(entry.path().string(),
                               entry.path().filename().string().starts_with(cs002 + "-"));
    CPPUNIT_ASSERT(std::filesystem::exists(partialDir + "/" + cs002 + "-0.rsp"));

    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/live.log"), 0, waitProgram(observer));
    const ObservationSummary live = ObservationSummary::fromFile(obs + "/summary.json");
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), live.blocksDropped);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), live.integrationsDropped);
    for (const StationSummary& st : live.stations) {
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLate);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLost);
    }
    // The summary's dumps, by directory: the complete one (OBSDIR/dumps/FROM) and the
    // partial one, each with its window, stations, subbands, size and what it lacks.
    CPPUNIT_ASSERT_EQUAL(size_t(2), live.dumps.size());
    const StationDataSummary& whole = live.dumps[0];
    const StationDataSummary& part = live.dumps[1];
    CPPUNIT_ASSERT_EQUAL(partialDir, part.directory);
    CPPUNIT_ASSERT_EQUAL(std::string("complete"), whole.status);
    CPPUNIT_ASSERT_EQUAL(size_t(3), whole.stations.size());
    CPPUNIT_ASSERT_EQUAL(2, whole.nrSubbands);
    CPPUNIT_ASSERT(whole.missing.empty() && whole.packets > 0 && whole.bytes > 0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), whole.packetsNotRecorded);
    CPPUNIT_ASSERT_EQUAL(std::string("partial"), part.status);
    CPPUNIT_ASSERT(part.stations == std::vector<std::string>{cs002});
    CPPUNIT_ASSERT(!part.missing.empty());
    for (const std::string& line : part.missing)
      CPPUNIT_ASSERT_MESSAGE(line, line.starts_with(cs002 + " stream "));
    CPPUNIT_ASSERT_MESSAGE(part.missing[0],
                           part.missing[0].find("gone from the buffer") != std::string::npos);
    const std::string text = readFile(obs + "/summary.txt");
    CPPUNIT_ASSERT_MESSAGE(
        text, text.find("dump          " + partialDir + ": partial") != std::string::npos);
    const std::string ionprocLog = readFile(obs + "/ionproc.log");
    CPPUNIT_ASSERT_MESSAGE(ionprocLog,
                           ionprocLog.find("trigger: connection from") != std::string::npos);

    // The complete dump replayed: the live rows of its integrations, bit for bit (times,
    // visibilities, weights, flags). The chain is deterministic for the same samples and
    // the same delays, and the delays are a function of time alone (DirectionConverter.h:
    // casacore's engines, first asked at the dump's first block instead of the
    // observation's start, gave delays 1e-15 s apart, visibilities 1e-6 apart).
    const std::string dump = whole.directory;
    observeSuccessfully(dump + "/dump.parset", dir.path() + "/dump-obs", {},
                        dir.path() + "/dump.log");
    const ObservationSettings ls = ObservationSettings::fromFile(obs + "/observation.parset");
    const ObservationSettings ds = ObservationSettings::fromFile(dump + "/dump.parset");
    const int64_t offset = ds.startSample() - ls.startSample();
    CPPUNIT_ASSERT_EQUAL(int64_t(0), offset % ls.samplesPerBlock());
    const int64_t firstBlock = offset / ls.samplesPerBlock();
    CPPUNIT_ASSERT_EQUAL(int64_t(3), firstBlock);     // the block holding 3.1 s
    CPPUNIT_ASSERT_EQUAL(int64_t(2), ds.nrBlocks());  // up to 4.5 s: blocks 3 and 4
    const SampleClock clock(ls.clockMHz);             // the summary's window: those blocks
    CPPUNIT_ASSERT_EQUAL(formatUtc(clock.unixTime(ls.blockStartSample(3))), whole.from);
    CPPUNIT_ASSERT_EQUAL(formatUtc(clock.unixTime(ls.blockStartSample(5))), whole.to);
    // The beam former's lead-in: the final filter banks' history (one block) and the
    // dedispersion's overlap (one more), blocks 1 and 2, dumped and run, not written.
    CPPUNIT_ASSERT_EQUAL(int64_t(2), beamFormerLeadInBlocks(ls));
    CPPUNIT_ASSERT_EQUAL(2, ds.beamFormed.leadInBlocks);
    const std::vector<MsContents> a = readOutputs(obs);
    const std::vector<MsContents> b = readOutputs(dir.path() + "/dump-obs");
    CPPUNIT_ASSERT_EQUAL(a.size(), b.size());
    const size_t baselines = a[0].nrRows / size_t(ls.nrIntegrations());
    for (size_t sb = 0; sb < a.size(); ++sb) {
      CPPUNIT_ASSERT_EQUAL(size_t(2) * baselines, b[sb].nrRows);
      const std::string problem =
          compareRows(a[sb], size_t(firstBlock) * baselines, b[sb], b[sb].nrRows);
      CPPUNIT_ASSERT_MESSAGE("subband " + std::to_string(sb) + ": " + problem, problem.empty());
    }
    // Its beam-formed files: the window's valid fractions of the live files bit for bit and
    // their samples to float rounding (h5py). The lead-in rebuilt the state the live beam
    // former had at block 3 (a copy of its input: without it the first 15 spectra are
    // flagged and the dedispersed TAB differs by its missing overlap), and the sums are
    // taken in a fixed order; but each rank's FFTW_MEASURE plans choose the FFTs'
    // algorithms by timing them, so the replay's ranks may round the FFTs otherwise: the
    // dedispersed TAB's samples came out up to 3.8e-7 of the largest apart, the incoherent
    // Stokes 2.4e-7 (three runs, 28 Nov 2026; both equal to the bit with FFTW_ESTIMATE's plans, the
    // same in every process).
    std::string command = "/usr/bin/python3 " + rtcp::test::sourceDir() +
                          "/observe/test/compare_beamformed.py " + dir.path() + "/bf " + dump +
                          "/ms 1e-5";
    for (const BeamFormedFile& file : ls.beamFormed.files) {
      const TabSettings& tab = ls.beamFormed.saps[size_t(file.sap)].tabs[size_t(file.tab)];
      const int perBlock = ls.beamFormed.stokes(tab).outputSamplesPerBlock(ls.samplesPerBlock());
      command += " " + file.filename + ":" + std::to_string(firstBlock * perBlock);
    }
    const std::string compared = dir.path() + "/compared.txt";
    const int status = std::system((command + " > " + compared + " 2>&1").c_str());
    CPPUNIT_ASSERT_MESSAGE(command + "\n" + readFile(compared), status == 0);
    CPPUNIT_ASSERT_EQUAL(size_t(2), ls.beamFormed.files.size());
    std::cout << readFile(compared);
  }

  /// The recording's disk (a tmpfs of 4 MiB) fills within a second of a 3 s live
  /// observation, the bound on disk use set above it: every valid packet is recorded or
  /// counted as not recorded, in ionproc's status and in the summary (a warning, the
  /// recording partial); the recordings hold whole packets; the observation is unharmed:
  /// status ok, no packet late or lost, no block dropped, its MSs complete and unflagged.
  void testFullDiskDuringRecording() {
    TempDir dir;
    rtcp::test::SmallFileSystem disk(dir.path() + "/disk", 4 << 20);  // before any thread
    SmallObservation o;
    o.obsId = 4733;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 3;
    o.outputDir = dir.path() + "/live";
    o.extra = "OLAP.maxNetworkDelay = 1\nRtcp.recordInput.maxGB = 1\n";
    const std::string recordings = disk.path() + "/recorded", obs = dir.path() + "/live-obs";
    observeSuccessfully(writeParset(dir.path() + "/live.parset", o), obs,
                        {"--now", "--record-input", recordings}, dir.path() + "/live.log");
    const ObservationSummary live = ObservationSummary::fromFile(obs + "/summary.json");
    CPPUNIT_ASSERT_EQUAL(std::string("ok"), std::string(toString(live.status())));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), live.blocksDropped);
    const ion::IonStatus status = ion::IonStatus::read(obs + "/ionproc.status");
    uint64_t notRecorded = 0;
    for (size_t i = 0; i < live.stations.size(); ++i) {
      const StationSummary& st = live.stations[i];
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLate);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLost);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(
          st.name, st.packetsReceived + st.packetsBeforeWindow + st.packetsAfterWindow,
          st.packetsRecorded + st.packetsNotRecorded);
      CPPUNIT_ASSERT_EQUAL(status.stations[i].packetsNotRecorded, st.packetsNotRecorded);
      notRecorded += st.packetsNotRecorded;
    }
    CPPUNIT_ASSERT(notRecorded > 0);
    const StationDataSummary& recorded = live.recording;
    CPPUNIT_ASSERT_EQUAL(std::string("partial"), recorded.status);
    CPPUNIT_ASSERT_EQUAL(notRecorded, recorded.packetsNotRecorded);
    CPPUNIT_ASSERT(recorded.packets > 0);
    const uint64_t packetBytes = recorded.bytes / recorded.packets;  // station-sim's: all alike
    CPPUNIT_ASSERT_EQUAL(recorded.packets * packetBytes, recorded.bytes);  // whole packets
    for (const auto& entry : std::filesystem::directory_iterator(recordings))
      if (entry.path().extension() == ".rsp")
        CPPUNIT_ASSERT_EQUAL_MESSAGE(entry.path().string(), uint64_t(0),
                                     entry.file_size() % packetBytes);
    bool warned = false;
    for (const std::string& w : live.warnings)
      warned = warned || w.find(std::to_string(notRecorded) +
                                " valid packets could not be "
                                "recorded") != std::string::npos;
    CPPUNIT_ASSERT_MESSAGE(readFile(obs + "/summary.txt"), warned);
    const std::string ionprocLog = readFile(obs + "/ionproc.log");
    CPPUNIT_ASSERT_MESSAGE(ionprocLog,
                           ionprocLog.find("No space left on device") != std::string::npos);
    const ObservationSettings s = ObservationSettings::fromFile(obs + "/observation.parset");
    for (const MsContents& ms : readOutputs(obs)) {
      CPPUNIT_ASSERT_EQUAL(size_t(s.nrIntegrations()) * size_t(nrBaselines(3)), ms.nrRows);
      for (size_t row = 0; row < ms.nrRows; ++row) CPPUNIT_ASSERT(!ms.flagRow[row]);
    }
  }

 private:
  static void sleepUntil(double unixTime) {
    std::this_thread::sleep_for(std::chrono::duration<double>(unixTime - wallClock()));
  }

  /// Waits until observe made the observation and its ionproc listens for triggers;
  /// returns the start time.
  static double waitForTriggerPort(const std::string& obs) {
    const double deadline = wallClock() + 60;
    while (wallClock() < deadline) {
      if (std::filesystem::exists(obs + "/ionproc.status") &&
          !ion::IonStatus::read(obs + "/ionproc.status").trigger.empty())
        return ObservationSettings::fromFile(obs + "/observation.parset").startTime;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    CPPUNIT_FAIL("ionproc did not come up with a trigger port within 60 s");
    return 0;
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationDataTest);

}  // namespace rtcp::observe::test
