#include "DelayAndBandpassCorrection.h"

#include <numbers>
#include <stdexcept>
#include <string>

#include "DelayTiles.h"
#include "rtcp/StationFilter.h"

namespace rtcp::correlator {

namespace {

constexpr int kChannelsPerPass = 4;  // one cache line of spectra[s][c][pol]

}  // namespace

DelayAndBandpassCorrection::DelayAndBandpassCorrection(int nrChannels, int nrSpectra,
                                                       int paddedSpectra, double subbandWidth,
                                                       bool delayCompensation, bool correctBandPass)
    : nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      paddedSpectra_(paddedSpectra),
      subbandWidth_(subbandWidth),
      delayCompensation_(delayCompensation),
      avx512_(__builtin_cpu_supports("avx512f")),
      gains_(correctBandPass ? StationFilter::lofar().bandpassCorrection(nrChannels)
                             : std::vector<double>(size_t(nrChannels), 1.0)) {
  if (paddedSpectra < nrSpectra)
    throw std::invalid_argument("DelayAndBandpassCorrection: padded length " +
                                std::to_string(paddedSpectra) + " < " + std::to_string(nrSpectra) +
                                " spectra");
}

void DelayAndBandpassCorrection::apply(const std::complex<float>* spectra,
                                       const SpectrumMask& valid, double subbandFrequency,
                                       double delayAtStart, double delayAtEnd,
                                       float* output) const {
  std::complex<double> start[kChannelsPerPass], step[kChannelsPerPass];
  for (int c0 = 0; c0 < nrChannels_; c0 += kChannelsPerPass) {
    const int count = std::min(kChannelsPerPass, nrChannels_ - c0);
    for (int i = 0; i < count; ++i) {
      const int c = c0 + i;
      const double gain = gains_[size_t(c)];
      if (!delayCompensation_) {
        start[i] = gain;
        step[i] = 1;
        continue;
      }
      // phase(s) = -2 pi f tau(s), tau(s) = tau0 + (tau1 - tau0) (s + 0.5) / S
      const double omega = -2 * std::numbers::pi * channelFrequency(subbandFrequency, c);
      const double slope = (delayAtEnd - delayAtStart) / nrSpectra_;
      start[i] = std::polar(gain, omega * (delayAtStart + 0.5 * slope));
      step[i] = std::polar(1.0, omega * slope);
    }
    int done = 0;
    if (count == kChannelsPerPass && avx512_)
      done = applyTiles(spectra, valid, c0, start, step, output);
    applyChannels(spectra, valid, c0, count, done, start, step, output);
  }
}

int DelayAndBandpassCorrection::applyTiles(const std::complex<float>* spectra,
                                           const SpectrumMask& valid, int firstChannel,
                                           std::complex<double>* phasor,
                                           const std::complex<double>* step, float* output) const {
  constexpr int kTile = 16;  // spectra per tile
  // step^k, k < 16, per channel; the phasor of a tile's first spectrum advances by step^16.
  std::complex<float> powers[kChannelsPerPass][kTile];
  std::complex<double> stride[kChannelsPerPass];
  for (int i = 0; i < kChannelsPerPass; ++i) {
    std::complex<double> power = 1;
    for (int k = 0; k < kTile; ++k, power *= step[i]) powers[i][k] = std::complex<float>(power);
    stride[i] = power;
  }
  alignas(64) float re[kChannelsPerPass * kTile], im[kChannelsPerPass * kTile];
  const size_t spectrumStride = 4 * size_t(nrChannels_);  // floats
  float* out = output + size_t(firstChannel) * 4 * paddedSpectra_;
  int s0 = 0;
  for (; s0 + kTile <= nrSpectra_; s0 += kTile) {
    for (int i = 0; i < kChannelsPerPass; ++i) {
      const std::complex<float> base(phasor[i]);
      for (int k = 0; k < kTile; ++k) {
        const std::complex<float> p = valid.valid(s0 + k) ? base * powers[i][k] : 0.0f;
        re[i * kTile + k] = p.real();
        im[i * kTile + k] = p.imag();
      }
      phasor[i] *= stride[i];
    }
    tiles::rotateTileAvx512(reinterpret_cast<const float*>(spectra) + size_t(s0) * spectrumStride +
                                2 * 2 * size_t(firstChannel),
                            spectrumStride, re, im, out + s0, size_t(paddedSpectra_));
  }
  return s0;
}

void DelayAndBandpassCorrection::applyChannels(const std::complex<float>* spectra,
                                               const SpectrumMask& valid, int firstChannel,
                                               int count, int firstSpectrum,
                                               const std::complex<double>* start,
                                               const std::complex<double>* step,
                                               float* output) const {
  std::complex<double> phasor[kChannelsPerPass];
  float* out[kChannelsPerPass];  // output[channel][pol][reim][time] of each channel
  for (int i = 0; i < count; ++i) {
    phasor[i] = start[i];
    out[i] = output + size_t(firstChannel + i) * 4 * paddedSpectra_;
  }
  const size_t spectrumStride = 2 * size_t(nrChannels_);
  for (int s = firstSpectrum; s < nrSpectra_; ++s) {
    const std::complex<float>* in = spectra + s * spectrumStride + 2 * size_t(firstChannel);
    const bool ok = valid.valid(s);
    for (int i = 0; i < count; ++i) {
      const std::complex<float> rotation = ok ? std::complex<float>(phasor[i]) : 0.0f;
      for (int pol = 0; pol < 2; ++pol) {
        const std::complex<float> x = in[2 * i + pol];
        // plain products: std::complex's operator* checks for NaN/inf at length
        out[i][(2 * pol) * paddedSpectra_ + s] =
            x.real() * rotation.real() - x.imag() * rotation.imag();
        out[i][(2 * pol + 1) * paddedSpectra_ + s] =
            x.real() * rotation.imag() + x.imag() * rotation.real();
      }
      phasor[i] *= step[i];
    }
  }
}

}  // namespace rtcp::correlator
