#include "PolarisationCorrection.h"

#include <complex>
#include <numbers>

namespace rtcp::correlator {

PolarisationCorrection::PolarisationCorrection(int nrChannels, int paddedSpectra,
                                               double subbandWidth, std::array<double, 2> delay,
                                               std::array<double, 2> phase)
    : nrChannels_(nrChannels),
      paddedSpectra_(paddedSpectra),
      subbandWidth_(subbandWidth),
      delay_(delay),
      phase_(phase),
      active_(delay[0] != 0 || delay[1] != 0 || phase[0] != 0 || phase[1] != 0) {}

void PolarisationCorrection::apply(double subbandFrequency, float* samples) const {
  if (!active_) return;
  std::vector<std::complex<float>> rotation;
  rotations(subbandFrequency, rotation);
  apply(rotation, samples, 0, paddedSpectra_);
}

void PolarisationCorrection::rotations(double subbandFrequency,
                                       std::vector<std::complex<float>>& rotations) const {
  rotations.resize(2 * size_t(nrChannels_));
  for (int c = 0; c < nrChannels_; ++c) {
    const double frequency = subbandFrequency + (c - nrChannels_ / 2) * subbandWidth_ / nrChannels_;
    for (int pol = 0; pol < 2; ++pol)
      rotations[2 * size_t(c) + size_t(pol)] = std::complex<float>(std::polar(
          1.0, -(2 * std::numbers::pi * frequency * delay_[size_t(pol)] + phase_[size_t(pol)])));
  }
}

void PolarisationCorrection::apply(const std::vector<std::complex<float>>& rotations,
                                   float* samples, int first, int count) const {
  if (!active_) return;
  for (int c = 0; c < nrChannels_; ++c)
    for (int pol = 0; pol < 2; ++pol) {
      const std::complex<float> rotation = rotations[2 * size_t(c) + size_t(pol)];
      float* re = samples + (size_t(c) * 4 + 2 * size_t(pol)) * size_t(paddedSpectra_);
      float* im = re + paddedSpectra_;
      for (int t = first; t < first + count; ++t) {
        const float r = re[t], i = im[t];
        re[t] = r * rotation.real() - i * rotation.imag();
        im[t] = r * rotation.imag() + i * rotation.real();
      }
    }
}

}  // namespace rtcp::correlator
