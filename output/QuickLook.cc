#include "QuickLook.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <set>
#include <sstream>

#include "rtcp/Baselines.h"
#include "rtcp/ObservationSummary.h"  // jsonString

namespace rtcp::ion {
namespace {

void appendList(std::ostringstream& out, const float* values, int count) {
  out << '[';
  for (int i = 0; i < count; ++i) {
    if (i) out << ',';
    if (std::isfinite(values[i]))
      out << values[i];
    else
      out << "null";
  }
  out << ']';
}

}  // namespace

QuickLook::QuickLook(const ObservationSettings& settings)
    : subbandIndex_(settings.nrSubbands() / 2),
      subbandNumber_(settings.nrSubbands() > 0
                         ? settings.subbands[size_t(settings.nrSubbands() / 2)].number
                         : 0),
      startTime_(settings.startTime),
      integrationSeconds_(settings.blockDuration() * settings.blocksPerIntegration) {
  for (const StationSettings& station : settings.stations) stationNames_.push_back(station.name);
  const int n = int(stationNames_.size());
  std::set<std::pair<int, int>> pairs;
  for (const int other : {1, n / 2, n - 1})
    if (other > 0 && other < n && int(pairs.size()) < kBaselines) pairs.insert({0, other});
  baselines_.assign(pairs.begin(), pairs.end());
}

void QuickLook::take(const CorrelatedData& in) {
  if (in.subband != subbandIndex_) return;
  const int stations = in.nrStations, channels = in.nrChannels;
  std::vector<float> power(size_t(stations) * size_t(channels));
  std::vector<float> valid(static_cast<size_t>(stations));
  auto visibility = [&](int baseline, int channel, int pol) {
    return in
        .visibilities[(size_t(baseline) * size_t(channels) + size_t(channel)) * 4 + size_t(pol)];
  };
  const double samples =
      std::max(1.0, double(*std::max_element(in.validSamples.data(),
                                             in.validSamples.data() + in.validSamples.size())));
  for (int s = 0; s < stations; ++s) {
    const int baseline = baselineIndex(s, s);
    double validSum = 0;
    for (int c = 0; c < channels; ++c) {
      const uint32_t n = in.validSamples[size_t(baseline) * size_t(channels) + size_t(c)];
      validSum += n;
      // Sums over the integration's samples: divided by them, a power per sample.
      power[size_t(s) * size_t(channels) + size_t(c)] =
          n ? float((visibility(baseline, c, 0).real() + visibility(baseline, c, 3).real()) /
                    double(n))
            : std::nanf("");
    }
    valid[size_t(s)] = float(validSum / (samples * std::max(1, channels)));
  }
  std::vector<float> amplitude, phase;
  for (const auto& [a, b] : baselines_) {
    if (b >= stations) continue;
    const int baseline = baselineIndex(a, b);
    for (int c = 0; c < channels; ++c) {
      const uint32_t n = in.validSamples[size_t(baseline) * size_t(channels) + size_t(c)];
      const std::complex<float> sum = visibility(baseline, c, 0) + visibility(baseline, c, 3);
      amplitude.push_back(n ? std::abs(sum) / float(n) : std::nanf(""));
      phase.push_back(n ? std::arg(sum) * float(180 / M_PI) : std::nanf(""));
    }
  }
  std::lock_guard lock(mutex_);
  if (in.integration < integration_) return;  // an older one, come late
  integration_ = in.integration;
  nrChannels_ = channels;
  autoPower_ = std::move(power);
  validFraction_ = std::move(valid);
  amplitude_ = std::move(amplitude);
  phaseDegrees_ = std::move(phase);
  ++version_;
}

uint64_t QuickLook::version() const {
  std::lock_guard lock(mutex_);
  return version_;
}

std::string QuickLook::json() const {
  std::lock_guard lock(mutex_);
  if (integration_ < 0) return "";
  std::ostringstream out;
  out << std::setprecision(6);
  out << "{\"subband\": " << subbandIndex_ << ", \"subbandNumber\": " << subbandNumber_
      << ", \"integration\": " << integration_ << ", \"time\": " << std::fixed
      << std::setprecision(3) << startTime_ + double(integration_) * integrationSeconds_
      << std::defaultfloat << std::setprecision(6) << ", \"channels\": " << nrChannels_
      << ", \"stations\": [";
  const int stations = int(validFraction_.size());
  for (int s = 0; s < stations; ++s)
    out << (s ? ", " : "")
        << jsonString(size_t(s) < stationNames_.size() ? stationNames_[size_t(s)]
                                                       : "station " + std::to_string(s));
  out << "], \"autoPower\": [";
  for (int s = 0; s < stations; ++s) {
    if (s) out << ", ";
    appendList(out, autoPower_.data() + size_t(s) * size_t(nrChannels_), nrChannels_);
  }
  out << "], \"validFraction\": ";
  appendList(out, validFraction_.data(), stations);
  out << ", \"baselines\": [";
  const size_t shown = nrChannels_ ? amplitude_.size() / size_t(nrChannels_) : 0;
  for (size_t k = 0; k < shown; ++k) {
    const auto& [a, b] = baselines_[k];
    out << (k ? ", " : "") << "{\"stations\": [" << jsonString(stationNames_.at(size_t(a))) << ", "
        << jsonString(stationNames_.at(size_t(b))) << "], \"amplitude\": ";
    appendList(out, amplitude_.data() + k * size_t(nrChannels_), nrChannels_);
    out << ", \"phaseDegrees\": ";
    appendList(out, phaseDegrees_.data() + k * size_t(nrChannels_), nrChannels_);
    out << "}";
  }
  out << "]}";
  return out.str();
}

}  // namespace rtcp::ion
