#include "rtcp/StationFilter.h"

#include <fftw3.h>

#include <cmath>
#include <complex>
#include <mutex>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>

#include "rtcp/FftwPlanner.h"

namespace rtcp {

namespace detail {
/// The embedded coefficients (generated from common/data/StationFilterCoefficients.txt).
extern const int32_t kStationFilterCoefficients[StationFilter::kLength];
}  // namespace detail

namespace {

using Complex = std::complex<double>;
constexpr double kTwoPi = 2 * std::numbers::pi;
/// Grid of the cepstrum that factors the aliased power (far finer than its 16 lags).
constexpr int kCepstrumSize = 4096;

Complex turnsToPhasor(double turns) { return std::polar(1.0, kTwoPi * turns); }

/// A one-off FFTW (double) transform of `data` in place.
void transform(std::vector<Complex>& data, int sign) {
  fftw_complex* buffer = reinterpret_cast<fftw_complex*>(data.data());
  fftw_plan plan;
  {
    std::lock_guard lock(fftwPlannerMutex());
    plan = fftw_plan_dft_1d(int(data.size()), buffer, buffer, sign, FFTW_ESTIMATE);
  }
  fftw_execute(plan);
  std::lock_guard lock(fftwPlannerMutex());
  fftw_destroy_plan(plan);
}

int nextPowerOfTwo(int n) {
  int size = 1;
  while (size < n) size *= 2;
  return size;
}

}  // namespace

const StationFilter& StationFilter::lofar() {
  static const StationFilter filter;
  return filter;
}

StationFilter::StationFilter() : coefficients_(detail::kStationFilterCoefficients, kLength) {
  dcGain_ = double(std::accumulate(coefficients_.begin(), coefficients_.end(), int64_t(0)));
  for (int tau = 0; tau < kNrTaps; ++tau) {
    int64_t sum = 0;
    for (int l = 0; l + tau * kNrSubbands < kLength; ++l)
      sum += int64_t(coefficients_[l]) * coefficients_[l + tau * kNrSubbands];
    autocorrelation_[tau] = kNrSubbands * double(sum) / (dcGain_ * dcGain_);
  }

  // Minimum-phase spectral factor of the aliased power by its cepstrum: the causal half
  // of the cepstrum of log P is log G, so |G|^2 = P and G has no zeros outside the unit
  // circle; its impulse response ends after 16 taps (P is a trigonometric polynomial of
  // degree 15).
  std::vector<Complex> spectrum(kCepstrumSize);
  for (int j = 0; j < kCepstrumSize; ++j)
    spectrum[j] = std::log(aliasedPower(double(j) / kCepstrumSize));
  transform(spectrum, FFTW_BACKWARD);  // cepstrum c x K: real and even
  // log G = (1/2) log P + i (its Hilbert transform): c/2 at 0 and K/2, c at 1..K/2-1.
  for (int n = 0; n < kCepstrumSize; ++n)
    spectrum[n] *= n == 0 || n == kCepstrumSize / 2 ? 0.5 : n < kCepstrumSize / 2 ? 1.0 : 0.0;
  for (Complex& c : spectrum) c /= kCepstrumSize;
  transform(spectrum, FFTW_FORWARD);  // log G
  for (Complex& c : spectrum) c = std::exp(c);
  transform(spectrum, FFTW_BACKWARD);  // g x K
  for (int n = 0; n < kNrTaps; ++n) noiseShaping_[n] = spectrum[n].real() / kCepstrumSize;
}

double StationFilter::response(double nu) const {
  // Symmetric taps: H(nu) exp(2 pi i nu c / 1024) = 2 sum_{l < L/2} h[l] cos(2 pi nu (c - l) /
  // 1024).
  const double centre = (kLength - 1) / 2.0;
  double sum = 0;
  for (int l = 0; l < kLength / 2; ++l)
    sum += coefficients_[l] * std::cos(kTwoPi * nu * (centre - l) / kNrSubbands);
  return 2 * sum / dcGain_;
}

std::vector<double> StationFilter::responseGrid(double first, double step, int count) const {
  if (count <= 0) return {};
  // Bluestein: X_k = sum_n h_n exp(-2 pi i phi_k (n - c)), phi_k = (first + k step) / 1024.
  // With k n = (k^2 + n^2 - (k - n)^2) / 2 the sum over n is the convolution of
  // y_n = h_n exp(-2 pi i (phi_0 n + beta n^2 / 2)) with w_j = exp(2 pi i beta j^2 / 2),
  // beta = step / 1024, evaluated by FFTs of at least L + count - 1 points.
  const long double beta = (long double)step / kNrSubbands;
  const auto chirpTurns = [&](int64_t j) {  // beta j^2 / 2, reduced to [0, 1) in long double
    const long double turns = (long double)(j * j) * beta / 2;
    return double(turns - std::floor(turns));
  };
  const int size = nextPowerOfTwo(kLength + count - 1);
  std::vector<Complex> y(size), w(size);
  const double phi0 = first / kNrSubbands;
  for (int n = 0; n < kLength; ++n)
    y[n] = double(coefficients_[n]) *
           turnsToPhasor(-(phi0 * n - std::floor(phi0 * n)) - chirpTurns(n));
  for (int j = -(kLength - 1); j < count; ++j) w[(j + size) % size] = turnsToPhasor(chirpTurns(j));
  transform(y, FFTW_FORWARD);
  transform(w, FFTW_FORWARD);
  for (int i = 0; i < size; ++i) y[i] *= w[i];
  transform(y, FFTW_BACKWARD);

  const double centre = (kLength - 1) / 2.0;
  std::vector<double> result(static_cast<size_t>(count));
  for (int k = 0; k < count; ++k) {
    const double phi = (first + k * step) / kNrSubbands;
    const Complex x = y[k] / double(size) * turnsToPhasor(phi * centre - chirpTurns(k));
    result[size_t(k)] = x.real() / dcGain_;  // the imaginary part vanishes (symmetric taps)
  }
  return result;
}

double StationFilter::aliasedPower(double nu) const {
  double power = autocorrelation_[0];
  for (int tau = 1; tau < kNrTaps; ++tau)
    power += 2 * autocorrelation_[tau] * std::cos(kTwoPi * nu * tau);
  return power;
}

std::vector<double> StationFilter::bandpassCorrection(int nrChannels) const {
  if (nrChannels < 1 || (nrChannels & (nrChannels - 1)) != 0)
    throw std::invalid_argument("station bandpass correction: " + std::to_string(nrChannels) +
                                " channels per subband is not a power of two");
  if (nrChannels == 1) return {1.0};
  // 2^25 / sqrt(sum_m |H_raw|^2) = (2^25 / H(0)) / sqrt(aliasedPower).
  const double scale = std::ldexp(1.0, 25) / dcGain_;
  std::vector<double> gains(static_cast<size_t>(nrChannels));
  for (int c = 0; c < nrChannels; ++c)
    gains[size_t(c)] = scale / std::sqrt(aliasedPower(double(c - nrChannels / 2) / nrChannels));
  return gains;
}

}  // namespace rtcp
