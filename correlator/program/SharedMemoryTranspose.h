#pragma once
/// \file SharedMemoryTranspose.h
/// The transpose of one block (as Transpose.h) between ranks that share one node's memory,
/// with no MPI transfer and no progress engine: MPI-3 shared-memory windows
/// (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), MPI_Win_allocate_shared). Each rank's
/// window holds its sets of received blocks (setsPerRank of them, the pipeline's pool);
/// each rank copies the rows of its own stations straight into the set of the rank that
/// processes them, wherever its own blocks lie (its memory, or lent by ionproc in shared
/// memory): one memcpy per row at memory speed. MPI only carries which set each rank
/// receives into, and the barrier after the copies; both are waited for with sleeps, so a
/// rank waiting for a late partner costs no CPU.
///
/// Per block: (1) every rank announces the set it receives into (MPI_Iallgather, which
/// also says every rank has its own blocks); (2) every rank copies its stations' rows, valid
/// bits, delays and headers into every rank's announced set; (3) MPI_Win_sync, barrier,
/// MPI_Win_sync: every set is complete.

#include <mpi.h>

#include <cstdint>
#include <span>
#include <vector>

#include "WorkDistribution.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator {

class SharedMemoryTranspose {
 public:
  /// True when every rank of `comm` is on this node (the window can hold them all).
  static bool possible(MPI_Comm comm);

  /// Allocates this rank's setsPerRank sets of nrStations blocks of
  /// distribution.maxSubbandsPerRank() subbands x nrSamples in the shared window.
  SharedMemoryTranspose(MPI_Comm comm, const WorkDistribution& distribution, int nrStations,
                        int setsPerRank, int nrSamples, int bitsPerSample);
  ~SharedMemoryTranspose();
  SharedMemoryTranspose(const SharedMemoryTranspose&) = delete;
  SharedMemoryTranspose& operator=(const SharedMemoryTranspose&) = delete;

  /// Station s's block of this rank's set `set` (in the window; set < setsPerRank).
  StationBlock& block(int set, int station) { return own_[size_t(set * nrStations_ + station)]; }

  /// fetched[k]: the block of station distribution.stationsOf(rank)[k], all subbands.
  /// On return this rank's set `set` holds, for every station, the subbands it processes
  /// in block `block` (subbands[j]: the index of local subband j), headers as Transpose's.
  void transpose(int64_t block, std::span<const StationBlock* const> fetched, int set,
                 std::vector<int>& subbands);

  uint64_t bytesSent() const { return bytesSent_; }  ///< copied into other ranks' sets
  double secondsWaiting() const { return secondsWaiting_; }
  double secondsTransferring() const { return secondsTransferring_; }

 private:
  /// Where station s's block of rank r's set `set` lies in r's window: its header, then
  /// its buffers.
  uint8_t* place(int rank, int set, int station) const;
  /// Station s's block of rank r's set `set`, over r's window memory (its header is the
  /// caller's: the header in the window is written apart).
  StationBlock partnerBlock(int rank, int set, int station) const;
  /// Rows, valid bits and delays of `subbands` of `from` into local subbands 0, 1, ...
  void copyRows(const StationBlock& from, const std::vector<int>& subbands, StationBlock& to);

  MPI_Comm comm_;
  int rank_ = 0, nrRanks_ = 1;
  const WorkDistribution& distribution_;
  int nrStations_, setsPerRank_, nrSubbands_, nrSamples_, bitsPerSample_;
  size_t blockBytes_ = 0;  ///< one station block's place in a window (64-byte multiple)
  MPI_Win window_ = MPI_WIN_NULL;
  std::vector<uint8_t*> bases_;    ///< [rank]: its window memory, mapped here
  std::vector<StationBlock> own_;  ///< [set * nrStations + station]
  uint64_t bytesSent_ = 0;
  double secondsWaiting_ = 0;
  double secondsTransferring_ = 0;
};

}  // namespace rtcp::correlator
