// The simulator's physics, checked on its recordings without any filter bank: delays
// compensated independently (rtcp::DelayModel here) give zero-phase fringes with the
// source's power; uncompensated, the fringes have the phase the geometry predicts; a
// tone lands at its frequency, delayed like the sky; interference (Sim.rfi.*): a drifting
// signal follows its sweep, a noise-only station has the others' power and no correlation.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

#include "SimTestUtil.h"
#include "StationSimulator.h"
#include "rtcp/DelayModel.h"

namespace rtcp::sim::test {
namespace {

using cf = std::complex<float>;
using cd = std::complex<double>;
constexpr double kTwoPi = 2 * M_PI;

struct Recorded {
  ObservationSettings settings;
  std::vector<Decoded> stations;  ///< [station], single port
  uint64_t clipped = 0;
};

Recorded record(const std::string& parset, double seconds) {
  TempDir dir;
  Recorded r{settingsFrom(parset), {}, 0};
  SimulatorOptions options;
  options.recordDirectory = dir.path();
  options.duration = seconds;
  r.clipped = StationSimulator(r.settings, options).run().clipped;
  for (const StationSettings& station : r.settings.stations)
    r.stations.push_back(decodeRecording(dir / (station.name + ".rsp")));
  return r;
}

/// Delays toward a direction, linear in time between the recording's ends.
struct LinearDelays {
  std::vector<double> start, end;
  double t0, t1;
  double at(int station, double t) const {
    return start[station] + (end[station] - start[station]) * (t - t0) / (t1 - t0);
  }
};

LinearDelays delaysOf(const Recorded& r, const Direction& direction) {
  DelayModel model(r.settings);
  const SampleClock clock(r.settings.clockMHz);
  const Decoded& d = r.stations.front();
  LinearDelays delays;
  delays.t0 = clock.unixTime(d.firstSample);
  delays.t1 = clock.unixTime(d.firstSample + d.nrSamples);
  delays.start = model.delays(direction, delays.t0);
  delays.end = model.delays(direction, delays.t1);
  return delays;
}

const char* kSky =
    "Sim.nrSources = 1\n"
    "Sim.Source[0].angle1 = 5.30\n"
    "Sim.Source[0].angle2 = 0.80\n"
    "Sim.Source[0].flux = 2.0\n"
    "Sim.noisePower = 1.0\n"
    "Sim.seed = 11\n";

}  // namespace

class SignalPhysicsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SignalPhysicsTest);
  CPPUNIT_TEST(testCompensatedFringesHaveZeroPhaseAndSourcePower);
  CPPUNIT_TEST(testUncompensatedFringesFollowGeometry);
  CPPUNIT_TEST(testNoiselessFringesStayAtZeroPhaseEveryBlock);
  CPPUNIT_TEST(testToneLandsAtItsFrequencyWithItsDelay);
  CPPUNIT_TEST(testDriftFollowsItsSweep);
  CPPUNIT_TEST(testNoiseOnlyStationIsUncorrelated);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    if (!recorded_)
      recorded_ = std::make_unique<Recorded>(
          record(makeParset({"CS001", "RS106", "RS310"}, "[100, 300]", 16, kSky), 0.25));
  }

  /// Each station's stream read n_s = round(tau_s fs) samples early, each FFT bin rotated
  /// by exp(-2 pi i (nu tau_residual + f tau)): every baseline correlates to zero phase
  /// with the source's share of the power.
  void testCompensatedFringesHaveZeroPhaseAndSourcePower() {
    const Recorded& r = *recorded_;
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), r.clipped);
    const LinearDelays delays = delaysOf(r, r.settings.sim.sources[0].direction);
    const double fs = r.settings.subbandWidth(), tMid = (delays.t0 + delays.t1) / 2;
    const int nStations = int(r.stations.size()), block = 256;
    const int64_t n = r.stations[0].nrSamples;
    std::vector<int> shift(nStations);
    for (int s = 0; s < nStations; ++s) shift[s] = int(std::lround(delays.at(s, tMid) * fs));
    Fftw fft(block);
    for (int b = 0; b < r.settings.nrSubbands(); ++b) {
      const double f = r.settings.subbands[b].frequency;
      for (int pol = 0; pol < 2; ++pol) {
        std::vector<cd> cross(nStations * nStations);
        std::vector<double> autos(nStations);
        int64_t samples = 0;
        for (int64_t start = 64; start + block + 64 <= n; start += block, samples += block) {
          const double t = delays.t0 + (start + block / 2.0) / fs;
          std::vector<std::vector<cd>> spectra(nStations, std::vector<cd>(block));
          for (int s = 0; s < nStations; ++s) {
            const auto& x =
                fft(r.stations[s].samples.data() + (size_t(b) * 2 + pol) * n + start - shift[s]);
            const double tau = delays.at(s, t), residual = tau - shift[s] / fs;
            for (int k = 0; k < block; ++k)
              spectra[s][k] =
                  cd(x[k]) *
                  std::polar(1.0, -kTwoPi * (fft.frequency(k) * fs * residual + f * tau));
          }
          for (int s1 = 0; s1 < nStations; ++s1)
            for (int s2 = 0; s2 < nStations; ++s2)
              for (int k = 0; k < block; ++k)
                cross[s1 * nStations + s2] += spectra[s1][k] * std::conj(spectra[s2][k]);
        }
        for (int s = 0; s < nStations; ++s) autos[s] = cross[s * nStations + s].real();
        // Power per polarisation: flux/2 + noise = 2, scaled to 1024 rms per component.
        for (int s = 0; s < nStations; ++s)
          CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0 * 1024 * 1024, autos[s] / (double(samples) * block),
                                       0.03 * 2 * 1024 * 1024);
        for (int s1 = 0; s1 < nStations; ++s1)
          for (int s2 = s1 + 1; s2 < nStations; ++s2) {
            const cd c = cross[s1 * nStations + s2] / std::sqrt(autos[s1] * autos[s2]);
            CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, std::arg(c) * 180 / M_PI, 2.0);
            CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, std::abs(c), 0.02);  // (flux/2) / (flux/2 + noise)
          }
      }
    }
  }

  /// Without compensation, bin k of baseline (s1, s2) has phase 2 pi (f + nu_k)(tau_1 - tau_2)
  /// at the middle of the recording.
  void testUncompensatedFringesFollowGeometry() {
    const Recorded& r = *recorded_;
    const LinearDelays delays = delaysOf(r, r.settings.sim.sources[0].direction);
    const double fs = r.settings.subbandWidth(), tMid = (delays.t0 + delays.t1) / 2;
    const int block = 512;
    const int64_t n = r.stations[0].nrSamples;
    Fftw fft(block);
    double largestDelay = 0;  // samples
    for (int b = 0; b < r.settings.nrSubbands(); ++b) {
      const double f = r.settings.subbands[b].frequency;
      for (int s2 = 1; s2 < int(r.stations.size()); ++s2) {
        std::vector<cd> cross(block);
        for (int64_t start = 0; start + block <= n; start += block) {
          const std::vector<cf> x1 = fft(r.stations[0].at(b, 0) + start);
          const auto& x2 = fft(r.stations[s2].at(b, 0) + start);
          for (int k = 0; k < block; ++k) cross[k] += cd(x1[k]) * std::conj(cd(x2[k]));
        }
        const double dtau = delays.at(0, tMid) - delays.at(s2, tMid);
        largestDelay = std::max(largestDelay, std::abs(dtau) * fs);
        cd agreement = 0;
        for (int k = 0; k < block; ++k)
          agreement +=
              std::polar(1.0, std::arg(cross[k]) - kTwoPi * (f + fft.frequency(k) * fs) * dtau);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, std::arg(agreement) * 180 / M_PI, 4.0);
        CPPUNIT_ASSERT(std::abs(agreement) / block > 0.7);  // bins agree with each other
      }
    }
    CPPUNIT_ASSERT(largestDelay > 10);  // CS001-RS310: many samples, many fringes across the band
  }

  /// Without receiver noise, two stations see the same e(t): compensated, every block of
  /// 256 samples has zero phase, also within a chunk (the LO phase follows tau(t) per
  /// sample; a delay held per chunk leaves a sawtooth of +-5 degrees on CS001-RS310 here).
  void testNoiselessFringesStayAtZeroPhaseEveryBlock() {
    const Recorded r = record(makeParset({"CS001", "RS310"}, "[400]", 16,
                                         "Sim.nrSources = 1\nSim.Source[0].angle1 = 4.2\n"
                                         "Sim.Source[0].angle2 = 0.5\nSim.Source[0].flux = 2.0\n"
                                         "Sim.noisePower = 0\n"),
                              0.2);
    const LinearDelays delays = delaysOf(r, r.settings.sim.sources[0].direction);
    const double fs = r.settings.subbandWidth(), f = r.settings.subbands[0].frequency;
    const double tMid = (delays.t0 + delays.t1) / 2;
    const int block = 256;
    const int64_t n = r.stations[0].nrSamples;
    int shift[2];
    for (int s = 0; s < 2; ++s) shift[s] = int(std::lround(delays.at(s, tMid) * fs));
    Fftw fft(block);
    double worst = 0;
    for (int64_t start = 64; start + block + 64 <= n; start += block) {
      const double t = delays.t0 + (start + block / 2.0) / fs;
      cd cross = 0;
      std::vector<cd> spectrum[2];
      for (int s = 0; s < 2; ++s) {
        const auto& x = fft(r.stations[s].at(0, 0) + start - shift[s]);
        const double tau = delays.at(s, t), residual = tau - shift[s] / fs;
        for (int k = 0; k < block; ++k)
          spectrum[s].push_back(
              cd(x[k]) * std::polar(1.0, -kTwoPi * (fft.frequency(k) * fs * residual + f * tau)));
      }
      for (int k = 0; k < block; ++k) cross += spectrum[0][k] * std::conj(spectrum[1][k]);
      worst = std::max(worst, std::abs(std::arg(cross)) * 180 / M_PI);
    }
    CPPUNIT_ASSERT(std::abs(delays.at(0, tMid) - delays.at(1, tMid)) * fs > 10);
    // ~1 degree remains at chunk edges: the band-limited shift's sinc tails beyond the
    // overlap-save margin (-30 dB there); a delay held per chunk gives ~5 degrees.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, worst, 2.5);
  }

  /// A tone at sky frequency f_tone appears in bin (f_tone - f_subband) / fs * N, with the
  /// phase 2 pi f_tone (tau_1 - tau_2) between stations (delays toward the beam).
  void testToneLandsAtItsFrequencyWithItsDelay() {
    const ObservationSettings probe = settingsFrom(makeParset({"CS001"}, "[300]", 16, ""));
    const double fs = probe.subbandWidth(), f = probe.subbands[0].frequency;
    const int size = 4096, bin = 1234;
    const double tone = f + (bin + 0.25) * fs / size;  // not bin-centred: still the peak
    const Recorded r =
        record(makeParset({"CS001", "RS106"}, "[299..301]", 8,
                          "Sim.noisePower = 1.0\nSim.tone.frequency = " + std::to_string(tone) +
                              "\nSim.tone.amplitude = 0.5\nSim.seed = 3\n"),
               0.05);
    const LinearDelays delays = delaysOf(r, r.settings.beams[0]);
    Fftw fft(size);
    for (int b = 0; b < 3; ++b) {
      std::vector<std::vector<cf>> spectra;
      for (const Decoded& d : r.stations) spectra.push_back(fft(d.at(b, 1)));
      int peak = 0;
      for (int k = 0; k < size; ++k)
        if (std::norm(spectra[0][k]) > std::norm(spectra[0][peak])) peak = k;
      const double peakToMean = std::norm(spectra[0][peak]) * size /
                                std::accumulate(spectra[0].begin(), spectra[0].end(), 0.0,
                                                [](double a, cf x) { return a + std::norm(x); });
      if (b != 1) {  // the tone lies in subband 300 only
        CPPUNIT_ASSERT(peakToMean < 30);
        continue;
      }
      CPPUNIT_ASSERT_EQUAL(bin, peak);
      CPPUNIT_ASSERT(peakToMean > 100);
      const double t = delays.t0 + size / 2.0 / fs;
      const double expected = kTwoPi * tone * (delays.at(0, t) - delays.at(1, t));
      const double phase = std::arg(cd(spectra[0][peak]) * std::conj(cd(spectra[1][peak])) *
                                    std::polar(1.0, -expected));
      CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, phase * 180 / M_PI, 3.0);
    }
  }

  /// Sim.rfi.drift.*: in every 1024-sample window of CS001 the strongest bin is the sweep's
  /// frequency f0 + r τ (τ on the sample clock, modulo the period) within 2 bins; RS106,
  /// not listed in drift.stations, has none.
  void testDriftFollowsItsSweep() {
    const Recorded& r = interfered();
    const double fs = r.settings.subbandWidth(), f = r.settings.subbands[0].frequency;
    const SimRfi& rfi = r.settings.sim.rfi;
    const int size = 1024;
    Fftw fft(size);
    int windows = 0;
    for (int64_t start = 0; start + size <= r.stations[0].nrSamples; start += size, ++windows) {
      const int64_t middle = r.stations[0].firstSample + start + size / 2;
      const long double tau = fmodl((long double)middle / fs, (long double)rfi.driftPeriod);
      const double expected = (rfi.driftFrequency + rfi.driftRate * double(tau) - f) / fs * size;
      for (int s = 0; s < 2; ++s) {
        const auto& x = fft(r.stations[size_t(s)].at(0, 0) + start);
        int peak = 0;
        double total = 0;
        for (int k = 0; k < size; ++k) {
          total += std::norm(x[size_t(k)]);
          if (std::norm(x[size_t(k)]) > std::norm(x[size_t(peak)])) peak = k;
        }
        const double peakToMean = std::norm(x[size_t(peak)]) * size / total;
        const double bin = fft.frequency(peak) * size;
        if (s == 0) {
          CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(std::to_string(start), expected, bin, 2.0);
          CPPUNIT_ASSERT(peakToMean > 20);
        } else {
          CPPUNIT_ASSERT(peakToMean < 20);
        }
      }
    }
    CPPUNIT_ASSERT(windows >= 40);
  }

  /// Sim.rfi.noiseOnlyStations: RS310 has the power of a station with sky and noise, and
  /// correlates with no other station at any lag (|ρ| < 0.02), where CS001 and RS106 do
  /// (> 0.3 at the lag of their delay difference).
  void testNoiseOnlyStationIsUncorrelated() {
    const Recorded& r = interfered();
    const int64_t n = r.stations[0].nrSamples;
    auto power = [&](int s) {
      double sum = 0;
      for (int64_t t = 0; t < n; ++t) sum += std::norm(r.stations[size_t(s)].at(0, 1)[t]);
      return sum / double(n);
    };
    auto bestCorrelation = [&](int s1, int s2) {
      const cf* x = r.stations[size_t(s1)].at(0, 1);
      const cf* y = r.stations[size_t(s2)].at(0, 1);
      double best = 0;
      for (int lag = -64; lag <= 64; ++lag) {
        cd sum;
        for (int64_t t = 64; t < n - 64; ++t) sum += cd(x[t]) * std::conj(cd(y[t + lag]));
        best = std::max(best, std::abs(sum) / double(n - 128));
      }
      return best / std::sqrt(power(s1) * power(s2));
    };
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, power(2) / power(1), 0.05);
    CPPUNIT_ASSERT(bestCorrelation(1, 0) > 0.3);
    CPPUNIT_ASSERT(bestCorrelation(2, 0) < 0.02);
    CPPUNIT_ASSERT(bestCorrelation(2, 1) < 0.02);
  }

 private:
  /// CS001 with a drifting signal, RS106 plain, RS310 noise only: subband 300, 0.25 s.
  static const Recorded& interfered() {
    static std::unique_ptr<Recorded> r;
    if (!r) {
      const double fs = 195312.5, f = 300 * fs;
      r = std::make_unique<Recorded>(
          record(makeParset({"CS001", "RS106", "RS310"}, "[300]", 16,
                            std::string(kSky) +
                                "Sim.rfi.drift.frequency = " + std::to_string(f - 0.3 * fs) +
                                "\nSim.rfi.drift.rate = " + std::to_string(0.3 * fs) +
                                "\nSim.rfi.drift.period = 2\nSim.rfi.drift.amplitude = 1\n"
                                "Sim.rfi.drift.stations = [CS001LBA]\n"
                                "Sim.rfi.noiseOnlyStations = [RS310LBA]\n"),
                 0.25));
    }
    return *r;
  }
  static std::unique_ptr<Recorded> recorded_;
};

std::unique_ptr<Recorded> SignalPhysicsTest::recorded_;

CPPUNIT_TEST_SUITE_REGISTRATION(SignalPhysicsTest);

}  // namespace rtcp::sim::test
