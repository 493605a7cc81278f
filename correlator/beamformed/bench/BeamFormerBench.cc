// rtcp-bench beamformer: the coherent TAB kernel's GFLOP/s against the FP32 FMA peak
// measured in the same run, for 16-64 stations x 8-128 TABs (16 delay-compensation
// channels of 768 spectra: a quarter of COBALT's block per channel), and the coherent
// dedispersion step's cost per sample.
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "BenchTiming.h"
#include "CoherentDedispersion.h"
#include "TabKernel.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::beamformed::bench {

namespace {

using correlator::bench::bestSecondsPerCall;
using correlator::bench::steadySeconds;

constexpr int kChannels = 16;
constexpr int kSpectra = 768;

/// GFLOP per second of `clock` of the TAB kernel for nrStations x nrTabs on nrThreads.
template <typename Clock>
double kernelGflops(int nrStations, int nrTabs, int nrThreads, TabKernel::Isa isa, Clock clock) {
  TabKernel kernel(nrStations, nrTabs, kChannels, kSpectra, isa, nrThreads);
  AlignedBuffer<float> samples(size_t(nrStations) * kernel.floatsPerStation());
  AlignedBuffer<float> beams(size_t(nrTabs) * kernel.floatsPerTab());
  std::mt19937 random(1);
  std::normal_distribution<float> gauss;
  for (float& v : samples) v = gauss(random);
  std::vector<std::complex<float>> weights(size_t(kChannels) * nrStations * nrTabs);
  for (auto& w : weights) w = std::polar(1.0f, gauss(random));
  std::vector<const float*> stations;
  for (int s = 0; s < nrStations; ++s)
    stations.push_back(samples.data() + size_t(s) * kernel.floatsPerStation());
  const double seconds = bestSecondsPerCall(
      [&] { kernel.form(stations, weights.data(), beams.data()); }, 5, 0.2, clock);
  return kernel.flopsPerCall() / seconds / 1e9;
}

/// Nanoseconds of this thread's CPU per subband-rate sample (both polarisations) of the
/// dedispersion of one TAB, blocks of COBALT's 196608 samples.
double dedispersionNanoseconds(double dm, double frequency, int channels, int* fftSize) {
  const double width = 195312.5;
  const int samples = 196608;
  const int latency = dedispersionLatencyFor(dm, width, frequency, channels, channels);
  *fftSize = CoherentDedispersion::fftSizeFor(latency);
  DedispersionFft fft(*fftSize);
  CoherentDedispersion dedispersion(*fftSize, latency, width, frequency, channels, dm);
  AlignedBuffer<std::complex<float>> data(2 * size_t(samples)), scratch(2 * size_t(*fftSize));
  std::vector<float> valid(size_t(samples), 1.0f);
  std::mt19937 random(2);
  std::normal_distribution<float> gauss;
  for (auto& v : data) v = {gauss(random), gauss(random)};
  const double seconds = bestSecondsPerCall(
      [&] { dedispersion.process(fft, data.data(), valid.data(), samples, scratch.data()); }, 3,
      0.2, threadCpuSeconds);
  return seconds / samples * 1e9;
}

int run(int argc, char** argv) {
  TabKernel::Isa isa = TabKernel::Isa::kAuto;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--avx2") isa = TabKernel::Isa::kAvx2;
    if (arg == "--generic") isa = TabKernel::Isa::kGeneric;
    if (arg == "--help" || arg == "-h") {
      std::printf("usage: rtcp-bench beamformer [--avx2 | --generic]: force an instruction set\n");
      return 0;
    }
  }
  const int cores = omp_get_num_procs();
  double peak = measureFmaPeakGflops(cores), peakCpu = measureFmaPeakGflopsPerCpuSecond();
  struct Figure {
    std::string name;
    double all, oneCpu;
  };
  std::vector<Figure> figures;
  for (int stations : {16, 32, 64})
    for (int tabs : {8, 32, 128})
      figures.push_back({"beamformer.N" + std::to_string(stations) + ".T" + std::to_string(tabs),
                         kernelGflops(stations, tabs, cores, isa, steadySeconds),
                         kernelGflops(stations, tabs, 1, isa, threadCpuSeconds)});
  peak = std::max(peak, measureFmaPeakGflops(cores));
  peakCpu = std::max(peakCpu, measureFmaPeakGflopsPerCpuSecond());
  printFigure("beamformer.isa", CorrelatorKernel::toString(TabKernel(1, 1, 1, 16, isa).isa()));
  printFigure("beamformer.fma_peak_gflops", peak);
  printFigure("beamformer.fma_peak_gflops_1thread_per_cpu_second", peakCpu);
  printFigure("beamformer.threads", cores);
  for (const Figure& f : figures) {
    printFigure(f.name + ".fraction_of_fma_peak", f.all / peak);
    printFigure(f.name + ".fraction_of_fma_peak_1thread_per_cpu_second", f.oneCpu / peakCpu);
  }
  struct Case {
    std::string name;
    double dm, frequency;
    int channels;
  };
  for (const Case& c :
       {Case{"dm10.f150MHz.C16", 10, 150e6, 16}, Case{"dm50.f50MHz.C1", 50, 50e6, 1},
        Case{"dm50.f50MHz.C16", 50, 50e6, 16}}) {
    int fftSize = 0;
    const double ns = dedispersionNanoseconds(c.dm, c.frequency, c.channels, &fftSize);
    printFigure("beamformer.dedispersion." + c.name + ".fft_size", fftSize);
    printFigure("beamformer.dedispersion." + c.name + ".ns_per_sample_1thread_per_cpu_second", ns);
  }
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK(
    "beamformer",
    "coherent TAB kernel fraction of the FMA peak, 16-64 stations x 8-128 TABs, "
    "and coherent dedispersion cost per sample (--avx2, --generic)",
    run);

}  // namespace rtcp::correlator::beamformed::bench
