#include "ChannelMerger.h"

#include <stdexcept>
#include <string>

namespace rtcp::correlator::beamformed {

ChannelMerger::ChannelMerger(int nrChannels, int nrSpectra)
    : nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      plan_(nrChannels, 2, nrSpectra, 2 * nrChannels, 2, 1, FFTW_BACKWARD) {
  if (nrChannels < 1 || nrSpectra < 1)
    throw std::invalid_argument("ChannelMerger: " + std::to_string(nrChannels) + " channels x " +
                                std::to_string(nrSpectra) + " spectra");
}

void ChannelMerger::merge(const float* input, int paddedSpectra,
                          std::complex<float>* samples) const {
  const size_t padded = size_t(paddedSpectra);
  for (int c = 0; c < nrChannels_; ++c)
    for (int pol = 0; pol < 2; ++pol) {
      const float* re = input + (size_t(c) * 2 + size_t(pol)) * 2 * padded;
      const float* im = re + padded;
      for (int s = 0; s < nrSpectra_; ++s)
        samples[(size_t(s) * size_t(nrChannels_) + size_t(c)) * 2 + size_t(pol)] = {re[s], im[s]};
    }
  plan_.execute(samples);
  // x[n] = (-1)^n / C sum_c Y[c] exp(2 pi i c n / C): undoes the splitter's fftshift.
  const float scale = 1.0f / float(nrChannels_);
  const size_t n = size_t(nrSamples());
  for (size_t t = 0; t < n; ++t) {
    const float factor = (t % size_t(nrChannels_)) % 2 ? -scale : scale;
    samples[2 * t] *= factor;
    samples[2 * t + 1] *= factor;
  }
}

}  // namespace rtcp::correlator::beamformed
