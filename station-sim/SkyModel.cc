#include "SkyModel.h"

#include <cmath>

namespace rtcp::sim {

SkyModel::SkyModel(const ObservationSettings& settings)
    : sources_(settings.sim.sources),
      toneDirection_(settings.beams.empty() ? Direction{} : settings.beams.front()),
      noisePower_(settings.sim.noisePower),
      toneFrequency_(settings.sim.toneFrequency),
      toneAmplitude_(settings.sim.toneAmplitude),
      clock_(settings.clockMHz),
      delayModel_(settings) {
  for (const StationSettings& station : settings.stations) {
    double distance = 0;
    for (int i = 0; i < 3; ++i) {
      const double d = station.position[i] - settings.referencePhaseCenter[i];
      distance += d * d;
    }
    maxDelay_ = std::max(maxDelay_,
                         std::sqrt(distance) / kSpeedOfLight + std::abs(station.clockCorrection));
  }
}

ChunkDelays SkyModel::delays(int64_t firstSample, int nrSamples) const {
  ChunkDelays result;
  result.firstSample = firstSample;
  result.nrSamples = nrSamples;
  const double t0 = clock_.unixTime(firstSample);
  const double t1 = clock_.unixTime(firstSample + nrSamples);
  for (const SimSource& source : sources_) {
    result.start.push_back(delayModel_.delays(source.direction, t0));
    result.end.push_back(delayModel_.delays(source.direction, t1));
  }
  if (toneFrequency_ != 0) {
    result.toneStart = delayModel_.delays(toneDirection_, t0);
    result.toneEnd = delayModel_.delays(toneDirection_, t1);
  }
  return result;
}

}  // namespace rtcp::sim
