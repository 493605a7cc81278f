// rtcp-exchange-bench: the correlator's transpose (Transpose, MPI_Alltoallw of station
// blocks, as the ranks run it) timed between the ranks of one mpirun, for
// `rtcp-bench exchange`, which runs it under several MPICH/UCX settings. Rank 0 prints
// `name: value` lines:
// - exchange.gbps: bytes sent between ranks per second of transfer (all ranks together);
// - exchange.cpu_seconds_per_gb: CPU the ranks spent (in the transfers) per GB moved;
// - exchange.memcpy_gbps_one_thread and the fraction: the same machine's memcpy, same run;
// - exchange.wait_cpu_fraction: CPU a rank burns while it waits for a late partner.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "SharedMemoryTranspose.h"
#include "Transpose.h"
#include "WorkDistribution.h"
#include "rtcp/Benchmark.h"

namespace {

using rtcp::measureMemcpyGbps;
using rtcp::processCpuSeconds;
using rtcp::StationBlock;

struct Options {
  int stations = 16;
  int subbands = 32;
  int samples = 768 * 64;  ///< 0.25 s blocks of 64 channels, as rtcp-bench capacity's
  int blocks = 8;
  bool sharedMemory = false;  ///< --shared-memory 1: SharedMemoryTranspose
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i];
    const int value = std::stoi(argv[i + 1]);
    if (key == "--stations")
      o.stations = value;
    else if (key == "--subbands")
      o.subbands = value;
    else if (key == "--samples")
      o.samples = value;
    else if (key == "--blocks")
      o.blocks = value;
    else if (key == "--shared-memory")
      o.sharedMemory = value != 0;
    else
      throw std::invalid_argument("rtcp-exchange-bench: unknown option " + key);
  }
  return o;
}

void print(const char* name, double value) { std::printf("%s: %.4g\n", name, value); }

int run(int argc, char** argv) {
  const Options o = parse(argc, argv);
  int rank = 0, nrRanks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nrRanks);
  const rtcp::correlator::WorkDistribution distribution(nrRanks, o.stations, o.subbands, 1);
  rtcp::correlator::Transpose transpose(MPI_COMM_WORLD, distribution, o.stations);
  std::vector<std::unique_ptr<StationBlock>> fetched, received;
  std::vector<const StationBlock*> fetchedPointers;
  std::vector<StationBlock*> receivedPointers;
  for (int s : distribution.stationsOf(rank)) {
    fetched.push_back(std::make_unique<StationBlock>(o.subbands, o.samples, 16));
    fetched.back()->header.station = s;
    fetched.back()->header.nrSubbands = o.subbands;
    fetched.back()->header.nrSamples = o.samples;
    fetchedPointers.push_back(fetched.back().get());
  }
  for (int s = 0; s < o.stations; ++s) {
    received.push_back(
        std::make_unique<StationBlock>(distribution.maxSubbandsPerRank(), o.samples, 16));
    receivedPointers.push_back(received.back().get());
  }
  std::vector<int> subbands;
  std::unique_ptr<rtcp::correlator::SharedMemoryTranspose> shared;
  if (o.sharedMemory)
    shared = std::make_unique<rtcp::correlator::SharedMemoryTranspose>(
        MPI_COMM_WORLD, distribution, o.stations, 2, o.samples, 16);
  // Either way: block b into set b % 2 (the shared window's) or into `received`.
  auto exchange = [&](int64_t b) {
    if (shared)
      shared->transpose(b, fetchedPointers, int(b % 2), subbands);
    else
      transpose.transpose(b, fetchedPointers, receivedPointers, subbands);
  };
  auto bytesSent = [&] { return shared ? shared->bytesSent() : transpose.bytesSent(); };
  auto secondsTransferring = [&] {
    return shared ? shared->secondsTransferring() : transpose.secondsTransferring();
  };
  auto secondsWaiting = [&] {
    return shared ? shared->secondsWaiting() : transpose.secondsWaiting();
  };
  exchange(0);  // warm up (both of the shared window's sets)
  exchange(1);

  // Transfers: every rank ready at once, so the time is the copy's.
  const uint64_t sent0 = bytesSent();
  const double transfer0 = secondsTransferring();
  const double cpu0 = processCpuSeconds();
  for (int b = 1; b <= o.blocks; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    exchange(b);
  }
  double cpu = processCpuSeconds() - cpu0;
  double bytes = double(bytesSent() - sent0);
  double seconds = secondsTransferring() - transfer0;
  double totals[3] = {cpu, bytes, seconds};
  MPI_Allreduce(MPI_IN_PLACE, totals, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

  // A late partner: every rank but 0 comes 200 ms late; rank 0's CPU while it waits (its
  // CPU in those transposes less what the transfers themselves cost it, as measured above).
  const double waitCpu0 = processCpuSeconds();
  const double waiting0 = secondsWaiting();
  constexpr int kLate = 3;
  for (int b = o.blocks + 1; b <= o.blocks + kLate; ++b) {
    if (rank != 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    exchange(b);
  }
  const double transferCpu = kLate * totals[0] / nrRanks / o.blocks;
  const double waitFraction =
      std::max(0.0, processCpuSeconds() - waitCpu0 - transferCpu) / (secondsWaiting() - waiting0);

  if (rank == 0) {
    const double gbps = 8.0 * totals[1] / (totals[2] / nrRanks) / 1e9;
    const double reference = measureMemcpyGbps();
    print("exchange.ranks", nrRanks);
    print("exchange.bytes_per_block", totals[1] / o.blocks);
    print("exchange.gbps", gbps);
    print("exchange.cpu_seconds_per_gb", totals[0] / (totals[1] / 1e9));
    print("exchange.memcpy_gbps_one_thread", reference);
    print("exchange.fraction_of_memcpy", gbps / reference);
    print("exchange.wait_cpu_fraction", waitFraction);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int code = 1;
  try {
    code = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rtcp-exchange-bench: %s\n", e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return code;
}
