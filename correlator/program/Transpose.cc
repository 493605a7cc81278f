#include "Transpose.h"

#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "MpiCheck.h"
#include "rtcp/RspPacket.h"

namespace rtcp::correlator {

namespace {

size_t rowBytes(const StationBlock& block) {
  return size_t(block.header.nrSamples) * bytesPerDualPolSample(block.header.bitsPerSample);
}

}  // namespace

Transpose::Transpose(MPI_Comm comm, const WorkDistribution& distribution, int nrStations)
    : comm_(comm), distribution_(distribution), nrStations_(nrStations) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &nrRanks_);
  if (nrRanks_ != distribution.nrRanks())
    throw std::invalid_argument("Transpose: the communicator has " + std::to_string(nrRanks_) +
                                " ranks, the work distribution " +
                                std::to_string(distribution.nrRanks()));
}

void Transpose::Layout::add(const void* address, size_t bytes) {
  MPI_Aint absolute;
  MPI_Get_address(address, &absolute);
  addresses.push_back(absolute);
  lengths.push_back(int(bytes));
}

Transpose::Layout Transpose::sendLayout(std::span<const StationBlock* const> fetched,
                                        const std::vector<int>& subbands) const {
  Layout layout;
  for (const StationBlock* block : fetched) {
    layout.add(&block->header, sizeof(StationBlockHeader));
    for (int sb : subbands) {
      layout.add(block->valid.data() + sb * block->wordsPerSubband(),
                 block->wordsPerSubband() * sizeof(uint64_t));
      layout.add(&block->delays[size_t(sb)], sizeof(SubbandDelay));
    }
  }
  return layout;
}

Transpose::Layout Transpose::receiveLayout(int source, std::span<StationBlock* const> received,
                                           size_t nrSubbands) const {
  Layout layout;
  for (int s : distribution_.stationsOf(source)) {
    StationBlock* block = received[size_t(s)];
    layout.add(&block->header, sizeof(StationBlockHeader));
    for (size_t j = 0; j < nrSubbands; ++j) {
      layout.add(block->valid.data() + j * block->wordsPerSubband(),
                 block->wordsPerSubband() * sizeof(uint64_t));
      layout.add(&block->delays[j], sizeof(SubbandDelay));
    }
  }
  return layout;
}

MPI_Datatype Transpose::commit(const Layout& layout) {
  MPI_Datatype type;
  checkMpi(MPI_Type_create_hindexed(int(layout.lengths.size()), layout.lengths.data(),
                                    layout.addresses.data(), MPI_BYTE, &type),
           "MPI_Type_create_hindexed");
  checkMpi(MPI_Type_commit(&type), "MPI_Type_commit");
  return type;
}

void Transpose::transpose(int64_t block, std::span<const StationBlock* const> fetched,
                          std::span<StationBlock* const> received, std::vector<int>& subbands) {
  if (int(received.size()) != nrStations_ ||
      fetched.size() != distribution_.stationsOf(rank_).size())
    throw std::invalid_argument("Transpose: wrong number of station blocks");
  subbands = distribution_.subbandsOf(rank_, block);

  // The sample rows (nearly all the bytes) go as contiguous messages, one per row, which
  // UCX moves with a single copy (rendezvous); the small per-block items (header, valid
  // flags, delays) go in one MPI_Alltoallw of datatypes pointing at them. (Rows inside
  // those datatypes went through UCX's packing of non-contiguous data in fragments:
  // 0.06 GB/s, most of a rank's CPU spinning in MPI_Alltoallw.)
  const size_t n = size_t(nrRanks_);
  std::vector<MPI_Datatype> sendTypes(n), receiveTypes(n);
  std::vector<int> ones(n, 1), zeros(n, 0);
  std::vector<MPI_Request> requests;
  for (int r = 0; r < nrRanks_; ++r) {
    const std::vector<int> theirs = distribution_.subbandsOf(r, block);
    const Layout out = sendLayout(fetched, theirs);
    sendTypes[size_t(r)] = commit(out);
    receiveTypes[size_t(r)] = commit(receiveLayout(r, received, subbands.size()));
    if (r == rank_) continue;
    for (int length : out.lengths) bytesSent_ += uint64_t(length);
    postRows(r, fetched, theirs, received, subbands.size(), requests);
  }

  // First wait, sleeping, until every rank has its blocks (the long wait), then move the
  // data at full speed: MPICH progresses a transfer only inside MPI calls, so a transfer
  // waited for with sleeps in between would crawl at a chunk per sleep.
  MPI_Request request;
  checkMpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
  secondsWaiting_ += waitSleeping(request);
  const auto start = std::chrono::steady_clock::now();
  copyOwnRows(fetched, received, subbands);
  checkMpi(MPI_Alltoallw(MPI_BOTTOM, ones.data(), zeros.data(), sendTypes.data(), MPI_BOTTOM,
                         ones.data(), zeros.data(), receiveTypes.data(), comm_),
           "MPI_Alltoallw");
  checkMpi(MPI_Waitall(int(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  secondsTransferring_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int r = 0; r < nrRanks_; ++r) {
    MPI_Type_free(&sendTypes[size_t(r)]);
    MPI_Type_free(&receiveTypes[size_t(r)]);
  }

  for (StationBlock* b : received) {
    b->header.nrSubbands = int32_t(subbands.size());
    b->header.firstSubband = -1;
  }
}

void Transpose::postRows(int partner, std::span<const StationBlock* const> fetched,
                         const std::vector<int>& theirSubbands,
                         std::span<StationBlock* const> received, size_t nrOwnSubbands,
                         std::vector<MPI_Request>& requests) {
  // Rows of one pair of ranks arrive in the order sent (MPI's non-overtaking rule).
  for (int s : distribution_.stationsOf(partner)) {
    StationBlock* block = received[size_t(s)];
    for (size_t j = 0; j < nrOwnSubbands; ++j) {
      requests.emplace_back();
      checkMpi(MPI_Irecv(block->sample(int(j), 0), int(rowBytes(*block)), MPI_BYTE, partner,
                         kRowTag, comm_, &requests.back()),
               "MPI_Irecv");
    }
  }
  for (const StationBlock* block : fetched)
    for (int sb : theirSubbands) {
      requests.emplace_back();
      bytesSent_ += rowBytes(*block);
      checkMpi(MPI_Isend(block->sample(sb, 0), int(rowBytes(*block)), MPI_BYTE, partner, kRowTag,
                         comm_, &requests.back()),
               "MPI_Isend");
    }
}

void Transpose::copyOwnRows(std::span<const StationBlock* const> fetched,
                            std::span<StationBlock* const> received,
                            const std::vector<int>& subbands) {
  const std::vector<int> own = distribution_.stationsOf(rank_);
  for (size_t k = 0; k < own.size(); ++k) {
    const StationBlock& from = *fetched[k];
    StationBlock& to = *received[size_t(own[k])];
    for (size_t j = 0; j < subbands.size(); ++j)
      std::memcpy(to.sample(int(j), 0), from.sample(subbands[j], 0), rowBytes(from));
  }
}

}  // namespace rtcp::correlator
