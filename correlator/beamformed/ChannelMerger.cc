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
  // x[n] = (-1)^n / C sum_c Y[c] exp(2 pi i c n / C) undoes the splitter's fftshift. For an
  // even C, (-1)^n = exp(2 pi i (C/2) n / C): channel c goes into bin c + C/2 (mod C), and the
  // 1 / C is applied while gathering, so no pass over the tile follows the FFT.
  const bool even = channels % 2 == 0;
  const size_t shift = even ? channels / 2 : 0;
  for (int first = 0; first < nrSpectra_; first += kTileSpectra) {
    const int count = std::min(kTileSpectra, nrSpectra_ - first);
    // The tile starts at a multiple of kTileSpectra x C_d x 2 complex: 64-byte aligned.
    std::complex<float>* tile = samples + size_t(first) * channels * 2;
    for (size_t c = 0; c < channels; ++c) {
      const size_t bin = c + shift < channels ? c + shift : c + shift - channels;
      for (size_t pol = 0; pol < 2; ++pol) {
        const float* re = input + (c * 2 + pol) * 2 * padded + size_t(first);
        const float* im = re + padded;
        std::complex<float>* out = tile + bin * 2 + pol;
        for (int s = 0; s < count; ++s)
          out[size_t(s) * channels * 2] = {re[s] * scale, im[s] * scale};
      }
    }
    (count == kTileSpectra || !rest_ ? plan_ : *rest_).execute(tile);
    if (even) continue;
    for (int s = 0; s < count; ++s)  // an odd C: the (-1)^n after the transform
      for (size_t n = 1; n < channels; n += 2) {
        std::complex<float>* sample = tile + (size_t(s) * channels + n) * 2;
        sample[0] = -sample[0];
        sample[1] = -sample[1];
      }
  }
}

}  // namespace rtcp::correlator::beamformed
