#include "Pulsar.h"

#include <algorithm>
#include <cmath>

namespace rtcp::sim {
namespace {

constexpr double kMjdOfUnixEpoch = 40587, kSecondsPerDay = 86400;
/// Beyond this many widths from a peak, the power exp(-4 ln 2 x^2) < 1e-30 counts as 0.
constexpr double kReachInWidths = 5;

/// k DM in s Hz^2 (the constant for frequencies in Hz).
double dispersionInHz(double dispersionMeasure) {
  return kDispersionConstant * dispersionMeasure * 1e12;
}

}  // namespace

double dispersionDelay(double dispersionMeasure, double frequency) {
  return dispersionInHz(dispersionMeasure) / (frequency * frequency);
}

double residualChirpTurns(double dispersionMeasure, double centre, double offset) {
  return dispersionInHz(dispersionMeasure) * offset * offset /
         (centre * centre * (centre + offset));
}

double dispersionSpread(double dispersionMeasure, double centre, double sampleRate) {
  const double lowest = centre - 1.5 * sampleRate, highest = centre + 1.5 * sampleRate;
  const double atCentre = dispersionDelay(dispersionMeasure, centre);
  return std::max(dispersionDelay(dispersionMeasure, lowest) - atCentre,
                  atCentre - dispersionDelay(dispersionMeasure, highest));
}

PulseEnvelope::PulseEnvelope(const SimPulsar& pulsar, double sampleRate, double delay)
    : period_(pulsar.period),
      width_(pulsar.width),
      sampleRate_(sampleRate),
      reference_((static_cast<long double>(pulsar.epochMjd) - kMjdOfUnixEpoch) * kSecondsPerDay +
                 delay) {}

double PulseEnvelope::offsetFromPeak(int64_t sample) const {
  const long double turns = (static_cast<long double>(sample) / sampleRate_ - reference_) / period_;
  return double(turns - std::floor(turns + 0.5L)) * period_;
}

void PulseEnvelope::fill(int64_t firstSample, float* amplitude, size_t n) const {
  const double first = offsetFromPeak(firstSample), step = 1 / sampleRate_;
  const double reach = kReachInWidths * width_, scale = 4 * std::log(2.0) / (width_ * width_);
  for (size_t j = 0; j < n; ++j) {
    // Offset from the nearest peak, wrapped to [-period/2, period/2); its neighbours count
    // too when the pulse is wide.
    double offset = first + double(j) * step;
    offset -= std::floor(offset / period_ + 0.5) * period_;
    double power = 0;
    for (const double d : {offset - period_, offset, offset + period_})
      if (std::abs(d) < reach) power += std::exp(-scale * d * d);
    amplitude[j] = float(std::sqrt(power));
  }
}

}  // namespace rtcp::sim
