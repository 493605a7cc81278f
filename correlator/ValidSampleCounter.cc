#include "ValidSampleCounter.h"

#include <stdexcept>
#include <string>

#include "rtcp/Baselines.h"

namespace rtcp::correlator {

ValidSampleCounter::ValidSampleCounter(int nrStations, int nrChannels)
    : nrStations_(nrStations), nrChannels_(nrChannels) {}

void ValidSampleCounter::count(std::span<const SpectrumMask* const> masks,
                               CorrelatedData& block) const {
  if (int(masks.size()) != nrStations_ || block.nrStations != nrStations_ ||
      block.nrChannels != nrChannels_)
    throw std::invalid_argument(
        "ValidSampleCounter: " + std::to_string(masks.size()) + " masks, block of " +
        std::to_string(block.nrStations) + " stations x " + std::to_string(block.nrChannels) +
        " channels, expected " + std::to_string(nrStations_) + " x " + std::to_string(nrChannels_));
  const int firstChannel = nrChannels_ > 1 ? 1 : 0;
  for (int s2 = 0; s2 < nrStations_; ++s2)
    for (int s1 = 0; s1 <= s2; ++s1) {
      const int baseline = baselineIndex(s1, s2);
      const uint32_t count = uint32_t(masks[size_t(s1)]->countBoth(*masks[size_t(s2)]));
      for (int c = 0; c < firstChannel; ++c) {
        block.valid(baseline, c) = 0;
        for (int pol = 0; pol < kNrPolarisationProducts; ++pol)
          block.visibility(baseline, c, pol) = 0;
      }
      for (int c = firstChannel; c < nrChannels_; ++c) block.valid(baseline, c) = count;
    }
}

}  // namespace rtcp::correlator
