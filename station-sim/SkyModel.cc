#include "SkyModel.h"

#include <algorithm>
#include <cmath>

namespace rtcp::sim {
namespace {

std::vector<std::array<double, 3>> positions(const ObservationSettings& settings) {
  std::vector<std::array<double, 3>> result;
  for (const StationSettings& station : settings.stations) result.push_back(station.position);
  return result;
}

}  // namespace

SkyModel::SkyModel(const ObservationSettings& settings)
    : sources_(settings.sim.sources),
      beamWidth_(settings.sim.stationBeamWidth),
      startTime_(settings.startTime),
      toneDirection_(settings.beams.empty() ? Direction{} : settings.beams.front()),
      noisePower_(settings.sim.noisePower),
      toneFrequency_(settings.sim.toneFrequency),
      toneAmplitude_(settings.sim.toneAmplitude),
      rfi_(settings.sim.rfi),
      clock_(settings.clockMHz),
      // Geometry only: the stations' own delays are their signal paths (pathDelay).
      delayModel_(settings.referencePhaseCenter, positions(settings), {}) {
  for (size_t s = 0; s < settings.stations.size(); ++s) {
    const SimSignalPath path =
        s < settings.sim.signalPaths.size() ? settings.sim.signalPaths[s] : SimSignalPath{};
    pathDelay_.push_back(path.delay);
    pathPhase_.push_back(path.phase0);
    double distance = 0;
    for (int i = 0; i < 3; ++i) {
      const double d = settings.stations[s].position[i] - settings.referencePhaseCenter[i];
      distance += d * d;
    }
    const double path_ = std::max(std::abs(path.delay[0]), std::abs(path.delay[1]));
    maxDelay_ = std::max(maxDelay_, std::sqrt(distance) / kSpeedOfLight + path_);
  }
}

std::vector<double> SkyModel::sourceGains(const Direction& beam) const {
  std::vector<double> gains(sources_.size(), 1.0);
  if (beamWidth_ <= 0) return gains;
  const std::array<double, 3> b = delayModel_.itrfDirection(beam, startTime_);
  for (size_t k = 0; k < sources_.size(); ++k) {
    const std::array<double, 3> s = delayModel_.itrfDirection(sources_[k].direction, startTime_);
    const double cosine = std::clamp(b[0] * s[0] + b[1] * s[1] + b[2] * s[2], -1.0, 1.0);
    const double angle = std::acos(cosine);
    // Power exp(-4 ln 2 (angle / FWHM)^2); the amplitude is its square root.
    gains[k] = std::exp(-2 * std::log(2.0) * angle * angle / (beamWidth_ * beamWidth_));
  }
  return gains;
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
  result.pathDelay = pathDelay_;
  result.pathPhase = pathPhase_;
  return result;
}

}  // namespace rtcp::sim
