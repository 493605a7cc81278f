// rtcp-bench filterbank: how many station-subbands one core keeps up with in real time,
// for the filter bank (16-bit input, 64 channels) and for the whole SubbandProcessor chain,
// hot (one-subband blocks reused from cache) and cold (the correlator program's condition).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "BenchTiming.h"
#include "ChainBenchmark.h"
#include "ChainInputs.h"
#include "InputConverter.h"
#include "PolyphaseFilterBank.h"
#include "SpectrumFlagger.h"
#include "SubbandProcessor.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {

namespace {

/// Prints the steps' time per station-subband (steps 1-4) and per subband (5-7) in ms.
void printStepTimes(const std::string& prefix, const StepTimes& times) {
  for (size_t step = 0; step < times.size(); ++step) {
    std::string name = times.name(step);
    std::replace_if(
        name.begin(), name.end(), [](char c) { return c == ' ' || c == '/'; }, '_');
    const double calls = double(std::max<uint64_t>(times.calls(step), 1));
    printFigure(prefix + ".ms." + name, 1e3 * times.seconds(step) / calls);
  }
}

/// Seconds per call of the step called `name`.
double secondsPerCall(const StepTimes& times, const std::string& name) {
  for (size_t step = 0; step < times.size(); ++step)
    if (times.name(step) == name)
      return times.seconds(step) / double(std::max<uint64_t>(times.calls(step), 1));
  return 0;
}

/// Flops of one station-subband block (dual polarisation, nrSpectra spectra of nrChannels):
/// the FIR's multiply-adds (2 flops a tap, 4 floats a sample) and the FFTs at the usual
/// 5 N log2 N.
double firFftFlops(int nrChannels, int nrSpectra) {
  const double samples = double(nrChannels) * nrSpectra;
  return 2.0 * kFilterTaps * 4 * samples + 2 * 5.0 * samples * std::log2(double(nrChannels));
}

/// Flops of the delay/bandpass step on one station-subband block: a complex multiplication
/// (6 flops) per sample and polarisation.
double delayBandpassFlops(int nrChannels, int nrSpectra) {
  return 6.0 * 2 * double(nrChannels) * nrSpectra;
}

/// Station-subbands per core: samples processed per second over the subband sample rate.
double realTimeStationSubbands(double stationBlocksPerSecond, const ObservationSettings& settings) {
  return stationBlocksPerSecond * double(settings.samplesPerBlock()) / settings.subbandWidth();
}

/// Subbands per core of a processor (one thread) over the blocks' calls: best of several
/// rounds in wall time, or per second of the thread's CPU time.
template <typename Blocks>
double subbandsPerCore(Blocks& blocks, int spectraPerChunk, bool cpuTime,
                       StepTimes* steps = nullptr, const FlaggingSettings* flagging = nullptr) {
  ObservationSettings settings = blocks.settings();
  if (flagging) settings.flagging = *flagging;
  SubbandProcessor processor(settings, 1, CorrelatorKernel::Isa::kAuto, spectraPerChunk);
  CorrelatedData output = processor.makeOutput();
  auto call = [&] { blocks.processNext(processor, output); };
  const double seconds =
      cpuTime ? bestSecondsPerCall(call, 5, 0.2, threadCpuSeconds) : bestSecondsPerCall(call);
  if (steps) *steps = processor.stepTimes();
  return blocks.settings().blockDuration() / seconds;
}

void printCold(const ColdChainFigures& cold) {
  printFigure("chain.N16.cold.subbands_per_core", cold.subbandsPerCore);
  printFigure("chain.N16.cold.station_subbands_per_core", 16 * cold.subbandsPerCore);
  printStepTimes("chain.N16.cold", cold.steps);
  printFigure("chain.N16.cold_first_touch.subbands_per_core", cold.firstTouchSubbandsPerCore);
  printStepTimes("chain.N16.cold_first_touch", cold.firstTouchSteps);
}

/// `rtcp-bench filterbank cold`: only the cold chain (e.g. under perf).
int runCold() {
  printCold(chainSubbandsPerCoreCold(16, kChainSubbandsPerBlock));
  return 0;
}

/// `rtcp-bench filterbank chunks`: the chain hot and cold per second of CPU time for
/// several chunk sizes of steps 1-4 (0: the whole block at once), interleaved twice.
int runChunks() {
  HotBlocks hot(16);
  ColdBlocks cold(16, kChainSubbandsPerBlock);
  {  // every page read once through the mapping
    SubbandProcessor processor(cold.settings(), 1);
    CorrelatedData output = processor.makeOutput();
    for (size_t i = 0; i < cold.nrSubbandBlocks(); ++i) cold.processNext(processor, output);
  }
  for (int round = 0; round < 2; ++round)
    for (int chunk : {0, 32, 64, 128, 256}) {
      const std::string name = "chain.N16.chunk" + std::to_string(chunk);
      printFigure(name + ".subbands_per_cpu_second", subbandsPerCore(hot, chunk, true));
      printFigure(name + ".cold.subbands_per_cpu_second", subbandsPerCore(cold, chunk, true));
    }
  return 0;
}

int run(int argc, char** argv) {
  if (argc > 0 && (std::string(argv[0]) == "--help" || std::string(argv[0]) == "-h")) {
    std::printf(
        "usage: rtcp-bench filterbank [cold | chunks] (cold: only the cold chain; chunks: hot "
        "and cold per CPU second by chunk size)\n");
    return 0;
  }
  if (argc > 0 && std::string(argv[0]) == "cold") return runCold();
  if (argc > 0 && std::string(argv[0]) == "chunks") return runChunks();
  std::mt19937 random(1);
  const ObservationSettings one = benchSettings(1);
  const StationBlock block = randomBlock(one, 0, random);
  InputConverter converter(16);
  SpectrumFlagger flagger(kChannels, kSpectra);
  PolyphaseFilterBank bank(kChannels, kSpectra);
  AlignedBuffer<std::complex<float>> samples(2 * size_t(block.header.nrSamples));
  AlignedBuffer<std::complex<float>> spectra(2 * size_t(kSpectra) * kChannels);
  SpectrumMask mask(kSpectra);
  const double filterSeconds = bestSecondsPerCall([&] {
    converter.convert(block, 0, samples.data());
    flagger.flag(block, 0, mask);
    bank.filter(samples.data(), kSpectra, spectra.data());
  });
  const double firFftSeconds =
      bestSecondsPerCall([&] { bank.filter(samples.data(), kSpectra, spectra.data()); });
  printFigure("filterbank.channels", kChannels);
  printFigure("filterbank.station_subbands_per_core",
              realTimeStationSubbands(1 / filterSeconds, one));
  printFigure("filterbank.fir_fft_only.station_subbands_per_core",
              realTimeStationSubbands(1 / firFftSeconds, one));
  printFigure("filterbank.msamples_per_second_per_core",
              one.samplesPerBlock() / filterSeconds / 1e6);

  const int nrStations = 16;
  StepTimes hotSteps;
  const double subbands = chainSubbandsPerCore(nrStations, &hotSteps);
  printFigure("chain.N16.subbands_per_core", subbands);
  printFigure("chain.N16.station_subbands_per_core", nrStations * subbands);
  printStepTimes("chain.N16", hotSteps);
  // In the correlator's units: GFLOP/s over one core's FMA peak, measured in this run.
  const double peak = measureFmaPeakGflops(1);
  const double firFft = firFftFlops(kChannels, kSpectra) / firFftSeconds / 1e9;
  const double delay =
      delayBandpassFlops(kChannels, kSpectra) / secondsPerCall(hotSteps, "delay/bandpass") / 1e9;
  printFigure("filterbank.fma_peak_gflops_1thread", peak);
  printFigure("filterbank.fir_fft.gflops", firFft);
  printFigure("filterbank.fir_fft.fraction_of_fma_peak", firFft / peak);
  printFigure("chain.N16.delay_bandpass.gflops", delay);
  printFigure("chain.N16.delay_bandpass.fraction_of_fma_peak", delay / peak);
  const ColdChainFigures cold = chainSubbandsPerCoreCold(nrStations, kChainSubbandsPerBlock);
  printCold(cold);
  printFigure("chain.N16.cold_over_hot", cold.subbandsPerCore / subbands);
  printFigure("chain.N16.cold_first_touch_over_hot", cold.firstTouchSubbandsPerCore / subbands);
  return 0;
}

}  // namespace

double chainSubbandsPerCore(int nrStations, StepTimes* steps, const FlaggingSettings* flagging) {
  HotBlocks blocks(nrStations);
  return subbandsPerCore(blocks, SubbandProcessor::kSpectraPerChunk, false, steps, flagging);
}

ColdChainFigures chainSubbandsPerCoreCold(int nrStations, int subbandsPerBlock) {
  ColdBlocks blocks(nrStations, subbandsPerBlock);
  ColdChainFigures figures;
  {  // one pass over every set: each page read for the first time through the mapping
    SubbandProcessor processor(blocks.settings(), 1);
    CorrelatedData output = processor.makeOutput();
    const double start = steadySeconds();
    for (size_t i = 0; i < blocks.nrSubbandBlocks(); ++i) blocks.processNext(processor, output);
    const double seconds = (steadySeconds() - start) / double(blocks.nrSubbandBlocks());
    figures.firstTouchSubbandsPerCore = blocks.settings().blockDuration() / seconds;
    figures.firstTouchSteps = processor.stepTimes();
  }
  figures.subbandsPerCore =
      subbandsPerCore(blocks, SubbandProcessor::kSpectraPerChunk, false, &figures.steps);
  return figures;
}

RTCP_REGISTER_BENCHMARK(
    "filterbank",
    "real-time station-subbands per core: filter bank (16-bit, 64 channels) "
    "and the whole subband chain for 16 stations, hot and cold [cold: only the cold chain; "
    "chunks: hot and cold per CPU second by chunk size]",
    run);

}  // namespace rtcp::correlator::bench
