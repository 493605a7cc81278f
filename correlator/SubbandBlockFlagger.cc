#include "SubbandBlockFlagger.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace rtcp::correlator {

SubbandBlockFlagger::SubbandBlockFlagger(const FlaggingSettings& settings, int nrStations,
                                         int nrChannels, int nrSpectra, int paddedSpectra,
                                         EdgeChannel edgeChannel)
    : settings_(settings),
      edgeChannel_(edgeChannel),
      flagger_(settings, nrChannels, nrSpectra, paddedSpectra),
      statistics_(size_t(std::max(nrStations, 0))),
      totals_(size_t(std::max(nrStations, 0))) {
  if (nrStations < 1)
    throw std::invalid_argument("SubbandBlockFlagger: " + std::to_string(nrStations) + " stations");
  for (int s = 0; s < nrStations; ++s) flags_.emplace_back(nrChannels, nrSpectra);
}

void SubbandBlockFlagger::flagStation(int station, float* samples, const SpectrumMask& valid,
                                      PreCorrelationFlagger::Workspace& workspace) {
  flagger_.flag(samples, valid, flags_.at(size_t(station)), statistics_[size_t(station)],
                workspace);
  finishStation(station, samples, valid);
}

void SubbandBlockFlagger::flagStationCells(int station, float* samples, const SpectrumMask& valid,
                                           PreCorrelationFlagger::Workspace& workspace) {
  flagger_.flagCells(valid, flags_.at(size_t(station)), statistics_[size_t(station)], workspace);
  finishStation(station, samples, valid);
}

void SubbandBlockFlagger::finishStation(int station, float* samples, const SpectrumMask& valid) {
  if (edgeChannel_ == EdgeChannel::kFollowsSpectra) flagEdgeChannel(station, valid);
  flagger_.zeroFlagged(samples, valid, flags_[size_t(station)]);
}

void SubbandBlockFlagger::flagEdgeChannel(int station, const SpectrumMask& valid) {
  ChannelFlags& flags = flags_[size_t(station)];
  if (flags.nrChannels() < 2) return;
  SpectrumMask& edge = flags.channel(0);
  for (size_t w = 0; w < valid.nrWords(); ++w) {
    uint64_t flaggedEverywhere = valid.word(w);
    for (int c = 1; c < flags.nrChannels() && flaggedEverywhere; ++c)
      flaggedEverywhere &= ~flags.channel(c).word(w);
    for (; flaggedEverywhere; flaggedEverywhere &= flaggedEverywhere - 1)
      edge.set(int(w * 64) + std::countr_zero(flaggedEverywhere), false);
  }
  StationFlagStatistics& statistics = statistics_[size_t(station)];
  const uint64_t arrived = uint64_t(valid.count());
  statistics.validSamples += arrived;
  statistics.flaggedSamples += arrived - uint64_t(edge.count());
}

void SubbandBlockFlagger::settle(std::span<float* const> samples,
                                 std::span<const SpectrumMask* const> valid) {
  if (samples.size() != flags_.size() || valid.size() != flags_.size())
    throw std::invalid_argument("SubbandBlockFlagger::settle: " + std::to_string(samples.size()) +
                                " stations' samples for " + std::to_string(flags_.size()));
  std::vector<BrokenStation> broken(flags_.size(), BrokenStation::kNo);
  if (settings_.detectBrokenStations) broken = findBrokenStations(statistics_, settings_);
  for (size_t s = 0; s < flags_.size(); ++s) {
    if (broken[s] != BrokenStation::kNo) {  // what flagStation left is zeroed now
      flags_[s].flagAll();
      flagger_.zeroFlagged(samples[s], *valid[s], flags_[s]);
    }
    totals_[s].add(statistics_[s], broken[s]);
  }
}

void SubbandBlockFlagger::mergeSuperstation(const Beamformer& beamformer,
                                            std::span<float* const> samples,
                                            std::span<const SpectrumMask* const> valid) {
  const std::vector<int>& members = beamformer.members();
  if (members.size() < 2) return;
  ChannelFlags& merged = flags_[size_t(members[0])];
  for (size_t m = 1; m < members.size(); ++m) merged.intersect(flags_[size_t(members[m])]);
  flagger_.zeroFlagged(samples[size_t(members[0])], *valid[size_t(members[0])], merged);
}

}  // namespace rtcp::correlator
