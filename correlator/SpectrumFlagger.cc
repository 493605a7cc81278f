#include "SpectrumFlagger.h"

#include <stdexcept>
#include <string>

namespace rtcp::correlator {

namespace {

/// True when bits [start, start + count) are all set.
bool allSet(const uint64_t* bits, int start, int count) {
  while (count > 0) {
    const int offset = start % 64;
    const int n = std::min(count, 64 - offset);
    const uint64_t mask = (n == 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1) << offset;
    if ((bits[start / 64] & mask) != mask) return false;
    start += n;
    count -= n;
  }
  return true;
}

}  // namespace

SpectrumFlagger::SpectrumFlagger(int nrChannels, int nrSpectra)
    : nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      window_(nrChannels > 1 ? kFilterTaps * nrChannels : 1) {}

void SpectrumFlagger::flag(const StationBlock& block, int subband, SpectrumMask& valid) const {
  if (block.header.nrSamples != nrInputSamples())
    throw std::invalid_argument("SpectrumFlagger: station " + std::to_string(block.header.station) +
                                " block holds " + std::to_string(block.header.nrSamples) +
                                " samples, expected " + std::to_string(nrInputSamples()));
  if (block.header.flaggedByIonproc) {
    valid.setAll(false);
    return;
  }
  flag(&block.valid[size_t(subband) * block.wordsPerSubband()], valid);
}

void SpectrumFlagger::flag(const uint64_t* sampleValid, SpectrumMask& valid) const {
  // Group g = input samples [g C, g C + C); spectrum s needs groups s .. s + taps - 1.
  const int groupsPerWindow = window_ / nrChannels_;
  int lastBadGroup = -1;
  for (int g = 0; g < groupsPerWindow - 1; ++g)
    if (!allSet(sampleValid, g * nrChannels_, nrChannels_)) lastBadGroup = g;
  for (int s = 0; s < nrSpectra_; ++s) {
    const int newest = s + groupsPerWindow - 1;
    if (!allSet(sampleValid, newest * nrChannels_, nrChannels_)) lastBadGroup = newest;
    valid.set(s, lastBadGroup < s);
  }
}

}  // namespace rtcp::correlator
