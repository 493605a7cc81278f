#include "SharedMemoryTranspose.h"

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "MpiCheck.h"
#include "rtcp/RspPacket.h"

namespace rtcp::correlator {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

bool SharedMemoryTranspose::possible(MPI_Comm comm) {
  MPI_Comm node;
  checkMpi(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
           "MPI_Comm_split_type");
  int onNode = 0, all = 0;
  MPI_Comm_size(node, &onNode);
  MPI_Comm_size(comm, &all);
  MPI_Comm_free(&node);
  // Every rank must agree (a rank alone on its node sees 1 == 1 only when all == 1).
  int everywhere = onNode == all;
  MPI_Allreduce(MPI_IN_PLACE, &everywhere, 1, MPI_INT, MPI_LAND, comm);
  return everywhere != 0;
}

SharedMemoryTranspose::SharedMemoryTranspose(MPI_Comm comm, const WorkDistribution& distribution,
                                             int nrStations, int setsPerRank, int nrSamples,
                                             int bitsPerSample)
    : comm_(comm),
      distribution_(distribution),
      nrStations_(nrStations),
      setsPerRank_(setsPerRank),
      nrSubbands_(distribution.maxSubbandsPerRank()),
      nrSamples_(nrSamples),
      bitsPerSample_(bitsPerSample) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &nrRanks_);
  if (nrRanks_ != distribution.nrRanks())
    throw std::invalid_argument("SharedMemoryTranspose: the communicator has " +
                                std::to_string(nrRanks_) + " ranks, the work distribution " +
                                std::to_string(distribution.nrRanks()));
  // Each block's place: its header, then its buffers (StationBlock::over).
  blockBytes_ = sizeof(StationBlockHeader) +
                StationBlock::bytesInOnePiece(nrSubbands_, nrSamples, bitsPerSample);
  const MPI_Aint bytes = MPI_Aint(blockBytes_ * size_t(nrStations) * size_t(setsPerRank));
  void* base = nullptr;
  checkMpi(MPI_Win_allocate_shared(bytes, 64, MPI_INFO_NULL, comm, &base, &window_),
           "MPI_Win_allocate_shared");
  // One passive epoch for the window's life; MPI_Win_sync orders the copies.
  checkMpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, window_), "MPI_Win_lock_all");
  bases_.resize(size_t(nrRanks_));
  for (int r = 0; r < nrRanks_; ++r) {
    MPI_Aint size = 0;
    int unit = 0;
    void* partner = nullptr;
    checkMpi(MPI_Win_shared_query(window_, r, &size, &unit, &partner), "MPI_Win_shared_query");
    bases_[size_t(r)] = static_cast<uint8_t*>(partner);
    // Window memory is shared memory in 4 KB pages: map every rank's pages in with one
    // call, not a page fault per page at the first blocks (a hint: ignored if refused).
    const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    const uintptr_t start = uintptr_t(partner) / page * page;
    ::madvise(reinterpret_cast<void*>(start), size_t(uintptr_t(partner) + size_t(size) - start),
              MADV_POPULATE_WRITE);
  }
  for (int set = 0; set < setsPerRank; ++set)
    for (int s = 0; s < nrStations; ++s) own_.push_back(partnerBlock(rank_, set, s));
}

SharedMemoryTranspose::~SharedMemoryTranspose() {
  MPI_Win_unlock_all(window_);
  MPI_Win_free(&window_);
}

uint8_t* SharedMemoryTranspose::place(int rank, int set, int station) const {
  return bases_[size_t(rank)] + blockBytes_ * size_t(set * nrStations_ + station);
}

StationBlock SharedMemoryTranspose::partnerBlock(int rank, int set, int station) const {
  return StationBlock::over(place(rank, set, station) + sizeof(StationBlockHeader), nrSubbands_,
                            nrSamples_, bitsPerSample_);
}

void SharedMemoryTranspose::transpose(int64_t block, std::span<const StationBlock* const> fetched,
                                      int set, std::vector<int>& subbands) {
  const std::vector<int> own = distribution_.stationsOf(rank_);
  if (fetched.size() != own.size() || set < 0 || set >= setsPerRank_)
    throw std::invalid_argument("SharedMemoryTranspose: wrong number of station blocks or set");
  subbands = distribution_.subbandsOf(rank_, block);

  // (1) Which set each rank receives into; completes once every rank has its blocks.
  std::vector<int> sets(static_cast<size_t>(nrRanks_));
  MPI_Request request;
  checkMpi(MPI_Iallgather(&set, 1, MPI_INT, sets.data(), 1, MPI_INT, comm_, &request),
           "MPI_Iallgather");
  secondsWaiting_ += waitSleeping(request);

  // (2) Own stations' rows into every rank's set.
  const auto start = Clock::now();
  MPI_Win_sync(window_);
  for (int r = 0; r < nrRanks_; ++r) {
    const std::vector<int> theirs = r == rank_ ? subbands : distribution_.subbandsOf(r, block);
    for (size_t k = 0; k < own.size(); ++k) {
      StationBlock to = partnerBlock(r, sets[size_t(r)], own[k]);
      copyRows(*fetched[k], theirs, to);
      StationBlockHeader header = fetched[k]->header;
      header.nrSubbands = int32_t(theirs.size());
      header.firstSubband = -1;
      std::memcpy(place(r, sets[size_t(r)], own[k]), &header, sizeof header);
      if (r != rank_)
        bytesSent_ += theirs.size() * (size_t(nrSamples_) * bytesPerDualPolSample(bitsPerSample_));
    }
  }
  MPI_Win_sync(window_);

  // (3) Every rank's copies into this rank's set are done (counted as transfer time: the
  // slowest copy of all ranks, as an MPI exchange's wait for its last message).
  checkMpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
  waitSleeping(request);
  MPI_Win_sync(window_);
  secondsTransferring_ += secondsSince(start);
  for (int s = 0; s < nrStations_; ++s)
    std::memcpy(&own_[size_t(set * nrStations_ + s)].header, place(rank_, set, s),
                sizeof(StationBlockHeader));
}

void SharedMemoryTranspose::copyRows(const StationBlock& from, const std::vector<int>& subbands,
                                     StationBlock& to) {
  if (from.header.nrSamples != nrSamples_ || from.header.bitsPerSample != bitsPerSample_)
    throw std::invalid_argument("SharedMemoryTranspose: a fetched block of another shape");
  const size_t rowBytes = size_t(nrSamples_) * bytesPerDualPolSample(bitsPerSample_);
  const size_t words = from.wordsPerSubband();
  for (size_t j = 0; j < subbands.size(); ++j) {
    const int sb = subbands[j];
    std::memcpy(to.sample(int(j), 0), from.sample(sb, 0), rowBytes);
    std::memcpy(to.valid.data() + j * words, from.valid.data() + size_t(sb) * words,
                words * sizeof(uint64_t));
    to.delays[j] = from.delays[size_t(sb)];
  }
}

}  // namespace rtcp::correlator
