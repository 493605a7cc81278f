// The station bandpass through the whole chain: station-sim records white noise (sky and
// receiver) as LOFAR stations deliver it, shaped by the station filter bank; the correlator
// program channelises and correlates it. Without bandpass correction the autocorrelation
// spectra show the station filter's aliased power at the channel centres (from the
// coefficients); with it they are flat: channels 1..C-1 within 0.2 dB, at 64 and 256
// channels.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <filesystem>

#include "Executables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "VisibilityOutput.h"
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

/// Autocorrelation power per channel (XX and YY of every station, every subband and
/// integration, per valid sample), channels [0, C).
std::vector<double> autocorrelationSpectrum(const std::string& dumpDirectory) {
  std::vector<double> sum, count;
  for (int rank = 0;
       std::filesystem::exists(dumpDirectory + "/rank" + std::to_string(rank) + ".vis"); ++rank)
    for (CorrelatedData& data : readDump(dumpDirectory + "/rank" + std::to_string(rank) + ".vis")) {
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
  for (size_t c = 0; c < sum.size(); ++c) sum[c] = count[c] > 0 ? sum[c] / count[c] : 0;
  return sum;
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
      o.inputs.push_back("file:" + recordings + "/" + station + ".rsp");

    const StationFilter& filter = StationFilter::lofar();
    for (const int channels : {64, 256}) {
      o.channels = channels;
      o.steps = 65536 / channels;  // blocks of 0.34 s
      o.blocksPerIntegration = 1;
      o.extra = "OLAP.correctBandPass = F\n";
      const std::vector<double> off = correlate(writeParset(dir_.path() + "/off.parset", o), "off");
      o.extra = "OLAP.correctBandPass = T\n";
      const std::vector<double> on = correlate(writeParset(dir_.path() + "/on.parset", o), "on");
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

 private:
  std::vector<double> correlate(const std::string& parset, const std::string& name) {
    const std::string dump = dir_.path() + "/dump-" + name;
    std::filesystem::remove_all(dump);
    const std::string log = dump + ".log";
    const int code =
        runProgram({observe::mpirunExecutable(), "-np", "1", observe::partExecutable("correlator"),
                    parset, "--dump", dump, "--no-storage", "--threads", "1"},
                   log);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), 0, code);
    return autocorrelationSpectrum(dump);
  }

  TempDir dir_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationBandpassTest);

}  // namespace rtcp::correlator::test
