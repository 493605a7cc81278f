#include "WorkDistribution.h"

#include <stdexcept>

namespace rtcp::correlator {

WorkDistribution::WorkDistribution(int nrRanks, int nrStations, int nrSubbands,
                                   int blocksPerIntegration, Rotation rotation)
    : nrRanks_(nrRanks),
      nrStations_(nrStations),
      nrSubbands_(nrSubbands),
      integrations_(blocksPerIntegration),
      rotation_(rotation) {
  if (nrRanks < 1 || nrStations < 1 || nrSubbands < 1)
    throw std::invalid_argument("WorkDistribution: ranks, stations and subbands must be positive");
}

WorkDistribution WorkDistribution::forObservation(int nrRanks,
                                                  const ObservationSettings& settings) {
  return WorkDistribution(
      nrRanks, settings.nrStations(), settings.nrSubbands(), settings.blocksPerIntegration,
      settings.beamFormed.enabled() ? Rotation::kNone : Rotation::kEveryIntegration);
}

int64_t WorkDistribution::turn(int64_t block) const {
  return rotation_ == Rotation::kNone ? 0 : integrations_.of(block);
}

std::vector<int> WorkDistribution::stationsOf(int rank) const {
  std::vector<int> stations;
  for (int s = rank; s < nrStations_; s += nrRanks_) stations.push_back(s);
  return stations;
}

int WorkDistribution::processingRank(int64_t block, int subband) const {
  // Chunk c holds subbands [ceil(c S / N), ceil((c + 1) S / N)).
  const int chunk = int(int64_t(subband) * nrRanks_ / nrSubbands_);
  return int((turn(block) + chunk) % nrRanks_);
}

WorkDistribution::SubbandRange WorkDistribution::subbandRange(int rank, int64_t block) const {
  const int chunk = int(((rank - turn(block)) % nrRanks_ + nrRanks_) % nrRanks_);
  auto start = [&](int c) { return int((int64_t(c) * nrSubbands_ + nrRanks_ - 1) / nrRanks_); };
  return {start(chunk), start(chunk + 1) - start(chunk)};
}

std::vector<int> WorkDistribution::subbandsOf(int rank, int64_t block) const {
  const SubbandRange range = subbandRange(rank, block);
  std::vector<int> subbands(size_t(range.count));
  for (int i = 0; i < range.count; ++i) subbands[size_t(i)] = range.first + i;
  return subbands;
}

}  // namespace rtcp::correlator
