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
  return int((integration * nrSubbands_ + subband) % nrRanks_);
}

std::vector<int> WorkDistribution::subbandsOf(int rank, int64_t block) const {
  std::vector<int> subbands;
  for (int sb = 0; sb < nrSubbands_; ++sb)
    if (processingRank(block, sb) == rank) subbands.push_back(sb);
  return subbands;
}

}  // namespace rtcp::correlator
