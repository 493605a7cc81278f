#pragma once
/// \file Transpose.h
/// The transpose of one block between the compute ranks (an all-to-all exchange). Before it, rank r
/// holds the StationBlocks of the stations it fetched, with every subband; after it,
/// every rank holds, for every station, the subbands it processes in that block
/// (WorkDistribution). MPI datatypes point straight at the blocks' buffers (MPI_BOTTOM
/// with absolute addresses) for the small items; each sample row (subband of a station)
/// is one contiguous message, moved with a single copy; nothing is packed or unpacked.
///
/// MPICH busy-polls in a blocking wait, which would take the core from this rank's own
/// processing threads while a partner is late; but it also moves data only inside MPI
/// calls. So the ranks first meet in a non-blocking barrier, waited for by polling with
/// sleeps in between, and then exchange with a blocking MPI_Alltoallw, which spins only
/// for the time the copy takes.

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "WorkDistribution.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator {

class Transpose {
 public:
  Transpose(MPI_Comm comm, const WorkDistribution& distribution, int nrStations);

  /// fetched[k]: the block of station distribution.stationsOf(rank)[k], all subbands.
  /// received[s]: a block of station s with room for maxSubbandsPerRank() subbands; on
  /// return it holds the sender's header with nrSubbands (and firstSubband = -1: see
  /// subbands) set to this rank's share, subbands[j] the index of local subband j.
  void transpose(int64_t block, std::span<const StationBlock* const> fetched,
                 std::span<StationBlock* const> received, std::vector<int>& subbands);

  /// Bytes this rank sent to other ranks; seconds it waited for the other ranks to be
  /// ready, and seconds the transfers took.
  uint64_t bytesSent() const { return bytesSent_; }
  double secondsWaiting() const { return secondsWaiting_; }
  double secondsTransferring() const { return secondsTransferring_; }

 private:
  /// Byte ranges of one partner's message, as absolute addresses and lengths.
  struct Layout {
    std::vector<MPI_Aint> addresses;
    std::vector<int> lengths;
    void add(const void* address, size_t bytes);
  };
  Layout sendLayout(std::span<const StationBlock* const> fetched,
                    const std::vector<int>& subbands) const;
  Layout receiveLayout(int source, std::span<StationBlock* const> received,
                       size_t nrSubbands) const;
  static MPI_Datatype commit(const Layout& layout);
  /// Posts the receives of the partner's rows (its stations, this rank's subbands) and the
  /// sends of this rank's rows of the partner's subbands.
  void postRows(int partner, std::span<const StationBlock* const> fetched,
                const std::vector<int>& theirSubbands, std::span<StationBlock* const> received,
                size_t nrOwnSubbands, std::vector<MPI_Request>& requests);
  /// This rank's own stations' rows of its own subbands.
  void copyOwnRows(std::span<const StationBlock* const> fetched,
                   std::span<StationBlock* const> received, const std::vector<int>& subbands);
  static constexpr int kRowTag = 15;

  MPI_Comm comm_;
  int rank_, nrRanks_;
  const WorkDistribution& distribution_;
  int nrStations_;
  uint64_t bytesSent_ = 0;
  double secondsWaiting_ = 0;
  double secondsTransferring_ = 0;
};

}  // namespace rtcp::correlator
