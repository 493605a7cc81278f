// rtcp-bench correlator: the correlator kernel's GFLOP/s against the FMA peak measured in
// the same run, for 16 to 128 stations at 64 channels and 768 spectra per block.
#include <omp.h>

#include <algorithm>
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

/// GFLOP per second of `clock` (wall or this process's CPU seconds) of the kernel for
/// nrStations on nrThreads threads.
template <typename Clock>
double kernelGflops(int nrStations, int nrThreads, CorrelatorKernel::Isa isa, Clock clock) {
  CorrelatorKernel kernel(nrStations, kChannels, kSpectra, isa, nrThreads);
  AlignedBuffer<float> samples(size_t(nrStations) * kernel.floatsPerStation());
  std::mt19937 random(1);
  std::normal_distribution<float> gauss;
  for (float& v : samples) v = gauss(random);
  AlignedBuffer<std::complex<float>> visibilities(size_t(nrStations) * (nrStations + 1) / 2 *
                                                  kChannels * 4);
  const double seconds = bestSecondsPerCall(
      [&] { kernel.correlate(samples.data(), visibilities.data()); }, 5, 0.2, clock);
  return kernel.flopsPerCall() / seconds / 1e9;
}

int run(int argc, char** argv) {
  CorrelatorKernel::Isa isa = CorrelatorKernel::Isa::kAuto;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--avx2")
      isa = CorrelatorKernel::Isa::kAvx2;
    else if (arg == "--generic")
      isa = CorrelatorKernel::Isa::kGeneric;
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
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK("correlator",
                        "correlator kernel GFLOP/s and fraction of the FMA peak, 16-128 stations, "
                        "64 channels (--avx2, --generic: force an instruction set)",
                        run);

}  // namespace rtcp::correlator::bench
