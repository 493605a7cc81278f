#include "CoherentDedispersion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>
#include <stdexcept>
#include <string>

namespace rtcp::correlator::beamformed {

DedispersionFft::DedispersionFft(int fftSize)
    : size(fftSize), forward(fftSize, 1, 2, fftSize, 1, 0, FFTW_FORWARD) {}

int CoherentDedispersion::fftSizeFor(int latency) {
  int size = 1024;
  while (size < 8 * latency) size *= 2;
  return size;
}

CoherentDedispersion::CoherentDedispersion(int fftSize, int latency, double subbandWidth,
                                           double subbandFrequency, int nrChannels,
                                           double dispersionMeasure)
    : fftSize_(fftSize),
      latency_(latency),
      overlap_(2 * latency),
      dispersionMeasure_(dispersionMeasure),
      chirp_(size_t(fftSize)),
      history_(2 * size_t(overlap_)),
      validHistory_(size_t(latency)) {
  if (latency < 0 || fftSize <= overlap_)
    throw std::invalid_argument("CoherentDedispersion: an FFT of " + std::to_string(fftSize) +
                                " points for a latency of " + std::to_string(latency) +
                                " samples (needs more than twice the latency)");
  const double width = subbandWidth / nrChannels;
  for (int k = 0; k < fftSize; ++k) {
    const double baseband = (k < fftSize / 2 ? k : k - fftSize) * subbandWidth / fftSize;
    const double f = subbandFrequency + baseband;
    const double f0 = subbandFrequency + std::round(baseband / width) * width;
    const double df = f - f0;
    const double phase = -2 * std::numbers::pi *
                         (kDispersionConstant * dispersionMeasure * df * df / (f0 * f0 * f) +
                          baseband * latency / subbandWidth);
    chirp_[size_t(k)] = std::complex<float>(std::polar(1.0 / fftSize, phase));
  }
}

void CoherentDedispersion::reset() {
  std::fill(history_.begin(), history_.end(), std::complex<float>());
  std::fill(validHistory_.begin(), validHistory_.end(), 0.0f);
}

void CoherentDedispersion::multiplyByChirpConjugated(std::complex<float>* spectrum) const {
  // As floats: std::complex's operator* checks every product for NaNs (C99 Annex G), which
  // keeps the loop from being vectorised.
  float* x = reinterpret_cast<float*>(spectrum);
  const float* h = reinterpret_cast<const float*>(chirp_.data());
  for (size_t k = 0; k < size_t(fftSize_); ++k) {
    const float re = x[2 * k] * h[2 * k] - x[2 * k + 1] * h[2 * k + 1];
    const float im = x[2 * k] * h[2 * k + 1] + x[2 * k + 1] * h[2 * k];
    x[2 * k] = re;
    x[2 * k + 1] = -im;
  }
}

void CoherentDedispersion::process(const DedispersionFft& fft, std::complex<float>* samples,
                                   float* valid, int nrSamples, std::complex<float>* scratch) {
  if (fft.size != fftSize_)
    throw std::invalid_argument("CoherentDedispersion: plans of " + std::to_string(fft.size) +
                                " points for FFTs of " + std::to_string(fftSize_));
  const size_t n = size_t(fftSize_), overlap = size_t(overlap_);
  const size_t segment = n - overlap;  // new samples per FFT
  for (size_t first = 0; first < size_t(nrSamples); first += segment) {
    const size_t count = std::min(segment, size_t(nrSamples) - first);
    // Per polarisation [history | count new samples | zeros]: the outputs at [overlap,
    // overlap + count) depend only on inputs at or before them.
    for (size_t pol = 0; pol < 2; ++pol) {
      std::complex<float>* series = scratch + pol * n;
      std::complex<float>* history = history_.data() + pol * overlap;
      std::copy_n(history, overlap, series);
      for (size_t t = 0; t < count; ++t) series[overlap + t] = samples[2 * (first + t) + pol];
      std::fill(series + overlap + count, series + n, std::complex<float>());
      std::copy_n(series + count, overlap, history);
    }
    // The inverse FFT as conj(FFT(conj(spectrum))): the conjugations ride on the chirp's
    // pass and the copy out, and only one plan is made (FFTW_MEASURE took 6-8 s for each
    // 65536-point plan on a loaded 2-core guest, while the ranks prepare their subbands).
    fft.forward.execute(scratch);
    multiplyByChirpConjugated(scratch);
    multiplyByChirpConjugated(scratch + n);
    fft.forward.execute(scratch);
    for (size_t pol = 0; pol < 2; ++pol) {
      const std::complex<float>* series = scratch + pol * n + overlap;
      for (size_t t = 0; t < count; ++t) samples[2 * (first + t) + pol] = std::conj(series[t]);
    }
  }
  // The valid fractions: a delay line of latency samples.
  if (!valid) return;
  const size_t latency = size_t(latency_);
  validScratch_.resize(latency + size_t(nrSamples));
  std::copy(validHistory_.begin(), validHistory_.end(), validScratch_.begin());
  std::copy(valid, valid + nrSamples, validScratch_.begin() + std::ptrdiff_t(latency));
  std::copy(validScratch_.begin(), validScratch_.begin() + nrSamples, valid);
  std::copy(validScratch_.begin() + nrSamples, validScratch_.end(), validHistory_.begin());
}

}  // namespace rtcp::correlator::beamformed
