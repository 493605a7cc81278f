#include "ChannelMerger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace rtcp::correlator::beamformed {

ChannelMerger::ChannelMerger(int nrChannels, int nrSpectra)
    : nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      plan_(nrChannels, 2, std::clamp(nrSpectra, 1, kTileSpectra), 2 * nrChannels, 2, 1,
            FFTW_BACKWARD) {
  if (nrChannels < 1 || nrSpectra < 1)
    throw std::invalid_argument("ChannelMerger: " + std::to_string(nrChannels) + " channels x " +
                                std::to_string(nrSpectra) + " spectra");
  if (nrSpectra > kTileSpectra && nrSpectra % kTileSpectra != 0)
    rest_.emplace(nrChannels, 2, nrSpectra % kTileSpectra, 2 * nrChannels, 2, 1, FFTW_BACKWARD);
}

void ChannelMerger::merge(const float* input, int paddedSpectra,
                          std::complex<float>* samples) const {
  const size_t padded = size_t(paddedSpectra), channels = size_t(nrChannels_);
  const float scale = 1.0f / float(nrChannels_);
  for (int first = 0; first < nrSpectra_; first += kTileSpectra) {
    const int count = std::min(kTileSpectra, nrSpectra_ - first);
    // The tile starts at a multiple of kTileSpectra x C_d x 2 complex: 64-byte aligned.
    std::complex<float>* tile = samples + size_t(first) * channels * 2;
    for (size_t c = 0; c < channels; ++c)
      for (size_t pol = 0; pol < 2; ++pol) {
        const float* re = input + (c * 2 + pol) * 2 * padded + size_t(first);
        const float* im = re + padded;
        for (int s = 0; s < count; ++s) tile[(size_t(s) * channels + c) * 2 + pol] = {re[s], im[s]};
      }
    (count == kTileSpectra || !rest_ ? plan_ : *rest_).execute(tile);
    // x[n] = (-1)^n / C sum_c Y[c] exp(2 pi i c n / C): undoes the splitter's fftshift.
    const size_t n = size_t(count) * channels;
    for (size_t t = 0; t < n; ++t) {
      const float factor = (t % channels) % 2 ? -scale : scale;
      tile[2 * t] *= factor;
      tile[2 * t + 1] *= factor;
    }
  }
}

}  // namespace rtcp::correlator::beamformed
