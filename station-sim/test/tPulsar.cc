// Pulsars (Sim.Source[i].pulsar.*), measured on the samples the simulator generates for
// one station (CS001, no receiver noise), each pulse folded at the period: without
// dispersion a pulse peaks at the epoch with its intrinsic width; with a dispersion
// measure it arrives at k DM / f^2 in each subband, smeared within the subband as the
// cold-plasma law and the station filter predict; de-chirped here (with the inverse of
// the exact dispersion filter) it regains its intrinsic width at the subband centre's
// arrival time, which proves the simulator's chirp exact.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "SimTestUtil.h"
#include "rtcp/DelayModel.h"
#include "rtcp/StationFilter.h"

namespace rtcp::sim::test {
namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;

/// The test's own cold-plasma law: k in s MHz^2 cm^3 / pc, frequencies in Hz.
constexpr double kDispersion = 4.148808e3;
double dmDelay(double dm, double frequency) {
  return kDispersion * dm / ((frequency / 1e6) * (frequency / 1e6));
}

constexpr double kSigmaPerFwhm = 1 / 2.354820045;  // 1 / sqrt(8 ln 2)

/// A pulsar at the beam centre, seen by CS001 alone without receiver noise.
std::string pulsarParset(const std::string& subbands, double period, double width, double dm) {
  const std::string sky =
      "Sim.nrSources = 1\n"
      "Sim.Source[0].angle1 = 5.2336866848\n"
      "Sim.Source[0].angle2 = 0.7109425145\n"
      "Sim.Source[0].flux = 10\n"
      "Sim.Source[0].pulsar.period = " +
      std::to_string(period) +
      "\n"
      "Sim.Source[0].pulsar.width = " +
      std::to_string(width) +
      "\n"
      "Sim.Source[0].pulsar.epoch = '2026-11-22 20:00:00.0123'\n"
      "Sim.Source[0].pulsar.dispersionMeasure = " +
      std::to_string(dm) +
      "\n"
      "Sim.noisePower = 0\n"
      "Sim.seed = 5\n";
  return makeParset({"CS001"}, subbands, 16, sky);
}

/// Where a sample lies relative to the pulse expected at the station: the pulse peaks at
/// the reference position at epoch + n period + delay, and CS001 receives it tau earlier.
struct Timing {
  long double peak;  ///< one expected peak at the station, Unix seconds
  double period, sampleRate;
  int64_t firstSample;
  /// Samples from the nearest expected peak, for sample j of the series.
  double offset(size_t j) const {
    const long double t = static_cast<long double>(firstSample + int64_t(j)) / sampleRate;
    const long double turns = (t - peak) / period;
    return double(turns - std::floor(turns + 0.5L)) * period * sampleRate;
  }
};

Timing timingOf(const Generated& g, double delay) {
  const ObservationSettings& s = g.settings;
  const SimSource& source = s.sim.sources.at(0);
  const double fs = s.subbandWidth();
  const double middle = (double(g.firstSample) + double(g.x[0][0].size()) / 2) / fs;
  const double tau = DelayModel(s).delays(source.direction, middle).at(0);
  const long double epoch = (static_cast<long double>(source.pulsar.epochMjd) - 40587) * 86400;
  return {epoch + delay - tau, source.pulsar.period, fs, g.firstSample};
}

/// Centroid and rms width (samples) of the power |x|^2 + |y|^2 within `window` samples
/// of the expected peaks, leaving out `edge` samples at either end of the series.
struct Moments {
  double mean = 0, sigma = 0;
};

Moments moments(const std::vector<cf>& x, const std::vector<cf>& y, const Timing& timing,
                double window, size_t edge = 0) {
  double w = 0, sum = 0, squares = 0;
  for (size_t j = edge; j + edge < x.size(); ++j) {
    const double o = timing.offset(j);
    if (std::abs(o) > window) continue;
    const double p = std::norm(cd(x[j])) + std::norm(cd(y[j]));
    w += p;
    sum += p * o;
    squares += p * o * o;
  }
  const double mean = sum / w;
  return {mean, std::sqrt(squares / w - mean * mean)};
}

/// The dispersed pulse's expected centroid and rms width (samples) in the baseband range
/// [lowest, highest) (subband widths): sky frequency f_c + (nu + m) fs arrives
/// t_DM(f) - t_DM(f_c) after the centre's, with the station filter's power |H(nu + m)|^2
/// (its own band and the aliased neighbours), each spread by the intrinsic width.
Moments predicted(double dm, double centre, double fs, double width, double lowest,
                  double highest) {
  // Sky frequencies x in [-1.5, 1.5) subband widths from the centre, at baseband
  // nu = x - m in band m = round(x).
  const int steps = 12000;
  const double step = 3.0 / steps;
  const std::vector<double> h = StationFilter::lofar().responseGrid(-1.5 + step / 2, step, steps);
  double w = 0, sum = 0, squares = 0;
  for (int i = 0; i < steps; ++i) {
    const double x = -1.5 + (i + 0.5) * step, nu = x - std::round(x);
    if (nu < lowest || nu >= highest) continue;
    const double power = h[size_t(i)] * h[size_t(i)];
    const double delay = (dmDelay(dm, centre + x * fs) - dmDelay(dm, centre)) * fs;
    w += power;
    sum += power * delay;
    squares += power * delay * delay;
  }
  const double mean = sum / w, intrinsic = width * kSigmaPerFwhm * fs;
  return {mean, std::sqrt(squares / w - mean * mean + intrinsic * intrinsic)};
}

/// series filtered in frequency: bin nu (Hz, signed) multiplied by filter(nu).
template <typename Filter>
std::vector<cf> filtered(const std::vector<cf>& series, double fs, Filter filter) {
  const int n = int(series.size());
  Fftw forward(n), backward(n, FFTW_BACKWARD);
  std::vector<cf> spectrum = forward(series.data());
  for (int k = 0; k < n; ++k)
    spectrum[size_t(k)] *= cf(filter(forward.frequency(k) * fs) / double(n));
  return backward(spectrum.data());
}

}  // namespace

class PulsarTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PulsarTest);
  CPPUNIT_TEST(testPulseArrivesAtEpochWithIntrinsicWidth);
  CPPUNIT_TEST(testArrivalFollowsColdPlasmaLawAcrossSubbands);
  CPPUNIT_TEST(testDispersionSmearsWithinSubbandAndDechirpRestoresPulse);
  CPPUNIT_TEST(testSweepBeyondChunksIsRefusedNamingTheKey);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// DM 0: 200 pulses of 0.25 ms (FWHM, 48.8 samples) every 20 ms peak at epoch + n
  /// period (less CS001's geometric delay) within a sample, with the intrinsic width.
  void testPulseArrivesAtEpochWithIntrinsicWidth() {
    const double width = 0.25e-3;
    const Generated g = generate(pulsarParset("[300]", 0.02, width, 0), 0, 781250);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), g.clipped);
    const double fs = g.settings.subbandWidth();
    const Moments m = moments(g.x[0][0], g.x[0][1], timingOf(g, 0), 5 * width * fs);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("arrival (samples)", 0.0, m.mean, 1.0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("rms width (samples)", width * kSigmaPerFwhm * fs, m.sigma,
                                         0.05 * width * kSigmaPerFwhm * fs);
    // Between pulses the source is silent: the mean power there is below -40 dB of the
    // pulse's within a width of its peak (the station filter's tails).
    const Timing timing = timingOf(g, 0);
    double on = 0, off = 0;
    int64_t nrOn = 0, nrOff = 0;
    for (size_t j = 0; j < g.x[0][0].size(); ++j) {
      const double o = std::abs(timing.offset(j)) / (width * fs);
      const double p = std::norm(cd(g.x[0][0][j])) + std::norm(cd(g.x[0][1][j]));
      if (o < 1) on += p, ++nrOn;
      if (o > 6) off += p, ++nrOff;
    }
    CPPUNIT_ASSERT(off / double(nrOff) < 1e-4 * on / double(nrOn));
  }

  /// DM 0.1 in subbands 300 and 400 (58.6 and 78.1 MHz): the pulse arrives k DM / f^2
  /// after the epoch (120.8 and 68.0 ms) in each, within a sample; the pulse within
  /// subband 300 is smeared over 0.81 ms (157 samples).
  void testArrivalFollowsColdPlasmaLawAcrossSubbands() {
    const double width = 0.25e-3, dm = 0.1;
    const Generated g = generate(pulsarParset("[300, 400]", 0.02, width, dm), 0, 781250);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), g.clipped);
    const double fs = g.settings.subbandWidth();
    for (int b = 0; b < 2; ++b) {
      const double f = g.settings.subbands[size_t(b)].frequency;
      const double sweep = (dmDelay(dm, f - fs / 2) - dmDelay(dm, f + fs / 2)) * fs;
      const Timing timing = timingOf(g, dmDelay(dm, f));
      const Moments m =
          moments(g.x[size_t(b)][0], g.x[size_t(b)][1], timing, sweep + 5 * width * fs);
      // (Undispersed, it would lie 164 and 1557 samples earlier, modulo the period.)
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("arrival in subband " + std::to_string(b), 0.0, m.mean,
                                           1.0);
    }
  }

  /// DM 2 in subband 300 (58.6 MHz): the pulse of 0.5 ms is smeared over the sweep
  /// k DM (f_lo^-2 - f_hi^-2) = 16.1 ms, with the centroid and rms width the cold-plasma law
  /// and the station filter predict; the lower half of the subband arrives later than the
  /// upper half; de-chirped by exp(-2 pi i k DM (1/f - 1/f_c + nu/f_c^2)), it has its
  /// intrinsic width again, at the arrival time of the subband centre.
  void testDispersionSmearsWithinSubbandAndDechirpRestoresPulse() {
    const double width = 0.5e-3, dm = 2, period = 0.05;
    const Generated g = generate(pulsarParset("[300]", period, width, dm), 0, 1 << 19);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), g.clipped);
    const double fs = g.settings.subbandWidth(), fc = g.settings.subbands[0].frequency;
    const Timing timing = timingOf(g, dmDelay(dm, fc));
    const std::vector<cf>&x = g.x[0][0], &y = g.x[0][1];
    const double sweep = (dmDelay(dm, fc - fs / 2) - dmDelay(dm, fc + fs / 2)) * fs;
    const double intrinsic = width * kSigmaPerFwhm * fs;

    const Moments smeared = moments(x, y, timing, period * fs / 2);
    const Moments expected = predicted(dm, fc, fs, width, -0.5, 0.5);
    CPPUNIT_ASSERT(expected.sigma > 0.25 * sweep);  // about sweep / sqrt(12), and more
    // The smeared pulse holds as many independent samples as the intrinsic one (~100 per
    // pulse and polarisation): its centroid is known to ~7 samples, its width to ~1 %.
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("smeared centroid", expected.mean, smeared.mean,
                                         0.01 * sweep);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("smeared rms width", expected.sigma, smeared.sigma,
                                         0.03 * expected.sigma);

    // The halves of the band: low frequencies later (edges left out: the split wraps).
    const size_t edge = size_t(2 * sweep);
    const auto lower = [](double nu) { return nu < 0 ? 1.0 : 0.0; };
    const auto upper = [](double nu) { return nu >= 0 ? 1.0 : 0.0; };
    const Moments low =
        moments(filtered(x, fs, lower), filtered(y, fs, lower), timing, period * fs / 2, edge);
    const Moments high =
        moments(filtered(x, fs, upper), filtered(y, fs, upper), timing, period * fs / 2, edge);
    const double expectedLag =
        predicted(dm, fc, fs, width, -0.5, 0).mean - predicted(dm, fc, fs, width, 0, 0.5).mean;
    CPPUNIT_ASSERT(expectedLag > 0.4 * sweep);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("lower half's lag", expectedLag, low.mean - high.mean,
                                         0.03 * expectedLag);

    // De-chirped with the exact inverse of the dispersion within the subband.
    const double kHz2 = kDispersion * dm * 1e12;  // s Hz^2
    const auto dechirp = [&](double nu) {
      const double turns = kHz2 * (1 / (fc + nu) - 1 / fc + nu / (fc * fc));
      return std::polar(1.0, -2 * M_PI * (turns - std::floor(turns)));
    };
    const Moments restored =
        moments(filtered(x, fs, dechirp), filtered(y, fs, dechirp), timing, 5 * width * fs, edge);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("de-chirped arrival", 0.0, restored.mean, 1.0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("de-chirped rms width", intrinsic, restored.sigma,
                                         0.05 * intrinsic);
  }

  /// DM 500 at 58.6 MHz sweeps 4 s across a subband: more than chunks of 2^22 samples hold.
  void testSweepBeyondChunksIsRefusedNamingTheKey() {
    const ObservationSettings settings = settingsFrom(pulsarParset("[300]", 1, 0.01, 500));
    try {
      StationSimulator simulator(settings, SimulatorOptions{});
      CPPUNIT_FAIL("a dispersion sweep beyond the chunks was accepted");
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      CPPUNIT_ASSERT_MESSAGE(
          message, message.find("Sim.Source[0].pulsar.dispersionMeasure") != std::string::npos &&
                       message.find("subband 300") != std::string::npos);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PulsarTest);

}  // namespace rtcp::sim::test
