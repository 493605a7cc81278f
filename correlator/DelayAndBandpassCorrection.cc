#include "DelayAndBandpassCorrection.h"

#include <algorithm>
#include <numbers>
#include <stdexcept>
#include <string>

#include "DelayTiles.h"
#include "rtcp/StationFilter.h"

namespace rtcp::correlator {

namespace {

constexpr int kChannelsPerPass = 4;  // one cache line of spectra[s][c][pol]
constexpr int kTile = kCellLanes;    // spectra per AVX-512 tile

}  // namespace

DelayAndBandpassCorrection::DelayAndBandpassCorrection(int nrChannels, int nrSpectra,
                                                       int paddedSpectra, double subbandWidth,
                                                       bool delayCompensation, bool correctBandPass,
                                                       Isa isa)
    : nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      paddedSpectra_(paddedSpectra),
      subbandWidth_(subbandWidth),
      delayCompensation_(delayCompensation),
      isa_(CorrelatorKernel::resolve(isa, "DelayAndBandpassCorrection")),
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
  Phasors phasors;
  start(subbandFrequency, delayAtStart, delayAtEnd, phasors);
  apply(spectra, valid, 0, nrSpectra_, phasors, output);
}

void DelayAndBandpassCorrection::start(double subbandFrequency, double delayAtStart,
                                       double delayAtEnd, Phasors& phasors) const {
  phasors.current.resize(size_t(nrChannels_));
  phasors.step.resize(size_t(nrChannels_));
  for (int c = 0; c < nrChannels_; ++c) {
    const double gain = gains_[size_t(c)];
    if (!delayCompensation_) {
      phasors.current[size_t(c)] = gain;
      phasors.step[size_t(c)] = 1;
      continue;
    }
    // phase(s) = -2 pi f tau(s), tau(s) = tau0 + (tau1 - tau0) (s + 0.5) / S
    const double omega = -2 * std::numbers::pi * channelFrequency(subbandFrequency, c);
    const double slope = (delayAtEnd - delayAtStart) / nrSpectra_;
    phasors.current[size_t(c)] = std::polar(gain, omega * (delayAtStart + 0.5 * slope));
    phasors.step[size_t(c)] = std::polar(1.0, omega * slope);
  }
  // step^k, k < kTile, per channel; the phasor of a tile's first spectrum advances by
  // step^kTile
  phasors.stride.resize(size_t(nrChannels_));
  phasors.powerRe.resize(size_t(nrChannels_) * kTile);
  phasors.powerIm.resize(size_t(nrChannels_) * kTile);
  for (size_t c = 0; c < size_t(nrChannels_); ++c) {
    const double stepRe = phasors.step[c].real(), stepIm = phasors.step[c].imag();
    double re = 1, im = 0;  // step^k; plain products (std::complex checks for NaN at length)
    for (size_t k = 0; k < size_t(kTile); ++k) {
      phasors.powerRe[c * kTile + k] = float(re);
      phasors.powerIm[c * kTile + k] = float(im);
      const double next = re * stepRe - im * stepIm;
      im = re * stepIm + im * stepRe;
      re = next;
    }
    phasors.stride[c] = {re, im};
  }
}

void DelayAndBandpassCorrection::apply(const std::complex<float>* spectra,
                                       const SpectrumMask& valid, int first, int count,
                                       Phasors& phasors, float* output,
                                       CellPowerGrid cellPowers) const {
  if (first < 0 || count < 0 || first + count > nrSpectra_ ||
      int(phasors.current.size()) != nrChannels_ || (cellPowers.cells && first % kTile != 0))
    throw std::invalid_argument("DelayAndBandpassCorrection: spectra [" + std::to_string(first) +
                                ", " + std::to_string(first + count) + ") of " +
                                std::to_string(nrSpectra_) +
                                ", or phasors not started, or cell powers from a spectrum not a "
                                "multiple of 16");
  for (int c0 = 0; c0 < nrChannels_; c0 += kChannelsPerPass) {
    const int nrChannels = std::min(kChannelsPerPass, nrChannels_ - c0);
    std::complex<double>* phasor = &phasors.current[size_t(c0)];
    const std::complex<double>* step = &phasors.step[size_t(c0)];
    int done = 0;
    if (nrChannels == kChannelsPerPass && isa_ != Isa::kGeneric)
      done = applyTiles(spectra, valid, c0, first, count, phasors, output, cellPowers);
    applyChannels(spectra + size_t(done) * 2 * nrChannels_, valid, c0, nrChannels, first + done,
                  count - done, phasor, step, output);
    if (!cellPowers.cells || done == count) continue;
    // what the tiles did not do: from the output, in the same order
    const int from = first + done;
    for (int c = c0; c < c0 + nrChannels; ++c)
      channelCellPowers(output + size_t(c) * 4 * paddedSpectra_ + from, size_t(paddedSpectra_),
                        count - done, kTile,
                        cellPowers.cells + size_t(c) * cellPowers.stride + size_t(from / kTile));
  }
}

int DelayAndBandpassCorrection::applyTiles(const std::complex<float>* spectra,
                                           const SpectrumMask& valid, int firstChannel, int first,
                                           int count, Phasors& phasors, float* output,
                                           CellPowerGrid cellPowers) const {
  std::complex<double>* phasor = &phasors.current[size_t(firstChannel)];
  const std::complex<double>* stride = &phasors.stride[size_t(firstChannel)];
  const float* powerRe = &phasors.powerRe[size_t(firstChannel) * kTile];
  const float* powerIm = &phasors.powerIm[size_t(firstChannel) * kTile];
  const size_t spectrumStride = 4 * size_t(nrChannels_);  // floats
  float* out = output + size_t(firstChannel) * 4 * paddedSpectra_ + first;
  int s0 = 0;
  for (; s0 + kTile <= count; s0 += kTile) {
    float baseRe[kChannelsPerPass], baseIm[kChannelsPerPass];
    for (int i = 0; i < kChannelsPerPass; ++i) {
      const std::complex<double> p = phasor[i], q = stride[i];
      baseRe[i] = float(p.real());
      baseIm[i] = float(p.imag());
      // plain products: std::complex's operator* checks for NaN/inf at length
      phasor[i] = {p.real() * q.real() - p.imag() * q.imag(),
                   p.real() * q.imag() + p.imag() * q.real()};
    }
    const auto rotate = isa_ == Isa::kAvx512 ? tiles::rotateTileAvx512 : tiles::rotateTileAvx2;
    rotate(reinterpret_cast<const float*>(spectra) + size_t(s0) * spectrumStride +
               2 * 2 * size_t(firstChannel),
           spectrumStride, baseRe, baseIm, powerRe, powerIm, valid.bits16(first + s0), out + s0,
           size_t(paddedSpectra_),
           cellPowers.cells ? cellPowers.cells + size_t(firstChannel) * cellPowers.stride +
                                  size_t((first + s0) / kTile)
                            : nullptr,
           cellPowers.stride);
  }
  return s0;
}

void DelayAndBandpassCorrection::applyChannels(const std::complex<float>* spectra,
                                               const SpectrumMask& valid, int firstChannel,
                                               int nrChannels, int first, int count,
                                               std::complex<double>* phasor,
                                               const std::complex<double>* step,
                                               float* output) const {
  float* out[kChannelsPerPass];  // output[channel][pol][reim][time] of each channel
  for (int i = 0; i < nrChannels; ++i)
    out[i] = output + size_t(firstChannel + i) * 4 * paddedSpectra_;
  const size_t spectrumStride = 2 * size_t(nrChannels_);
  for (int j = 0; j < count; ++j) {
    const int s = first + j;
    const std::complex<float>* in = spectra + j * spectrumStride + 2 * size_t(firstChannel);
    const bool ok = valid.valid(s);
    for (int i = 0; i < nrChannels; ++i) {
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
