#include "SpectrumNoise.h"

#include <algorithm>
#include <cmath>

namespace rtcp::correlator {

RobustStatistics spectrumNoise(const float* values, const uint8_t* flags, size_t n, double spectra,
                               SelectionScratch& scratch) {
  RobustStatistics result;
  result.count = gatherKeys(values, flags, n, 1, scratch.keys);
  if (result.count == 0) return result;
  const size_t ranks[] = {size_t(std::floor(kOneSigmaBelow * double(result.count))),
                          result.count / 2};
  float selected[2];
  selectRanks(scratch.keys.data(), result.count, ranks, selected, scratch);
  result.median = selected[1];
  const double radiometer = 1.0 / (2.0 * std::max(spectra, 1.0));
  const float model =
      float(double(result.median) * std::sqrt(radiometer + kBandpassFlatness * kBandpassFlatness));
  result.sigma = std::max(model, result.median - selected[0]);
  return result;
}

}  // namespace rtcp::correlator
