#include "WorkDistribution.h"

#include <stdexcept>

namespace rtcp::correlator {

WorkDistribution::WorkDistribution(int nrRanks, int nrStations, int nrSubbands,
                                   int blocksPerIntegration)
    : nrRanks_(nrRanks),
      nrStations_(nrStations),
      nrSubbands_(nrSubbands),
      integrations_(blocksPerIntegration) {
  if (nrRanks < 1 || nrStations < 1 || nrSubbands < 1)
    throw std::invalid_argument("WorkDistribution: ranks, stations and subbands must be positive");
}

std::vector<int> WorkDistribution::stationsOf(int rank) const {
  std::vector<int> stations;
  for (int s = rank; s < nrStations_; s += nrRanks_) stations.push_back(s);
  return stations;
}

int WorkDistribution::processingRank(int64_t block, int subband) const {
  const int64_t integration = integrations_.of(block);
  // Chunk c holds subbands [ceil(c S / N), ceil((c + 1) S / N)).
  const int chunk = int(int64_t(subband) * nrRanks_ / nrSubbands_);
  return int((integration + chunk) % nrRanks_);
}

WorkDistribution::SubbandRange WorkDistribution::subbandRange(int rank, int64_t block) const {
  const int64_t integration = integrations_.of(block);
  const int chunk = int(((rank - integration) % nrRanks_ + nrRanks_) % nrRanks_);
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
