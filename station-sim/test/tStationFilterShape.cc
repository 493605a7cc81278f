// Simulated subbands have the shape a LOFAR station's polyphase filter bank gives them
// (rtcp::StationFilter, the real coefficients): receiver noise and sky alike roll off
// towards the subband edges as the aliased power of the filter, and a tone near an edge
// appears in the neighbouring subband too, attenuated by the filter's response there.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <vector>

#include "SimTestUtil.h"
#include "StationSimulator.h"
#include "SubbandResponse.h"
#include "rtcp/Logger.h"
#include "rtcp/StationFilter.h"

namespace rtcp::sim::test {
namespace {

constexpr int kBlock = 512;  ///< FFT length of the measured spectra
constexpr int kGroups = 32;  ///< bins averaged into one point of the shape

double dB(double powerRatio) { return 10 * std::log10(powerRatio); }

/// Mean power spectrum of every beamlet and polarisation of the recordings, in FFT order.
std::vector<double> powerSpectrum(const std::vector<Decoded>& recordings) {
  Fftw fft(kBlock);
  std::vector<double> power(kBlock, 0.0);
  for (const Decoded& d : recordings)
    for (int b = 0; b < d.nrBeamlets; ++b)
      for (int pol = 0; pol < 2; ++pol)
        for (int64_t start = 0; start + kBlock <= d.nrSamples; start += kBlock) {
          const auto& x = fft(d.at(b, pol) + start);
          for (int k = 0; k < kBlock; ++k) power[size_t(k)] += std::norm(x[size_t(k)]);
        }
  return power;
}

/// Largest deviation (dB) between the measured spectrum and the station filter's aliased
/// power, both averaged over groups of bins and normalised to their means.
double worstShapeError(const std::vector<double>& power) {
  const StationFilter& filter = StationFilter::lofar();
  std::vector<double> measured(kGroups, 0.0), expected(kGroups, 0.0);
  for (int k = 0; k < kBlock; ++k) {
    const int signedBin = k < kBlock / 2 ? k : k - kBlock;
    const int group = (signedBin + kBlock / 2) * kGroups / kBlock;
    measured[size_t(group)] += power[size_t(k)];
    expected[size_t(group)] += filter.aliasedPower(double(signedBin) / kBlock);
  }
  double sumMeasured = 0, sumExpected = 0;
  for (int g = 0; g < kGroups; ++g) {
    sumMeasured += measured[size_t(g)];
    sumExpected += expected[size_t(g)];
  }
  double worst = 0;
  for (int g = 0; g < kGroups; ++g)
    worst = std::max(
        worst, std::abs(dB(measured[size_t(g)] / sumMeasured * sumExpected / expected[size_t(g)])));
  return worst;
}

std::vector<Decoded> record(const std::string& parset, double seconds) {
  TempDir dir;
  const ObservationSettings settings = settingsFrom(parset);
  SimulatorOptions options;
  options.recordDirectory = dir.path();
  options.duration = seconds;
  StationSimulator(settings, options).run();
  std::vector<Decoded> recordings;
  for (const StationSettings& station : settings.stations)
    recordings.push_back(decodeRecording(dir / (station.name + ".rsp")));
  return recordings;
}

}  // namespace

class StationFilterShapeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationFilterShapeTest);
  CPPUNIT_TEST(testWeightsAreTheFilterResponse);
  CPPUNIT_TEST(testReceiverNoiseHasTheStationShape);
  CPPUNIT_TEST(testSkyHasTheStationShape);
  CPPUNIT_TEST(testToneNearAnEdgeAliasesIntoTheNeighbour);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testWeightsAreTheFilterResponse() {
    const int size = 8192;
    const SubbandResponse response(size);
    const StationFilter& filter = StationFilter::lofar();
    for (int i : {0, 1, 1000, 3000, 4095, 4096, 4097, 5000, 8191})
      for (int m = -1; m <= 1; ++m) {
        const double nu = double(i < size / 2 ? i : i - size) / size + m;
        CPPUNIT_ASSERT_DOUBLES_EQUAL(filter.response(nu), double(response.weights(m)[i]), 1e-6);
      }
    // The neighbours reach only the edges (around bin size / 2); inside, their weights vanish.
    CPPUNIT_ASSERT(response.firstAliasBin() > size / 4 && response.lastAliasBin() < 3 * size / 4);
    for (int i = 0; i < size; ++i)
      if (i < response.firstAliasBin() || i >= response.lastAliasBin())
        CPPUNIT_ASSERT(std::abs(response.weights(-1)[i]) <= 1e-4 &&
                       std::abs(response.weights(1)[i]) <= 1e-4);
    RTCP_LOG_INFO("test", "neighbours alias into bins " << response.firstAliasBin() << ".."
                                                        << response.lastAliasBin() << " of "
                                                        << size);
  }

  /// Noise only: 2 stations x 2 subbands x 2 polarisations, 0.5 s.
  void testReceiverNoiseHasTheStationShape() {
    const auto recordings = record(
        makeParset({"CS001", "RS106"}, "[200, 201]", 16, "Sim.noisePower = 1.0\nSim.seed = 5\n"),
        0.5);
    const std::vector<double> power = powerSpectrum(recordings);
    const double worst = worstShapeError(power);
    RTCP_LOG_INFO("test",
                  "receiver noise: shape within " << worst << " dB of the station filter's");
    CPPUNIT_ASSERT(worst < 0.2);
    // The edges really are low: the outermost group about 2 dB below the centre.
    CPPUNIT_ASSERT(dB((power[kBlock / 2] + power[kBlock / 2 + 1]) / (power[0] + power[1])) < -1.5);
  }

  /// A noiseless source: the sky signal and its neighbours' aliases have the same shape.
  void testSkyHasTheStationShape() {
    const auto recordings =
        record(makeParset({"CS001", "RS106"}, "[200, 201]", 16,
                          "Sim.nrSources = 1\nSim.Source[0].angle1 = 5.25\n"
                          "Sim.Source[0].angle2 = 0.72\nSim.Source[0].flux = 2\n"
                          "Sim.noisePower = 0\nSim.seed = 6\n"),
               0.5);
    const double worst = worstShapeError(powerSpectrum(recordings));
    RTCP_LOG_INFO("test", "sky: shape within " << worst << " dB of the station filter's");
    CPPUNIT_ASSERT(worst < 0.2);
  }

  /// A tone 0.45 subbands above the centre of subband 300: in 300 at H(0.45), and in 301
  /// (0.55 below its centre) at H(0.55), in the same baseband bin (critical sampling
  /// folds 301's lower edge onto 300's upper one). Measured against each subband's noise
  /// floor at that bin, which is the same in both.
  void testToneNearAnEdgeAliasesIntoTheNeighbour() {
    const ObservationSettings probe = settingsFrom(makeParset({"CS001"}, "[300]", 16, ""));
    const double fs = probe.subbandWidth(), f = probe.subbands[0].frequency;
    const int size = 4096, bin = int(0.45 * size);
    const double tone = f + double(bin) * fs / size;  // on a bin: no leakage
    const auto recordings =
        record(makeParset({"CS001"}, "[299..302]", 16,
                          "Sim.tone.frequency = " + std::to_string(tone) +
                              "\nSim.tone.amplitude = 0.5\nSim.noisePower = 0.1\nSim.seed = 7\n"),
               0.3);
    const Decoded& d = recordings.front();
    Fftw fft(size);
    std::vector<double> toneToFloor(4);
    for (int b = 0; b < 4; ++b) {
      double peak = 0, floor = 0;
      for (int pol = 0; pol < 2; ++pol)
        for (int64_t start = 0; start + size <= d.nrSamples; start += size) {
          const auto& x = fft(d.at(b, pol) + start);
          peak += std::norm(x[size_t(bin)]);
          for (int k = bin - 40; k <= bin + 40; ++k)
            if (std::abs(k - bin) > 4) floor += std::norm(x[size_t(k)]) / 72;  // 72 bins
        }
      toneToFloor[size_t(b)] = (peak - floor) / floor;  // tone power over noise per bin
    }
    // Expected: amplitude^2 H(offset)^2 size / (noise density at the bin).
    const StationFilter& filter = StationFilter::lofar();
    const double noise = filter.aliasedPower(0.45);
    const double own = 0.25 * std::pow(filter.response(0.45), 2) * size / (0.1 * noise);
    const double alias = 0.25 * std::pow(filter.response(-0.55), 2) * size / (0.1 * noise);
    RTCP_LOG_INFO("test", "tone over noise: subband 300 "
                              << dB(toneToFloor[1]) << " dB (expected " << dB(own) << "), 301 "
                              << dB(toneToFloor[2]) << " dB (expected " << dB(alias) << ")");
    CPPUNIT_ASSERT_DOUBLES_EQUAL(dB(own), dB(toneToFloor[1]), 0.3);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(dB(alias), dB(toneToFloor[2]), 0.3);
    CPPUNIT_ASSERT(alias > 100);  // the alias is well above the noise
    // Subbands 299 and 302 lie 1.45 and 1.55 subbands away: nothing of the tone there.
    CPPUNIT_ASSERT(std::abs(toneToFloor[0]) < 1 &&
                   std::abs(toneToFloor[3]) < 1);  // 5 sigma of noise
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationFilterShapeTest);

}  // namespace rtcp::sim::test
