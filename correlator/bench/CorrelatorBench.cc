// rtcp-bench correlator: the correlator kernel's GFLOP/s against the FMA peak measured in
// the same run, for 16 to 128 stations at 64 channels and 768 spectra per block; and, to
// tell arithmetic from memory, on one baseline whose rows stay in L1 and on data that
// stays in L2/L3 (32 stations, 4 channels: 1.5 MB); and on COBALT's default blocks of
// 3072 spectra (64 stations, 16 channels).
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "BenchTiming.h"
#include "CorrelatorKernel.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {

namespace {

constexpr int kChannels = 64;
constexpr int kSpectra = 768;
constexpr int kCobaltSpectra = 3072;

/// GFLOP per second of `clock` (wall or this process's CPU seconds) of the kernel for
/// nrStations on nrThreads threads.
template <typename Clock>
double kernelGflops(int nrStations, int nrThreads, CorrelatorKernel::Isa isa, Clock clock,
                    int nrChannels = kChannels, int nrSpectra = kSpectra) {
  CorrelatorKernel kernel(nrStations, nrChannels, nrSpectra, isa, nrThreads);
  AlignedBuffer<float> samples(size_t(nrStations) * kernel.floatsPerStation());
  std::mt19937 random(1);
  std::normal_distribution<float> gauss;
  for (float& v : samples) v = gauss(random);
  AlignedBuffer<std::complex<float>> visibilities(size_t(nrStations) * (nrStations + 1) / 2 *
                                                  nrChannels * 4);
  const double seconds = bestSecondsPerCall(
      [&] { kernel.correlate(samples.data(), visibilities.data()); }, 5, 0.2, clock);
  return kernel.flopsPerCall() / seconds / 1e9;
}

/// GFLOP per CPU second of one baseline of one channel, its two stations' rows (24 KB) in
/// L1: the tile's arithmetic without the memory behind it.
double baselineGflops(CorrelatorKernel::Isa isa) {
  CorrelatorKernel kernel(2, 1, kSpectra, isa, 1);
  AlignedBuffer<float> samples(2 * kernel.floatsPerStation());
  std::mt19937 random(1);
  std::normal_distribution<float> gauss;
  for (float& v : samples) v = gauss(random);
  std::complex<float> products[4];
  constexpr int kCalls = 1000;
  const double seconds = bestSecondsPerCall(
      [&] {
        for (int call = 0; call < kCalls; ++call)
          kernel.correlateBaseline(samples.data(), samples.data() + kernel.floatsPerStation(),
                                   products);
      },
      5, 0.2, threadCpuSeconds);
  return 32.0 * kSpectra * kCalls / seconds / 1e9;
}

int run(int argc, char** argv) {
  CorrelatorKernel::Isa isa = CorrelatorKernel::Isa::kAuto;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--avx2")
      isa = CorrelatorKernel::Isa::kAvx2;
    else if (arg == "--generic")
      isa = CorrelatorKernel::Isa::kGeneric;
    else if (arg == "--help" || arg == "-h") {
      std::printf("usage: rtcp-bench correlator [--avx2 | --generic]: force an instruction set\n");
      return 0;
    }
  }
  // The machine is shared: the peak is measured before and after the kernels and the
  // larger value kept, so that a busy moment does not inflate the fractions. The same
  // fractions per CPU second (GFLOP per core-second of this process, kernel and peak alike)
  // do not count time slices given to other processes: the figure to trust on a busy machine.
  const int cores = omp_get_num_procs();
  double peak = measureFmaPeakGflops(cores), peak1 = measureFmaPeakGflops(1);
  double peakCpu = measureFmaPeakGflopsPerCpuSecond();
  const std::vector<int> sizes = {16, 32, 64, 128};
  std::vector<double> all, one, oneCpu;
  for (int stations : sizes) {
    all.push_back(kernelGflops(stations, cores, isa, steadySeconds));
    one.push_back(kernelGflops(stations, 1, isa, steadySeconds));
    oneCpu.push_back(kernelGflops(stations, 1, isa, threadCpuSeconds));
  }
  const double inL1 = baselineGflops(isa);
  const double inCache = kernelGflops(32, 1, isa, threadCpuSeconds, 4);
  const double cobalt = kernelGflops(64, 1, isa, threadCpuSeconds, 16, kCobaltSpectra);
  peak = std::max(peak, measureFmaPeakGflops(cores));
  peak1 = std::max(peak1, measureFmaPeakGflops(1));
  peakCpu = std::max(peakCpu, measureFmaPeakGflopsPerCpuSecond());
  printFigure("correlator.isa", CorrelatorKernel::toString(CorrelatorKernel(1, 1, 1, isa).isa()));
  printFigure("correlator.fma_peak_gflops", peak);
  printFigure("correlator.fma_peak_gflops_1thread", peak1);
  printFigure("correlator.fma_peak_gflops_1thread_per_cpu_second", peakCpu);
  printFigure("correlator.threads", cores);
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string name = "correlator.N" + std::to_string(sizes[i]);
    printFigure(name + ".gflops", all[i]);
    printFigure(name + ".fraction_of_fma_peak", all[i] / peak);
    printFigure(name + ".gflops_1thread", one[i]);
    printFigure(name + ".fraction_of_fma_peak_1thread", one[i] / peak1);
    printFigure(name + ".fraction_of_fma_peak_1thread_per_cpu_second", oneCpu[i] / peakCpu);
  }
  printFigure("correlator.baseline_in_l1.fraction_of_fma_peak_1thread_per_cpu_second",
              inL1 / peakCpu);
  printFigure("correlator.N32.in_cache.fraction_of_fma_peak_1thread_per_cpu_second",
              inCache / peakCpu);
  printFigure("correlator.N64.spectra3072.fraction_of_fma_peak_1thread_per_cpu_second",
              cobalt / peakCpu);
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK("correlator",
                        "correlator kernel GFLOP/s and fraction of the FMA peak, 16-128 stations, "
                        "64 channels (--avx2, --generic: force an instruction set)",
                        run);

}  // namespace rtcp::correlator::bench
