#include "ValidSampleCounter.h"

#include <stdexcept>
#include <string>

#include "rtcp/Baselines.h"

namespace rtcp::correlator {

ValidSampleCounter::ValidSampleCounter(int nrStations, int nrChannels)
    : nrStations_(nrStations), nrChannels_(nrChannels) {}

void ValidSampleCounter::check(size_t nrMasks, const CorrelatedData& block) const {
  if (int(nrMasks) != nrStations_ || block.nrStations != nrStations_ ||
      block.nrChannels != nrChannels_)
    throw std::invalid_argument(
        "ValidSampleCounter: " + std::to_string(nrMasks) + " masks, block of " +
        std::to_string(block.nrStations) + " stations x " + std::to_string(block.nrChannels) +
        " channels, expected " + std::to_string(nrStations_) + " x " + std::to_string(nrChannels_));
}

void ValidSampleCounter::clearEdgeChannel(int baseline, CorrelatedData& block) const {
  if (nrChannels_ == 1) return;
  block.valid(baseline, 0) = 0;
  for (int pol = 0; pol < kNrPolarisationProducts; ++pol) block.visibility(baseline, 0, pol) = 0;
}

void ValidSampleCounter::count(std::span<const SpectrumMask* const> masks,
                               CorrelatedData& block) const {
  check(masks.size(), block);
  const int firstChannel = nrChannels_ > 1 ? 1 : 0;
  for (int s2 = 0; s2 < nrStations_; ++s2)
    for (int s1 = 0; s1 <= s2; ++s1) {
      const int baseline = baselineIndex(s1, s2);
      const uint32_t count = uint32_t(masks[size_t(s1)]->countBoth(*masks[size_t(s2)]));
      clearEdgeChannel(baseline, block);
      for (int c = firstChannel; c < nrChannels_; ++c) block.valid(baseline, c) = count;
    }
}

void ValidSampleCounter::count(std::span<const ChannelFlags* const> flags,
                               CorrelatedData& block) const {
  check(flags.size(), block);
  const int firstChannel = nrChannels_ > 1 ? 1 : 0;
  const size_t C = size_t(nrChannels_);
  classifyChannels(flags, firstChannel);
  for (int s2 = 0; s2 < nrStations_; ++s2)
    for (int s1 = 0; s1 <= s2; ++s1) {
      const int baseline = baselineIndex(s1, s2);
      clearEdgeChannel(baseline, block);
      const ChannelFlags& a = *flags[size_t(s1)];
      const ChannelFlags& b = *flags[size_t(s2)];
      const uint8_t* kindA = channelKinds_.data() + size_t(s1) * C;
      const uint8_t* kindB = channelKinds_.data() + size_t(s2) * C;
      const uint32_t common = uint32_t(a.channel(referenceChannels_[size_t(s1)])
                                           .countBoth(b.channel(referenceChannels_[size_t(s2)])));
      for (int c = firstChannel; c < nrChannels_; ++c) {
        const unsigned kinds = unsigned(kindA[c]) | unsigned(kindB[c]);
        block.valid(baseline, c) = kinds & kNoneValid ? 0
                                   : kinds == kAsReference
                                       ? common
                                       : uint32_t(a.channel(c).countBoth(b.channel(c)));
      }
    }
}

void ValidSampleCounter::classifyChannels(std::span<const ChannelFlags* const> flags,
                                          int firstChannel) const {
  // A station's channels with nothing flagged all hold what arrived: the fullest mask. Most
  // channels are such; a channel flagged in some is often flagged whole (a tone).
  const size_t C = size_t(nrChannels_);
  channelKinds_.assign(size_t(nrStations_) * C, kOwnMask);
  referenceChannels_.assign(size_t(nrStations_), firstChannel);
  counts_.resize(C);
  for (size_t s = 0; s < size_t(nrStations_); ++s) {
    const ChannelFlags& station = *flags[s];
    int& reference = referenceChannels_[s];
    for (int c = firstChannel; c < nrChannels_; ++c) {
      counts_[size_t(c)] = station.channel(c).count();
      if (counts_[size_t(c)] > counts_[size_t(reference)]) reference = c;
    }
    const SpectrumMask& fullest = station.channel(reference);
    uint8_t* kinds = channelKinds_.data() + s * C;
    for (int c = firstChannel; c < nrChannels_; ++c) {
      const int n = counts_[size_t(c)];
      kinds[c] = n == 0 ? kNoneValid
                 : n == counts_[size_t(reference)] && station.channel(c).equals(fullest)
                     ? kAsReference
                     : kOwnMask;
    }
  }
}

}  // namespace rtcp::correlator
