// The station bandpass through the whole chain: station-sim records white noise (sky and
// receiver) as LOFAR stations deliver it, shaped by the station filter bank; the correlator
// program channelises and correlates it. Without bandpass correction the autocorrelation
// spectra show the station filter's aliased power at the channel centres (from the
// coefficients); with it they are flat: channels 1..C-1 within 0.2 dB, at 64 and 256
// channels. The real IE613 capture, corrected, is flat as well.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include "DumpFile.h"
#include "Executables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "rtcp/Baselines.h"
#include "rtcp/Logger.h"
#include "rtcp/StationFilter.h"

namespace rtcp::correlator::test {

using observe::test::readFile;
using observe::test::runProgram;
using observe::test::SmallObservation;
using observe::test::writeParset;
using storage::test::TempDir;

namespace {

double dB(double powerRatio) { return 10 * std::log10(powerRatio); }

/// Autocorrelation power per channel of each subband: XX and YY of every station and
/// integration, per valid sample. subband number -> [channel].
std::map<int, std::vector<double>> autocorrelationSpectra(const std::string& dumpDirectory) {
  std::map<int, std::vector<double>> sums, counts;
  for (int rank = 0;
       std::filesystem::exists(dumpDirectory + "/rank" + std::to_string(rank) + ".vis"); ++rank)
    for (CorrelatedData& data :
         ion::test::readDump(dumpDirectory + "/rank" + std::to_string(rank) + ".vis")) {
      std::vector<double>& sum = sums[data.subband];
      std::vector<double>& count = counts[data.subband];
      sum.resize(size_t(data.nrChannels), 0.0);
      count.resize(size_t(data.nrChannels), 0.0);
      for (int s = 0; s < data.nrStations; ++s)
        for (int c = 0; c < data.nrChannels; ++c) {
          const int baseline = baselineIndex(s, s);
          sum[size_t(c)] += double(data.visibility(baseline, c, 0).real()) +
                            data.visibility(baseline, c, 3).real();
          count[size_t(c)] += 2.0 * data.valid(baseline, c);
        }
    }
  for (auto& [subband, sum] : sums)
    for (size_t c = 0; c < sum.size(); ++c) {
      const double count = counts[subband][c];
      sum[c] = count > 0 ? sum[c] / count : 0;
    }
  return sums;
}

/// The subbands' spectra averaged.
std::vector<double> meanSpectrum(const std::map<int, std::vector<double>>& spectra) {
  std::vector<double> mean;
  for (const auto& [subband, spectrum] : spectra) {
    mean.resize(spectrum.size(), 0.0);
    for (size_t c = 0; c < spectrum.size(); ++c) mean[c] += spectrum[c] / double(spectra.size());
  }
  return mean;
}

/// Mean over channels 1..C-1.
double meanOverChannels(const std::vector<double>& values) {
  double mean = 0;
  for (size_t c = 1; c < values.size(); ++c) mean += values[c] / double(values.size() - 1);
  return mean;
}

}  // namespace

class StationBandpassTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationBandpassTest);
  CPPUNIT_TEST(testCorrectedSpectraAreFlat);
  CPPUNIT_TEST(testRealCaptureIsFlat);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCorrectedSpectraAreFlat() {
    SmallObservation o;
    o.stations = {"CS001", "CS002", "RS106"};
    o.subbands = "[300..303]";
    o.seconds = 1.6;
    o.flux = 0;  // receiver noise only: independent between stations
    o.outputDir = dir_.path() + "/unused";
    const std::string recordings = dir_.path() + "/recordings";
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({observe::test::executable("station-sim/station-sim"),
                       writeParset(dir_.path() + "/record.parset", o), "--record", recordings},
                      dir_.path() + "/record.log"));
    o.realTime = false;
    for (const std::string& station : o.stations)
      o.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");  // per field

    const StationFilter& filter = StationFilter::lofar();
    for (const int channels : {64, 256}) {
      o.channels = channels;
      o.steps = 65536 / channels;  // blocks of 0.34 s
      o.blocksPerIntegration = 1;
      o.extra = "OLAP.correctBandPass = F\n";
      const std::vector<double> off =
          meanSpectrum(correlate(writeParset(dir_.path() + "/off.parset", o), "off"));
      o.extra = "OLAP.correctBandPass = T\n";
      const std::vector<double> on =
          meanSpectrum(correlate(writeParset(dir_.path() + "/on.parset", o), "on"));
      CPPUNIT_ASSERT_EQUAL(size_t(channels), on.size());

      const std::vector<double> gains = filter.bandpassCorrection(channels);
      std::vector<double> shape(static_cast<size_t>(channels));
      for (int c = 1; c < channels; ++c)
        shape[size_t(c)] = filter.aliasedPower(double(c - channels / 2) / channels);
      const double meanOn = meanOverChannels(on), meanOff = meanOverChannels(off),
                   meanShape = meanOverChannels(shape);
      double worstFlat = 0, worstShape = 0;
      for (int c = 1; c < channels; ++c) {
        const size_t i = size_t(c);
        worstFlat = std::max(worstFlat, std::abs(dB(on[i] / meanOn)));
        worstShape =
            std::max(worstShape, std::abs(dB(off[i] / meanOff) - dB(shape[i] / meanShape)));
        // The correction is the gain on the voltages: power x gain^2, nothing else.
        CPPUNIT_ASSERT_DOUBLES_EQUAL(gains[i] * gains[i], on[i] / off[i],
                                     1e-4 * gains[i] * gains[i]);
      }
      RTCP_LOG_INFO("test", channels << " channels: corrected flat within " << worstFlat
                                     << " dB, uncorrected within " << worstShape
                                     << " dB of the station filter's shape "
                                     << "(edge channel 1 at " << dB(off[1] / meanOff) << " dB)");
      CPPUNIT_ASSERT(worstFlat < 0.2);
      CPPUNIT_ASSERT(worstShape < 0.2);
      CPPUNIT_ASSERT(dB(off[1] / meanOff) < -1.5);  // the uncorrected edge is visibly low
    }
  }

  /// The real IE613 capture (parsets/ie613.parset: 488 subbands, 16 channels, 8 bit):
  /// with the correction, the median over subbands of each channel's level (relative to
  /// its subband's mean over channels 1..15) within 0.3 dB of the others' mean; the real
  /// station's subbands are what the correction expects. (The correction samples the
  /// station filter's ripple at the channel centres, +-0.16 dB at 16 channels; the
  /// 16 channels themselves average it away.)
  void testRealCaptureIsFlat() {
    std::string parset = readFile(rtcp::test::sourceDir() + "/parsets/ie613.parset");
    parset = std::regex_replace(parset, std::regex("file:\\.\\./"),
                                "file:" + rtcp::test::sourceDir() + "/");
    const std::string path = dir_.path() + "/ie613.parset";
    std::ofstream(path) << parset;
    const std::vector<double> on = medianLevels(correlate(path, "ie613"));
    std::ofstream(path) << parset << "OLAP.correctBandPass = F\n";
    const std::vector<double> off = medianLevels(correlate(path, "ie613-off"));
    std::string levels;
    for (size_t c = 1; c < on.size(); ++c) levels += " " + std::to_string(on[c]).substr(0, 5);
    RTCP_LOG_INFO("test", "IE613, corrected channel levels (dB):" << levels);
    CPPUNIT_ASSERT_EQUAL(size_t(16), on.size());
    double worstOn = 0, worstOff = 0;
    for (size_t c = 1; c < on.size(); ++c) {
      worstOn = std::max(worstOn, std::abs(on[c]));
      worstOff = std::max(worstOff, std::abs(off[c]));
    }
    RTCP_LOG_INFO("test", "IE613: corrected within " << worstOn << " dB, uncorrected within "
                                                     << worstOff << " dB");
    CPPUNIT_ASSERT(worstOn < 0.3);  // channel 1 was +1.4 dB with a Kaiser stand-in filter
  }

 private:
  /// Per channel, the median over subbands of its level in dB relative to the subband's
  /// mean over channels 1..C-1, then relative to the mean of those medians.
  static std::vector<double> medianLevels(const std::map<int, std::vector<double>>& spectra) {
    std::vector<std::vector<double>> levels;  // [channel][subband]
    for (const auto& [subband, spectrum] : spectra) {
      levels.resize(spectrum.size());
      const double mean = meanOverChannels(spectrum);
      for (size_t c = 1; c < spectrum.size(); ++c) levels[c].push_back(dB(spectrum[c] / mean));
    }
    std::vector<double> medians(levels.size(), 0.0);
    for (size_t c = 1; c < levels.size(); ++c) {
      std::nth_element(levels[c].begin(), levels[c].begin() + long(levels[c].size() / 2),
                       levels[c].end());
      medians[c] = levels[c][levels[c].size() / 2];
    }
    const double mean = meanOverChannels(medians);
    for (size_t c = 1; c < medians.size(); ++c) medians[c] -= mean;
    return medians;
  }

  std::map<int, std::vector<double>> correlate(const std::string& parset, const std::string& name) {
    const std::string dump = dir_.path() + "/dump-" + name;
    std::filesystem::remove_all(dump);
    const std::string log = dump + ".log";
    const int code = runProgram({observe::mpirunExecutable(), "-np", "1", RTCP_CORRELATOR_LOCAL_EXE,
                                 parset, "--dump", dump, "--threads", "1"},
                                log);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), 0, code);
    return autocorrelationSpectra(dump);
  }

  TempDir dir_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationBandpassTest);

}  // namespace rtcp::correlator::test
