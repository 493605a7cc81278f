#include "DelayChannelSplitter.h"

#include <stdexcept>
#include <string>

namespace rtcp::correlator::beamformed {

bool allBitsSet(const uint64_t* words, int64_t begin, int64_t end) {
  while (begin < end) {
    const int offset = int(begin % 64);
    const int64_t n = std::min<int64_t>(64 - offset, end - begin);
    const uint64_t mask = (n == 64 ? ~uint64_t(0) : ((uint64_t(1) << n) - 1)) << offset;
    if ((words[begin / 64] & mask) != mask) return false;
    begin += n;
  }
  return true;
}

DelayChannelSplitter::DelayChannelSplitter(int nrChannels, int nrSpectra)
    : nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      plan_(nrChannels, 2, nrSpectra, 2 * nrChannels, 2, 1, FFTW_FORWARD) {
  if (nrChannels < 1 || nrSpectra < 1)
    throw std::invalid_argument("DelayChannelSplitter: " + std::to_string(nrChannels) +
                                " channels x " + std::to_string(nrSpectra) + " spectra");
}

void DelayChannelSplitter::split(const std::complex<float>* input,
                                 std::complex<float>* spectra) const {
  // (-1)^n within each spectrum moves baseband 0 to channel C/2 (an fftshift); a spectrum at
  // a time, so that no sample costs a division.
  const size_t channels = size_t(nrChannels_);
  for (size_t first = 0; first < size_t(nrSamples()); first += channels)
    for (size_t n = 0; n < channels; ++n) {
      const float sign = n % 2 ? -1.0f : 1.0f;
      const size_t t = first + n;
      spectra[2 * t] = input[2 * t] * sign;
      spectra[2 * t + 1] = input[2 * t + 1] * sign;
    }
  plan_.execute(spectra);
}

void DelayChannelSplitter::flag(const StationBlock& block, int subband, int firstSample,
                                SpectrumMask& valid) const {
  if (firstSample + nrSamples() > block.header.nrSamples)
    throw std::invalid_argument("DelayChannelSplitter: a block of " +
                                std::to_string(block.header.nrSamples) + " samples, expected " +
                                std::to_string(firstSample + nrSamples()));
  if (block.header.flaggedByIonproc) {
    valid.setAll(false);
    return;
  }
  const uint64_t* words = block.valid.data() + size_t(subband) * block.wordsPerSubband();
  for (int s = 0; s < nrSpectra_; ++s) {
    const int64_t begin = firstSample + int64_t(s) * nrChannels_;
    valid.set(s, allBitsSet(words, begin, begin + nrChannels_));
  }
}

}  // namespace rtcp::correlator::beamformed
