#include "rtcp/CobaltBlockSize.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace rtcp {
namespace {

constexpr double kMinBlockSeconds = 0.6;  // below: the overhead per block grows
constexpr double kMaxBlockSeconds = 1.3;  // above: a block no longer fits a GPU

struct Clock {
  double samplesPerSecond;
  int64_t samples(double seconds) const { return int64_t(seconds * samplesPerSecond); }
};

int64_t blocksFor(int64_t integrationSamples, int64_t blockSize) {
  return std::max<int64_t>(1, std::llround(double(integrationSamples) / double(blockSize)));
}

/// The multiple of `factor` in [0.6, 1.3] s whose whole blocks come closest to the
/// integration (preferring, within 1 %, fewer blocks); 0 when no multiple fits.
int64_t bestBlockSize(int64_t integrationSamples, int64_t factor, const Clock& clock) {
  int64_t best = 0, bestBlocks = 0, bestDiff = 0;
  for (int64_t blockSize = factor; blockSize <= clock.samples(kMaxBlockSeconds);
       blockSize += factor) {
    if (blockSize < clock.samples(kMinBlockSeconds)) continue;
    const int64_t n = blocksFor(integrationSamples, blockSize);
    const int64_t diff = std::llabs(integrationSamples - n * blockSize);
    if (best == 0 || diff <= bestDiff ||
        (double(diff) < 0.01 * double(integrationSamples) && n < bestBlocks))
      best = blockSize, bestBlocks = n, bestDiff = diff;
  }
  return best;
}

}  // namespace

CobaltBlockSize cobaltBlockSize(double integrationTime, int channels, int clockMHz) {
  if (!(integrationTime > 0))
    throw std::invalid_argument("integration time " + std::to_string(integrationTime) +
                                " s is not positive");
  const Clock clock{clockMHz * 1e6 / 1024};
  CobaltBlockSize result;
  if (integrationTime < kMinBlockSeconds)
    result.nrIntegrationsPerBlock =
        std::max(1, int(std::lround((kMaxBlockSeconds + kMinBlockSeconds) / 2 / integrationTime)));
  // 16 taps of the filter bank; each integration at least 16 spectra.
  const int64_t factor = int64_t(16) * channels * result.nrIntegrationsPerBlock;
  result.blockSize =
      bestBlockSize(clock.samples(result.nrIntegrationsPerBlock * integrationTime), factor, clock);
  if (result.blockSize == 0) result.blockSize = factor;  // channels too many for 1.3 s
  result.nrBlocksPerIntegration = int(blocksFor(clock.samples(integrationTime), result.blockSize));
  result.integrationTime =
      double(result.blockSize / result.nrIntegrationsPerBlock * result.nrBlocksPerIntegration) /
      clock.samplesPerSecond;
  return result;
}

}  // namespace rtcp
