#include "SubbandResponse.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace rtcp::sim {
namespace {

/// Neighbours' weights below this (-80 dB, under the quantisation noise of 16-bit samples)
/// are left out: the filter falls from -17 dB at 0.55 subbands from the centre to -85 dB
/// at 0.65 and stays below -90 dB beyond.
constexpr double kNegligible = 1e-4;

}  // namespace

SubbandResponse::SubbandResponse(int fftSize) : fftSize_(fftSize) {
  const StationFilter& filter = StationFilter::lofar();
  // H at nu = -1.5 + k / fftSize, k in [0, 3 fftSize): the bands m = -1, 0, +1 side by side.
  const std::vector<double> grid = filter.responseGrid(-1.5, 1.0 / fftSize, 3 * fftSize);
  const int half = fftSize / 2;
  firstAliasBin_ = half;
  lastAliasBin_ = half;
  for (int m = -1; m <= 1; ++m) {
    AlignedBuffer<float> weights(static_cast<size_t>(fftSize));
    for (int i = 0; i < fftSize; ++i) {
      const int signedBin = i < half ? i : i - fftSize;
      const double w = grid[size_t(signedBin + half + (m + 1) * fftSize)];
      weights[size_t(i)] = float(w);
      if (m != 0 && std::abs(w) > kNegligible) {
        firstAliasBin_ = std::min(firstAliasBin_, i);
        lastAliasBin_ = std::max(lastAliasBin_, i + 1);
      }
    }
    weights_[size_t(m + 1)] = std::move(weights);
  }
  for (int k = 0; k < StationFilter::kNrTaps; ++k)
    noiseTaps_[size_t(k)] = float(filter.noiseShapingFilter()[size_t(k)]);
  meanPower_ = filter.branchAutocorrelation()[0];
}

double SubbandResponse::toneGain(double offset) {
  return std::abs(offset) < 1.5 ? StationFilter::lofar().response(offset) : 0.0;
}

}  // namespace rtcp::sim
