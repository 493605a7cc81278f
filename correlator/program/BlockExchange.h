#pragma once
/// \file BlockExchange.h
/// The all-to-all exchange of one block between the compute ranks. Before it, rank r
/// holds the StationBlocks of the stations it fetched, with every subband; after it,
/// every rank holds, for every station, the subbands it processes in that block
/// (WorkDistribution). MPI datatypes point straight at the blocks' buffers (MPI_BOTTOM
/// with absolute addresses), so nothing is packed or unpacked on either side.
///
/// The exchange is non-blocking (MPI_Ialltoallw) and waited for by polling with short
/// sleeps in between: MPICH busy-polls in a blocking wait, which would take the core
/// from this rank's own processing threads.

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "WorkDistribution.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator {

class BlockExchange {
 public:
  BlockExchange(MPI_Comm comm, const WorkDistribution& distribution, int nrStations);

  /// fetched[k]: the block of station distribution.stationsOf(rank)[k], all subbands.
  /// received[s]: a block of station s with room for maxSubbandsPerRank() subbands; on
  /// return it holds the sender's header with nrSubbands (and firstSubband = -1: see
  /// subbands) set to this rank's share, subbands[j] the index of local subband j.
  void exchange(int64_t block, std::span<StationBlock* const> fetched,
                std::span<StationBlock* const> received, std::vector<int>& subbands);

  /// Bytes this rank sent to other ranks, and seconds it waited for exchanges.
  uint64_t bytesSent() const { return bytesSent_; }
  double secondsWaiting() const { return secondsWaiting_; }

 private:
  /// Byte ranges of one partner's message, as absolute addresses and lengths.
  struct Layout {
    std::vector<MPI_Aint> addresses;
    std::vector<int> lengths;
    void add(const void* address, size_t bytes);
  };
  Layout sendLayout(std::span<StationBlock* const> fetched, const std::vector<int>& subbands) const;
  Layout receiveLayout(int source, std::span<StationBlock* const> received, size_t nrSubbands) const;
  static MPI_Datatype commit(const Layout& layout);
  void wait(MPI_Request& request);

  MPI_Comm comm_;
  int rank_, nrRanks_;
  const WorkDistribution& distribution_;
  int nrStations_;
  uint64_t bytesSent_ = 0;
  double secondsWaiting_ = 0;
};

}  // namespace rtcp::correlator
