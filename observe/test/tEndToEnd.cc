// End to end through `observe --now`: a short simulated observation (4 LOFAR stations,
// 2 subbands, 16 channels, 4 s; 11 stations for the image) with a point source 1 degree off the phase centre images
// with WSClean to where the source is; with the source at the phase centre, every
// cross-correlation has phase ~0 (delay compensation, filter bank and MS conventions
// all agree).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include <signal.h>

#include "FitsImage.h"
#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"

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
    // The beam transits now, at Dec 45: a 4 s snapshot of a source low in the sky has
    // its baselines foreshortened north-south and a beam so long in that direction
    // (its peak within 0.6 % over +-80") that gridding errors alone move the peak by
    // tens of arcseconds.
    o.beamRa = raTransitingNow();
    o.beamDec = 45 * kDegree;
    o.sourceRa = o.beamRa + 0.6 * kDegree / std::cos(o.beamDec);  // 1 degree away
    o.sourceDec = o.beamDec + 0.8 * kDegree;
    // A 4 s snapshot of the inner core's stations has a fan-shaped beam, its ridge along
    // the core's east-west extent: stations spread in both directions out to 8 km (55
    // baselines) and subbands 30 MHz apart make a beam that pins the source down.
    o.stations = {"CS001", "CS002", "CS003", "CS028", "CS302", "CS103", "CS501", "RS106", "RS205", "RS305", "RS503"};
    o.subbands = "[250, 400]";
    const std::vector<std::string> ms = observe(dir.path(), o);
    for (const std::string& path : ms) checkFringes(readMeasurementSet(path), o);
    const MsContents contents = readMeasurementSet(ms[0]);
    CPPUNIT_ASSERT_EQUAL(size_t(4 * 66), contents.nrRows);  // 4 integrations of 66 baselines (with autos)
    CPPUNIT_ASSERT_EQUAL(16, contents.nrChannels);

    // Natural weighting, 20" pixels: the longest baseline (RS106, 8.9 km) resolves ~2'.
    const std::string image = dir.path() + "/image";
    std::string command = "wsclean -quiet -j 2 -size 512 512 -scale 20asec -weight natural -niter 0 -name " + image;
    for (const std::string& m : ms) command += " " + m;
    command += " > " + dir.path() + "/wsclean.log 2>&1";
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/wsclean.log"), 0, std::system(command.c_str()));
    const rtcp::test::FitsImage fits = rtcp::test::FitsImage::read(image + "-image.fits");
    const rtcp::test::FitsImage::Peak peak = fits.peak();
    const double pixel = 20.0 / 3600 * kDegree;
    const double error = rtcp::test::angularDistance(peak.ra, peak.dec, o.sourceRa, o.sourceDec);
    std::ostringstream where;
    where << "peak at RA " << peak.ra / kDegree << " Dec " << peak.dec / kDegree << ", source at RA "
          << o.sourceRa / kDegree << " Dec " << o.sourceDec / kDegree << ": " << error / pixel << " pixels off";
    CPPUNIT_ASSERT_MESSAGE(where.str(), error <= pixel);
  }

  /// Amplitude-weighted mean |phase| of the cross-correlations (XX and YY, unflagged).
  void testSourceAtCentreHasZeroPhase() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4712;
    const std::vector<std::string> ms = observe(dir.path(), o);
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
  }

  /// SIGINT (Ctrl-C) in the middle: observe stops every part in order and fails; ionproc
  /// and storage-sink end normally, so the MSs are closed and readable.
  void testInterruptStopsCleanly() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4715;
    o.seconds = 20;
    o.outputDir = dir.path() + "/out";
    const std::string parset = writeParset(dir.path() + "/long.parset", o);
    const std::string obs = dir.path() + "/obs";
    const pid_t observer = startProgram(observeCommand({parset, "--now", "--dir", obs}), dir.path() + "/observe.log");
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
    const std::string codes = summaryValue(obs, "exitCodes");
    CPPUNIT_ASSERT_MESSAGE(codes, codes.find("\"ionproc\": 0") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(codes, codes.find("\"storage-sink\": 0") != std::string::npos);
    const MsContents ms = readMeasurementSet(o.outputDir + "/L4715_SB300_uv.MS");
    CPPUNIT_ASSERT(ms.nrRows > 0);
  }

 private:
  /// The imaging-independent check: every cross-correlation's phase equals the source's
  /// fringe phase 2 pi f (u l + v m + w (n - 1)) / c from the MS's own UVW (DESIGN §2.5
  /// sign), within 10 degrees, on every baseline up to the longest.
  static void checkFringes(const MsContents& c, const SmallObservation& o) {
    const double dRa = o.sourceRa - o.beamRa;
    const double l = std::cos(o.sourceDec) * std::sin(dRa);
    const double m = std::sin(o.sourceDec) * std::cos(o.beamDec) - std::cos(o.sourceDec) * std::sin(o.beamDec) * std::cos(dRa);
    const double n = std::sqrt(1 - l * l - m * m);
    constexpr double kSpeedOfLight = 299792458.0;
    double worst = 0;
    for (size_t row = 0; row < c.nrRows; ++row) {
      if (c.antenna1[row] == c.antenna2[row]) continue;
      const auto& [u, v, w] = c.uvw[row];
      std::complex<double> sum = 0;
      for (int ch = 0; ch < c.nrChannels; ++ch) {
        const size_t i = (row * size_t(c.nrChannels) + size_t(ch)) * 4;  // XX
        if (c.flag[i]) continue;
        const double fringe = 2 * M_PI * c.channelFrequencies[size_t(ch)] * (u * l + v * m + w * (n - 1)) / kSpeedOfLight;
        sum += std::complex<double>(c.data[i]) * std::polar(1.0, -fringe);
      }
      worst = std::max(worst, std::abs(std::arg(sum)) / kDegree);
    }
    // Measured 2-3.5 degrees (noise and smearing on the longest baselines); a sign flip
    // gives 179, UVW one second off in time about 40 on the 8 km baselines at 60 MHz.
    std::cerr << "largest fringe phase error " << worst << " degrees\n";
    CPPUNIT_ASSERT_MESSAGE("largest fringe phase error " + std::to_string(worst) + " degrees", worst < 10);
  }

  static double wallClock() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }

  /// Runs observe --now on the observation; returns the MSs after checking the summary.
  static std::vector<std::string> observe(const std::string& dir, SmallObservation& o) {
    o.outputDir = dir + "/out";
    const std::string parset = writeParset(dir + "/observation-in.parset", o);
    const std::string obs = dir + "/obs";
    observeSuccessfully(parset, obs, {"--now"}, dir + "/observe.log");
    for (const char* part : {"station-sim", "ionproc", "correlator", "storage-sink"})
      CPPUNIT_ASSERT_MESSAGE(part, std::filesystem::exists(obs + "/" + part + ".log"));
    std::vector<std::string> ms;
    for (const SubbandSettings& subband : ObservationSettings::fromFile(parset).subbands) {
      char file[64];
      std::snprintf(file, sizeof file, "/L%lld_SB%03d_uv.MS", static_cast<long long>(o.obsId), subband.number);
      ms.push_back(o.outputDir + file);
      CPPUNIT_ASSERT_MESSAGE(ms.back(), std::filesystem::is_directory(ms.back()));
    }
    return ms;
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(EndToEndTest);

}  // namespace rtcp::observe::test
