#pragma once
/// \file WorkDistribution.h
/// Which compute rank does what. Input: station s is fetched (from ionproc or a
/// recording) by rank s % nrRanks. Processing: the subbands of each integration are cut
/// into nrRanks contiguous chunks (sizes differing by at most one), chunk c going to rank
/// (integration + c) % nrRanks, so a rank gets every block of the (integration, subband)
/// pairs it holds: its sums stay in one place and in block order, and a rank may spend
/// several block durations on its share while the others take the next blocks. The
/// chunks move on by one rank per integration, so that uneven chunks even out. Contiguous,
/// a rank's share of a block is one range of subbands: ranks that take their blocks from
/// ionproc's shared memory ask for exactly that range of every station (no exchange).
///
/// Beam-formed observations keep each chunk on one rank for the whole observation
/// (Rotation::kNone, forObservation()): the beam former carries per subband the coherent
/// dedispersion's and the final filter bank's histories from block to block, which a rank
/// that took the subband over would not have (correlator/beamformed/README.md, "In the
/// ranks": what rotating loses, against the balance it gains).

#include <cstdint>
#include <vector>

#include "rtcp/Integrations.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::correlator {

class WorkDistribution {
 public:
  enum class Rotation {
    kEveryIntegration,  ///< chunk c of integration k on rank (k + c) mod N
    kNone,              ///< chunk c on rank c, always
  };
  WorkDistribution(int nrRanks, int nrStations, int nrSubbands, int blocksPerIntegration,
                   Rotation rotation = Rotation::kEveryIntegration);
  /// The distribution of an observation: no rotation when it forms beams.
  static WorkDistribution forObservation(int nrRanks, const ObservationSettings& settings);

  /// Rank that fetches station s's blocks.
  int inputRank(int station) const { return station % nrRanks_; }
  /// Stations rank r fetches, ascending.
  std::vector<int> stationsOf(int rank) const;
  /// Rank that processes subband index `subband` of block `block`.
  int processingRank(int64_t block, int subband) const;
  /// Subband indices rank r processes in block `block`, ascending and contiguous.
  std::vector<int> subbandsOf(int rank, int64_t block) const;
  /// The first of subbandsOf(rank, block) and how many there are (possibly none).
  struct SubbandRange {
    int first = 0, count = 0;
  };
  SubbandRange subbandRange(int rank, int64_t block) const;
  /// The most subbands any rank processes in one block.
  int maxSubbandsPerRank() const { return (nrSubbands_ + nrRanks_ - 1) / nrRanks_; }

  int nrRanks() const { return nrRanks_; }
  Rotation rotation() const { return rotation_; }

 private:
  /// The chunk rotation's step of block `block`: its integration, or 0 without rotation.
  int64_t turn(int64_t block) const;

  int nrRanks_, nrStations_, nrSubbands_;
  Integrations integrations_;
  Rotation rotation_;
};

}  // namespace rtcp::correlator
