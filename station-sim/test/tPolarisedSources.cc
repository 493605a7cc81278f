// Polarised sources (Sim.Source[i].Q/U/V): a station's X and Y of a source have the
// coherency its Stokes fractions ask for, in COBALT's convention (I = XX* + YY*,
// Q = XX* - YY*, U = 2 Re XY*, V = 2 Im XY*, XY* = <x_X conj(x_Y)> as the correlator
// forms it), measured on the samples the simulator generates.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <string>

#include "Polarisation.h"
#include "SimTestUtil.h"

namespace rtcp::sim::test {
namespace {

using cd = std::complex<double>;

struct Stokes {
  double i = 0, q = 0, u = 0, v = 0;
};

/// The Stokes fractions of a station's X and Y, from the autocorrelations (no receiver
/// noise: the autocorrelation of a source is its coherency at the phase centre).
Stokes measure(const std::vector<std::complex<float>>& x,
               const std::vector<std::complex<float>>& y) {
  double xx = 0, yy = 0;
  cd xy = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    xx += std::norm(cd(x[t]));
    yy += std::norm(cd(y[t]));
    xy += cd(x[t]) * std::conj(cd(y[t]));
  }
  const double i = xx + yy;
  return {i, (xx - yy) / i, 2 * xy.real() / i, 2 * xy.imag() / i};
}

/// A source at the beam centre with fractions q, u, v, in subbands 300 and 301, seen by
/// CS001 without receiver noise for 0.5 s (98 k samples: self-noise ~0.005 on a fraction).
Stokes observe(const std::string& fractions, int subband) {
  const std::string sky =
      "Sim.nrSources = 1\n"
      "Sim.Source[0].angle1 = 5.2336866848\n"
      "Sim.Source[0].angle2 = 0.7109425145\n"
      "Sim.Source[0].flux = 2.0\n"
      "Sim.noisePower = 0\n"
      "Sim.seed = 3\n" +
      fractions;
  const Generated g = generate(makeParset({"CS001"}, "[300, 301]", 16, sky), 0, 1 << 17);
  CPPUNIT_ASSERT_EQUAL(uint64_t(0), g.clipped);
  return measure(g.x[size_t(subband)][0], g.x[size_t(subband)][1]);
}

void assertStokes(const Stokes& expected, const Stokes& measured, const std::string& what) {
  const double tolerance = 0.02;
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": Q/I", expected.q, measured.q, tolerance);
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": U/I", expected.u, measured.u, tolerance);
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": V/I", expected.v, measured.v, tolerance);
}

}  // namespace

class PolarisedSourcesTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PolarisedSourcesTest);
  CPPUNIT_TEST(testCholeskyFactorGivesTheCoherency);
  CPPUNIT_TEST(testMixKernelMatchesComplexArithmetic);
  CPPUNIT_TEST(testUnpolarisedSource);
  CPPUNIT_TEST(testLinearlyPolarisedSource);
  CPPUNIT_TEST(testCircularlyPolarisedSource);
  CPPUNIT_TEST(testFullyPolarisedSources);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// L L^H = [[1 + q, u + i v], [u - i v, 1 - q]] for partial, full and edge cases.
  void testCholeskyFactorGivesTheCoherency() {
    const double cases[][3] = {{0, 0, 0}, {0.3, -0.4, 0.5}, {0, 0, -1},    {-1, 0, 0},
                               {1, 0, 0}, {0.6, 0.8, 0},    {0, 0.6, -0.8}};
    for (const auto& c : cases) {
      SimSource source;
      source.q = c[0];
      source.u = c[1];
      source.v = c[2];
      const PolarisationMix l = PolarisationMix::of(source);
      const cd l10(l.l10);
      const double xx = double(l.l00) * l.l00, yy = std::norm(l10) + double(l.l11) * l.l11;
      const cd xy = double(l.l00) * std::conj(l10);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1 + c[0], xx, 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1 - c[0], yy, 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(c[1], xy.real(), 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(c[2], xy.imag(), 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1 + std::abs(c[0]), l.peakPowerFactor(), 1e-6);
    }
  }

  /// The vectorised mixPair against plain complex arithmetic on random data.
  void testMixKernelMatchesComplexArithmetic() {
    SimSource source;
    source.q = 0.2;
    source.u = -0.5;
    source.v = 0.7;
    const PolarisationMix mix = PolarisationMix::of(source);
    const size_t n = 1001;
    std::vector<std::complex<float>> x(n), y(n);
    for (size_t i = 0; i < n; ++i) {
      x[i] = {std::sin(float(i) * 1.3f), std::cos(float(i) * 0.7f)};
      y[i] = {std::cos(float(i) * 2.9f), std::sin(float(i) * 0.37f)};
    }
    std::vector<std::complex<float>> mx = x, my = y;
    mix.apply(mx.data(), my.data(), n);
    for (size_t i = 0; i < n; ++i) {
      const cd ex = double(mix.l00) * cd(x[i]);
      const cd ey = cd(mix.l10) * cd(x[i]) + double(mix.l11) * cd(y[i]);
      CPPUNIT_ASSERT(std::abs(cd(mx[i]) - ex) < 1e-5 && std::abs(cd(my[i]) - ey) < 1e-5);
    }
  }

  void testUnpolarisedSource() { assertStokes({1, 0, 0, 0}, observe("", 0), "unpolarised"); }

  /// 58 % linearly polarised at position angle -15.5 degrees: Q = 0.5, U = -0.3.
  void testLinearlyPolarisedSource() {
    const std::string keys = "Sim.Source[0].Q = 0.5\nSim.Source[0].U = -0.3\n";
    assertStokes({1, 0.5, -0.3, 0}, observe(keys, 0), "linear, subband 300");
    assertStokes({1, 0.5, -0.3, 0}, observe(keys, 1), "linear, subband 301");
  }

  /// V = +0.7: X leads Y by a quarter turn on average (Im XY* > 0).
  void testCircularlyPolarisedSource() {
    const std::string keys = "Sim.Source[0].V = 0.7\n";
    assertStokes({1, 0, 0, 0.7}, observe(keys, 0), "circular, subband 300");
    assertStokes({1, 0, 0, 0.7}, observe(keys, 1), "circular, subband 301");
  }

  /// Fully polarised: all power in Y (Q = -1, the factor's edge case) and fully circular.
  void testFullyPolarisedSources() {
    assertStokes({1, -1, 0, 0}, observe("Sim.Source[0].Q = -1\n", 0), "Q = -1");
    assertStokes({1, 0, 0, -1}, observe("Sim.Source[0].V = -1\n", 0), "V = -1");
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PolarisedSourcesTest);

}  // namespace rtcp::sim::test
