// End to end through `observe --now`: a short simulated observation (4 LOFAR stations,
// 2 subbands, 16 channels, 4 s; 11 stations for the image) with a point source 1 degree off the
// phase centre images with WSClean to where the source is; with the source at the phase centre,
// every cross-correlation has phase ~0 (delay compensation, filter bank and MS conventions all
// agree).
#include <cppunit/extensions/HelperMacros.h>
#include <signal.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <thread>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "SkyChecks.h"
#include "StorageTestUtil.h"
#include "rtcp/SharedMemory.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

class EndToEndTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(EndToEndTest);
  CPPUNIT_TEST(testSourceOffCentreImagesWhereItIs);
  CPPUNIT_TEST(testSourceAtCentreHasZeroPhase);
  CPPUNIT_TEST(testInterruptStopsCleanly);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSourceOffCentreImagesWhereItIs() {
    TempDir dir;
    SmallObservation o;
    placeSourceOffCentre(o);
    // A 4 s snapshot of the inner core's stations has a fan-shaped beam, its ridge along
    // the core's east-west extent: stations spread in both directions out to 8 km (55
    // baselines) and subbands 30 MHz apart make a beam that pins the source down.
    o.stations = {"CS001", "CS002", "CS003", "CS028", "CS302", "CS103",
                  "CS501", "RS106", "RS205", "RS305", "RS503"};
    o.subbands = "[250, 400]";
    const std::vector<std::string> ms = observe(dir.path(), o);
    for (const std::string& path : ms) checkFringes(readMeasurementSet(path), o);
    const MsContents contents = readMeasurementSet(ms[0]);
    CPPUNIT_ASSERT_EQUAL(size_t(4 * 66),
                         contents.nrRows);  // 4 integrations of 66 baselines (with autos)
    CPPUNIT_ASSERT_EQUAL(16, contents.nrChannels);
    checkImagePeak(ms, o, dir.path());
  }

  /// Amplitude-weighted mean |phase| of the cross-correlations (XX and YY, unflagged).
  void testSourceAtCentreHasZeroPhase() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4712;
    // The ranks read the rows in ionproc's ring where /dev/shm has huge pages (setup
    // remounts it so), else blocks copied into slots: either way the same physics.
    const std::vector<std::string> ms = observe(dir.path(), o, {"--lend-ring"});
    double weightedPhase = 0, weights = 0;
    for (const std::string& path : ms) {
      const MsContents c = readMeasurementSet(path);
      for (size_t row = 0; row < c.nrRows; ++row) {
        if (c.antenna1[row] == c.antenna2[row]) continue;
        for (int ch = 0; ch < c.nrChannels; ++ch)
          for (int pol : {0, 3}) {
            const size_t i = (row * size_t(c.nrChannels) + size_t(ch)) * 4 + size_t(pol);
            if (c.flag[i]) continue;
            weightedPhase += std::abs(c.data[i]) * std::abs(std::arg(c.data[i]));
            weights += std::abs(c.data[i]);
          }
      }
    }
    CPPUNIT_ASSERT(weights > 0);
    const double meanPhase = weightedPhase / weights / kDegree;
    CPPUNIT_ASSERT_MESSAGE("mean |phase| " + std::to_string(meanPhase) + " degrees", meanPhase < 3);
    const std::string text = readFile(dir.path() + "/obs/ionproc.log");
    const bool lent = text.find("rows lent in the ring") != std::string::npos;
    CPPUNIT_ASSERT_EQUAL(SharedMemory::hugePages(), lent);
  }

  /// SIGINT (Ctrl-C) in the middle: observe stops every part in order and fails; ionproc
  /// and storage-sink end normally, so the MSs are closed and readable. The parset's
  /// misspelt key is a warning in the summary too.
  void testInterruptStopsCleanly() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4715;
    o.seconds = 20;
    o.outputDir = dir.path() + "/out";
    o.extra = "Observation.sampleClok = 200\n";
    const std::string parset = writeParset(dir.path() + "/long.parset", o);
    const std::string obs = dir.path() + "/obs";
    const pid_t observer =
        startProgram(observeCommand({parset, "--now", "--dir", obs}), dir.path() + "/observe.log");
    // Wait until data flows (the status file shows a block served), then interrupt.
    const double giveUp = wallClock() + 30;
    for (std::string status; wallClock() < giveUp;) {
      status = readFile(obs + "/ionproc.status");
      if (!status.empty() && status.find("newestBlock=-1") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    std::this_thread::sleep_for(std::chrono::seconds(2));
    kill(observer, SIGINT);
    const int code = waitProgram(observer);
    const std::string log = readFile(dir.path() + "/observe.log");
    CPPUNIT_ASSERT_MESSAGE(log, code != 0 && code < 128);  // observe itself ends, non-zero
    CPPUNIT_ASSERT_EQUAL_MESSAGE(log, std::string("\"failed\""), summaryValue(obs, "status"));
    CPPUNIT_ASSERT_MESSAGE(log, summaryValue(obs, "reason").find("SIGINT") != std::string::npos);
    const std::string warnings = summaryValue(obs, "warnings");
    CPPUNIT_ASSERT_MESSAGE(warnings,
                           warnings.find("unknown key Observation.sampleClok (" + dir.path() +
                                         "/long.parset:") != std::string::npos);
    const std::string codes = summaryValue(obs, "exitCodes");
    CPPUNIT_ASSERT_MESSAGE(codes, codes.find("\"ionproc\": 0") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(codes, codes.find("\"storage-sink\": 0") != std::string::npos);
    const MsContents ms = readMeasurementSet(o.outputDir + "/L4715_SAP000_SB000_uv.MS");
    CPPUNIT_ASSERT(ms.nrRows > 0);
  }

 private:
  /// Runs observe --now on the observation; returns the MSs after checking the summary.
  static std::vector<std::string> observe(const std::string& dir, SmallObservation& o,
                                          std::vector<std::string> options = {}) {
    o.outputDir = dir + "/out";
    const std::string parset = writeParset(dir + "/observation-in.parset", o);
    const std::string obs = dir + "/obs";
    options.insert(options.begin(), "--now");
    observeSuccessfully(parset, obs, options, dir + "/observe.log");
    for (const char* part : {"station-sim", "ionproc", "correlator", "storage-sink"})
      CPPUNIT_ASSERT_MESSAGE(part, std::filesystem::exists(obs + "/" + part + ".log"));
    std::vector<std::string> ms;
    for (const SubbandSettings& subband : ObservationSettings::fromFile(parset).subbands) {
      ms.push_back(o.outputDir + "/" +
                   ObservationSettings::defaultFilename(o.obsId, subband.beam, subband.index));
      CPPUNIT_ASSERT_MESSAGE(ms.back(), std::filesystem::is_directory(ms.back()));
    }
    return ms;
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(EndToEndTest);

}  // namespace rtcp::observe::test
