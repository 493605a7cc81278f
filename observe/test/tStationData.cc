// Station data kept (observe --record-input, rtcp-trigger): a live observation fed by
// station-sim over UDP and recorded by ionproc replays through the same chain
// (DIR/replay.parset) to the same MS rows: times, visibilities, weights and flags equal,
// bit for bit (the chain is deterministic for the same samples); a dump asked with
// rtcp-trigger during a live observation replays (its dump.parset) to the live rows of
// its integrations (times, weights and flags equal, visibilities within float rounding),
// a trigger without the secret is refused, and a window partly gone from the buffer is
// dumped as far as it is there, with the missing part said.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <complex>
#include <filesystem>
#include <sstream>
#include <thread>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
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
    CPPUNIT_ASSERT_EQUAL(recordings, live.recordingDirectory);
    CPPUNIT_ASSERT(live.recordingBytes > 0);
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

  /// One live observation (9 s, buffers of 4 s), three triggers: without the secret
  /// (refused, nothing written); 1 s .. 4.5 s after the start, asked at 3 s (written as the
  /// rest arrives: complete, and its replay gives the live rows of those integrations);
  /// 1 s .. 3 s asked at 6.6 s (the buffer holds 2.6 s on: partial, the gone part said).
  /// The live observation loses nothing to them: no packet late or lost, no block dropped.
  void testTriggersDuringAnObservation() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4732;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 9;
    o.outputDir = dir.path() + "/live";
    o.extra = "OLAP.nrSecondsOfBuffer = 4\nOLAP.maxNetworkDelay = 0.5\n";
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
    const int complete = runProgram({trigger, obs, "--from", utc(1), "--to", utc(4.5)},
                                    dir.path() + "/complete.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/complete.log"), 0, complete);

    sleepUntil(start + 6.6);
    const int partial = runProgram(
        {trigger, obs, "--from", utc(1), "--to", utc(3), "--out", dir.path() + "/partial"},
        dir.path() + "/partial.log");
    const std::string partialLog = readFile(dir.path() + "/partial.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(partialLog, 1, partial);
    CPPUNIT_ASSERT_MESSAGE(partialLog,
                           partialLog.find("gone from the buffer") != std::string::npos);
    CPPUNIT_ASSERT(std::filesystem::exists(dir.path() + "/partial/dump.parset"));

    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/live.log"), 0, waitProgram(observer));
    const ObservationSummary live = ObservationSummary::fromFile(obs + "/summary.json");
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), live.blocksDropped);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), live.integrationsDropped);
    for (const StationSummary& st : live.stations) {
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLate);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(st.name, uint64_t(0), st.packetsLost);
    }
    CPPUNIT_ASSERT_EQUAL(size_t(1), live.dumps.size());
    const std::string ionprocLog = readFile(obs + "/ionproc.log");
    CPPUNIT_ASSERT_MESSAGE(ionprocLog,
                           ionprocLog.find("trigger: connection from") != std::string::npos);

    // The complete dump replayed: the live rows of its integrations, with their times,
    // weights and flags; the visibilities within float rounding (1e-6 of the largest: the
    // same samples, but the replay's chain starts at the dump's first block).
    const std::string dump = live.dumps.front();
    observeSuccessfully(dump + "/dump.parset", dir.path() + "/dump-obs", {},
                        dir.path() + "/dump.log");
    const ObservationSettings ls = ObservationSettings::fromFile(obs + "/observation.parset");
    const ObservationSettings ds = ObservationSettings::fromFile(dump + "/dump.parset");
    const int64_t offset = ds.startSample() - ls.startSample();
    CPPUNIT_ASSERT_EQUAL(int64_t(0), offset % ls.samplesPerBlock());
    const int64_t firstBlock = offset / ls.samplesPerBlock();
    CPPUNIT_ASSERT_EQUAL(int64_t(1), firstBlock);     // the block holding 1 s
    CPPUNIT_ASSERT_EQUAL(int64_t(4), ds.nrBlocks());  // up to 4.5 s: blocks 1 .. 4
    const std::vector<MsContents> a = readOutputs(obs);
    const std::vector<MsContents> b = readOutputs(dir.path() + "/dump-obs");
    CPPUNIT_ASSERT_EQUAL(a.size(), b.size());
    const size_t baselines = a[0].nrRows / size_t(ls.nrIntegrations());
    for (size_t sb = 0; sb < a.size(); ++sb) {
      CPPUNIT_ASSERT_EQUAL(size_t(4) * baselines, b[sb].nrRows);
      const std::string problem =
          compareRows(a[sb], size_t(firstBlock) * baselines, b[sb], b[sb].nrRows, 1e-6);
      CPPUNIT_ASSERT_MESSAGE("subband " + std::to_string(sb) + ": " + problem, problem.empty());
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
