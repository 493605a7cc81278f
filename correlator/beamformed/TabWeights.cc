#include "TabWeights.h"

#include <cmath>
#include <numbers>

namespace rtcp::correlator::beamformed {

void tabWeights(std::span<const double> delays, int nrTabs, int nrStations,
                std::span<const double> channelFrequencies, std::complex<float>* weights) {
  for (size_t c = 0; c < channelFrequencies.size(); ++c)
    for (int s = 0; s < nrStations; ++s)
      for (int t = 0; t < nrTabs; ++t) {
        const double phase = -2 * std::numbers::pi * channelFrequencies[c] *
                             delays[size_t(t) * size_t(nrStations) + size_t(s)];
        weights[(c * size_t(nrStations) + size_t(s)) * size_t(nrTabs) + size_t(t)] =
            std::complex<float>(std::polar(1.0, phase));
      }
}

}  // namespace rtcp::correlator::beamformed
