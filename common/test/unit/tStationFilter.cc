// LOFAR's station filter as data: the embedded coefficients, the bandpass correction against
// the factors LOFAR's COBALT correlator publishes and against a plain twin computed here
// from the coefficients (the DTFT of the taps at the channel and its two neighbouring
// subbands, summed in power), the chirp-z response grid against the plain sum, and the
// noise-shaping filter against the aliased power.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <stdexcept>

#include "rtcp/Logger.h"
#include "rtcp/StationFilter.h"

namespace rtcp::test {
namespace {

constexpr double kTwoPi = 2 * std::numbers::pi;

/// |sum_l h[l] exp(-2 pi i l x / 1024)|^2 for the raw integer taps, x in subband widths:
/// the plain DTFT (a rotating phasor, no symmetry used).
double rawPower(const StationFilter& filter, double x) {
  const std::complex<double> step = std::polar(1.0, -kTwoPi * x / StationFilter::kNrSubbands);
  std::complex<double> phasor = 1, sum = 0;
  for (const int32_t h : filter.coefficients()) {
    sum += double(h) * phasor;
    phasor *= step;
  }
  return std::norm(sum);
}

/// The twin: COBALT's definition written out, channel c's response plus the neighbouring
/// subbands' (m = -1, +1) at nu = (c - C/2) / C, 2^25 / sqrt(power sum).
std::vector<double> twinCorrection(const StationFilter& filter, int channels) {
  std::vector<double> gains;
  for (int c = 0; c < channels; ++c) {
    const double nu = double(c - channels / 2) / channels;
    const double power = rawPower(filter, nu - 1) + rawPower(filter, nu) + rawPower(filter, nu + 1);
    gains.push_back(std::ldexp(1.0, 25) / std::sqrt(power));
  }
  return gains;
}

double dB(double amplitudeRatio) { return 20 * std::log10(amplitudeRatio); }

}  // namespace

class StationFilterTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationFilterTest);
  CPPUNIT_TEST(testCoefficients);
  CPPUNIT_TEST(testPublishedFactors);
  CPPUNIT_TEST(testFactorsEqualTwin);
  CPPUNIT_TEST(testChannelCounts);
  CPPUNIT_TEST(testResponseGridEqualsPlainSum);
  CPPUNIT_TEST(testAliasedPowerSumsNeighbours);
  CPPUNIT_TEST(testNoiseShapingFilterHasAliasedPower);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCoefficients() {
    const auto h = filter().coefficients();
    CPPUNIT_ASSERT_EQUAL(size_t(16384), h.size());
    int64_t sum = 0;
    for (size_t i = 0; i < h.size(); ++i) {
      sum += h[i];
      CPPUNIT_ASSERT_EQUAL(h[i], h[h.size() - 1 - i]);  // symmetric: linear phase
    }
    CPPUNIT_ASSERT_EQUAL(int64_t(33380518), sum);
    CPPUNIT_ASSERT_EQUAL(32767, *std::max_element(h.begin(), h.end()));
    CPPUNIT_ASSERT_EQUAL(-6799, *std::min_element(h.begin(), h.end()));
    CPPUNIT_ASSERT_EQUAL(double(sum), filter().dcGain());
  }

  /// The factors of the station filter's README (numpy, COBALT's method): all 16 channels
  /// of N = 16 and the listed channels of N = 64, to 5e-6 (their 6 decimals; the aliases
  /// beyond the neighbours, which COBALT leaves out, change channel 0 by 3e-6).
  void testPublishedFactors() {
    const double n16[] = {1.402114, 0.995788, 1.001751, 1.033480, 0.997403, 1.029465,
                          1.002647, 1.024980, 1.005210, 1.024980, 1.002647, 1.029465,
                          0.997403, 1.033480, 1.001751, 0.995788};
    const std::vector<double> gains16 = filter().bandpassCorrection(16);
    for (int c = 0; c < 16; ++c) CPPUNIT_ASSERT_DOUBLES_EQUAL(n16[c], gains16[size_t(c)], 5e-6);
    const std::pair<int, double> n64[] = {
        {0, 1.402114},  {1, 1.336765},  {2, 1.200840},  {3, 1.077173},  {4, 0.995788},
        {8, 1.001751},  {16, 0.997403}, {32, 1.005210}, {48, 0.997403}, {60, 0.995788},
        {61, 1.077173}, {62, 1.200840}, {63, 1.336765}};
    const std::vector<double> gains64 = filter().bandpassCorrection(64);
    for (const auto& [c, factor] : n64)
      CPPUNIT_ASSERT_DOUBLES_EQUAL(factor, gains64[size_t(c)], 5e-6);
  }

  void testFactorsEqualTwin() {
    for (int channels : {4, 16, 64, 256}) {
      const std::vector<double> gains = filter().bandpassCorrection(channels);
      const std::vector<double> twin = twinCorrection(filter(), channels);
      double worst = 0;
      for (int c = 0; c < channels; ++c)
        worst = std::max(worst, std::abs(dB(gains[size_t(c)] / twin[size_t(c)])));
      RTCP_LOG_INFO("test",
                    channels << " channels: largest difference to the twin " << worst << " dB");
      CPPUNIT_ASSERT(worst < 0.01);
      CPPUNIT_ASSERT(worst < 1e-4);  // in fact: only the aliases beyond the neighbours differ
    }
  }

  void testChannelCounts() {
    CPPUNIT_ASSERT(filter().bandpassCorrection(1) == std::vector<double>{1.0});
    CPPUNIT_ASSERT_THROW(filter().bandpassCorrection(48), std::invalid_argument);
    CPPUNIT_ASSERT_THROW(filter().bandpassCorrection(0), std::invalid_argument);
    // The shape at 256 channels: +2.9 dB at the edge, symmetric about the centre, and the
    // station filter's ripple inside (0.8 dB peak to peak over the inner 80 %).
    const std::vector<double> g = filter().bandpassCorrection(256);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.8905, dB(g[0] / g[128]), 1e-3);
    double low = 1e9, high = -1e9;
    for (int c = 1; c < 128; ++c)
      CPPUNIT_ASSERT_DOUBLES_EQUAL(g[size_t(128 - c)], g[size_t(128 + c)], 1e-12);
    for (int c = 26; c <= 230; ++c) {
      low = std::min(low, dB(g[size_t(c)]));
      high = std::max(high, dB(g[size_t(c)]));
    }
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.84, high - low, 0.05);
  }

  void testResponseGridEqualsPlainSum() {
    const double first = -1.5, step = 1.0 / 512;
    const std::vector<double> grid = filter().responseGrid(first, step, 1536);
    CPPUNIT_ASSERT_EQUAL(size_t(1536), grid.size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, grid[768], 1e-12);  // nu = 0: the DC gain
    for (int k = 0; k < 1536; k += 37) {
      const double plain = filter().response(first + k * step);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(plain, grid[size_t(k)], 1e-10);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(
          std::sqrt(rawPower(filter(), first + k * step)) / filter().dcGain(), std::abs(plain),
          1e-10);
    }
    // Roll-off: -3 dB-ish at the edge, deep stop band one subband away.
    CPPUNIT_ASSERT(dB(std::abs(filter().response(0.5))) < -5 &&
                   dB(std::abs(filter().response(0.5))) > -7);
    CPPUNIT_ASSERT(dB(std::abs(filter().response(1.0))) < -60);
  }

  void testAliasedPowerSumsNeighbours() {
    for (double nu = -0.5; nu <= 0.5; nu += 1.0 / 64) {
      double sum = 0;
      for (int m = -3; m <= 3; ++m) sum += std::pow(filter().response(nu + m), 2);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(sum, filter().aliasedPower(nu), 1e-7);  // + far aliases
    }
    // R[0] is the mean over a subband.
    double mean = 0;
    for (int j = 0; j < 1024; ++j) mean += filter().aliasedPower((j + 0.5) / 1024 - 0.5) / 1024;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(filter().branchAutocorrelation()[0], mean, 1e-12);
  }

  void testNoiseShapingFilterHasAliasedPower() {
    const auto& g = filter().noiseShapingFilter();
    double energy = 0;
    for (double tap : g) energy += tap * tap;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(filter().branchAutocorrelation()[0], energy, 1e-9);
    for (double nu = -0.5; nu < 0.5; nu += 1.0 / 100) {
      std::complex<double> response = 0;
      for (int n = 0; n < StationFilter::kNrTaps; ++n)
        response += g[size_t(n)] * std::polar(1.0, -kTwoPi * nu * n);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(filter().aliasedPower(nu), std::norm(response), 1e-9);
    }
  }

 private:
  static const StationFilter& filter() { return StationFilter::lofar(); }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationFilterTest);

}  // namespace rtcp::test
