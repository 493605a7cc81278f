// rtcp-bench filterbank: how many station-subbands one core keeps up with in real time,
// for the filter bank (16-bit input, 64 channels) and for the whole SubbandProcessor chain.
#include <random>
#include <string>
#include <vector>

#include "BenchTiming.h"
#include "ChainBenchmark.h"
#include "InputConverter.h"
#include "PolyphaseFilterBank.h"
#include "SpectrumFlagger.h"
#include "SubbandProcessor.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {

namespace {

constexpr int kChannels = 64;
constexpr int kSpectra = 768;

ObservationSettings benchSettings(int nrStations) {
  ObservationSettings settings;
  settings.bitsPerSample = 16;
  settings.channelsPerSubband = kChannels;
  settings.spectraPerBlock = kSpectra;
  for (int s = 0; s < nrStations; ++s) {
    StationSettings station;
    station.name = std::to_string(s);
    station.name.insert(station.name.begin(), 'S');
    settings.stations.push_back(station);
  }
  SubbandSettings subband;
  subband.number = 150;
  subband.frequency = 150 * settings.subbandWidth();
  settings.subbands.push_back(subband);
  return settings;
}

StationBlock randomBlock(const ObservationSettings& settings, int station, std::mt19937& random) {
  StationBlock block(1, nrHistorySamples(settings) + int(settings.samplesPerBlock()), 16);
  block.header.station = station;
  block.delays[0].residualStart = 1e-7 * station;
  block.delays[0].residualEnd = 1.1e-7 * station;
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& b : block.samples) b = uint8_t(byte(random));
  for (int t = 0; t < block.header.nrSamples; ++t) block.setValid(0, t, true);
  return block;
}

/// Station-subbands per core: samples processed per second over the subband sample rate.
double realTimeStationSubbands(double stationBlocksPerSecond, const ObservationSettings& settings) {
  return stationBlocksPerSecond * double(settings.samplesPerBlock()) / settings.subbandWidth();
}

int run(int, char**) {
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
  const double subbands = chainSubbandsPerCore(nrStations);
  printFigure("chain.N16.subbands_per_core", subbands);
  printFigure("chain.N16.station_subbands_per_core", nrStations * subbands);
  return 0;
}

}  // namespace

double chainSubbandsPerCore(int nrStations) {
  std::mt19937 random(2);
  const ObservationSettings settings = benchSettings(nrStations);
  std::vector<StationBlock> blocks;
  std::vector<const StationBlock*> pointers;
  for (int s = 0; s < nrStations; ++s) blocks.push_back(randomBlock(settings, s, random));
  for (const StationBlock& b : blocks) pointers.push_back(&b);
  SubbandProcessor processor(settings, 1);
  CorrelatedData output = processor.makeOutput();
  const double chainSeconds =
      bestSecondsPerCall([&] { processor.process(pointers, 0, 0, output); });
  return settings.blockDuration() / chainSeconds;
}

RTCP_REGISTER_BENCHMARK("filterbank",
                        "real-time station-subbands per core: filter bank (16-bit, 64 channels) "
                        "and the whole subband chain for 16 stations",
                        run);

}  // namespace rtcp::correlator::bench
