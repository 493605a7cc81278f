#include "Beamformer.h"

#include <algorithm>
#include <stdexcept>

namespace rtcp::correlator {

Beamformer::Beamformer(const std::vector<std::string>& stationNames,
                       const std::vector<std::string>& members) {
  for (const std::string& name : members) {
    const auto found = std::find(stationNames.begin(), stationNames.end(), name);
    if (found == stationNames.end())
      throw std::invalid_argument("OLAP.tiedArrayStationNames: station " + name +
                                  " is not in Observation.VirtualInstrument.stationList");
    const int index = int(found - stationNames.begin());
    if (std::find(members_.begin(), members_.end(), index) != members_.end())
      throw std::invalid_argument("OLAP.tiedArrayStationNames: station " + name + " listed twice");
    members_.push_back(index);
  }
  if (members_.size() < 2) members_.clear();
  for (int s = 0; s < int(stationNames.size()); ++s) {
    const bool dropped = std::find(members_.begin() + (members_.empty() ? 0 : 1), members_.end(),
                                   s) != members_.end();
    if (!dropped) outputs_.push_back(s);
  }
}

std::vector<std::string> Beamformer::outputNames(
    const std::vector<std::string>& stationNames) const {
  std::vector<std::string> names;
  for (int s : outputs_) names.push_back(stationNames[size_t(s)]);
  return names;
}

void Beamformer::merge(std::span<float* const> stations, std::span<SpectrumMask* const> masks,
                       int nrChannels, int paddedSpectra) const {
  if (members_.empty()) return;
  const size_t floats = size_t(nrChannels) * 4 * paddedSpectra;
  float* sum = stations[size_t(members_[0])];
  SpectrumMask& mask = *masks[size_t(members_[0])];
  for (size_t m = 1; m < members_.size(); ++m) {
    const float* member = stations[size_t(members_[m])];
    for (size_t i = 0; i < floats; ++i) sum[i] += member[i];
    mask.intersect(*masks[size_t(members_[m])]);
  }
  for (int s = 0; s < mask.size(); ++s) {
    if (mask.valid(s)) continue;
    for (int row = 0; row < 4 * nrChannels; ++row) sum[size_t(row) * paddedSpectra + s] = 0;
  }
}

}  // namespace rtcp::correlator
