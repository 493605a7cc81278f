// rtcp-bench filterbank: how many station-subbands one core keeps up with in real time,
// for the filter bank (16-bit input, 64 channels) and for the whole SubbandProcessor chain,
// hot (one-subband blocks reused from cache) and cold (the correlator program's condition).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "BenchTiming.h"
#include "ChainBenchmark.h"
#include "InputConverter.h"
#include "PolyphaseFilterBank.h"
#include "SpectrumFlagger.h"
#include "SubbandProcessor.h"
#include "rtcp/Benchmark.h"
#include "rtcp/RspPacket.h"

namespace rtcp::correlator::bench {

namespace {

constexpr int kChannels = 64;
constexpr int kSpectra = 768;

ObservationSettings benchSettings(int nrStations, int nrSubbands = 1) {
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
  for (int i = 0; i < nrSubbands; ++i) {
    SubbandSettings subband;
    subband.number = 150 + i;
    subband.frequency = subband.number * settings.subbandWidth();
    settings.subbands.push_back(subband);
  }
  return settings;
}

/// Fills a block's subbands with random 16-bit samples, every sample valid.
void randomise(StationBlock& block, int station, std::mt19937& random) {
  block.header.station = station;
  for (int sb = 0; sb < block.header.nrSubbands; ++sb) {
    block.delays[size_t(sb)] = SubbandDelay{0, 0, 1e-7 * station, 1.1e-7 * station};
    for (size_t w = 0; w < block.wordsPerSubband(); ++w)
      block.valid[size_t(sb) * block.wordsPerSubband() + w] = ~uint64_t(0);
  }
  for (size_t i = 0; i + 4 <= block.samples.size(); i += 4) {
    const uint32_t word = random();
    std::memcpy(&block.samples[i], &word, 4);
  }
}

/// A station's block of one subband, random 16-bit samples, every sample valid.
StationBlock randomBlock(const ObservationSettings& settings, int station, std::mt19937& random) {
  StationBlock block(1, nrHistorySamples(settings) + int(settings.samplesPerBlock()), 16);
  randomise(block, station, random);
  return block;
}

/// Shared memory as the correlator program gets its StationBlocks (link/SharedBlockSegment):
/// shmem pages (4 KB: shmem is not given transparent huge pages by default), written through
/// one mapping and read through a second, read-only one.
class SharedBlocks {
 public:
  explicit SharedBlocks(size_t bytes) : bytes_(bytes) {
    const int fd = memfd_create("rtcp-bench-blocks", 0);
    if (fd < 0 || ftruncate(fd, off_t(bytes)) != 0) {
      if (fd >= 0) close(fd);
      throw std::runtime_error("rtcp-bench filterbank: no shared memory of " +
                               std::to_string(bytes >> 20) + " MB");
    }
    void* w = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void* r = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (w == MAP_FAILED || r == MAP_FAILED)
      throw std::runtime_error("rtcp-bench filterbank: cannot map shared memory");
    writable_ = static_cast<uint8_t*>(w);
    readable_ = static_cast<uint8_t*>(r);
    madvise(writable_, bytes, MADV_POPULATE_WRITE);
  }
  ~SharedBlocks() {
    munmap(writable_, bytes_);
    munmap(readable_, bytes_);
  }
  SharedBlocks(const SharedBlocks&) = delete;
  SharedBlocks& operator=(const SharedBlocks&) = delete;
  /// Populates the read-only mapping (as SharedBlockMapping does) once everything is written.
  void populateReadable() { madvise(readable_, bytes_, MADV_POPULATE_READ); }
  uint8_t* writable(size_t offset) { return writable_ + offset; }
  uint8_t* readable(size_t offset) { return readable_ + offset; }

 private:
  size_t bytes_;
  uint8_t* writable_ = nullptr;
  uint8_t* readable_ = nullptr;
};

/// Bytes the blocks of the cold chain figure must exceed: twice the last-level cache
/// (at least 64 MB when the system does not say), so no call finds its input in cache.
size_t coldBytes() {
  const long cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return std::max<size_t>(2 * size_t(std::max(cache, 0L)), size_t(64) << 20);
}

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

/// Station-subbands per core: samples processed per second over the subband sample rate.
double realTimeStationSubbands(double stationBlocksPerSecond, const ObservationSettings& settings) {
  return stationBlocksPerSecond * double(settings.samplesPerBlock()) / settings.subbandWidth();
}

/// The hot chain's input: one one-subband StationBlock per station, the same every call.
class HotBlocks {
 public:
  explicit HotBlocks(int nrStations) : settings_(benchSettings(nrStations)) {
    std::mt19937 random(2);
    for (int s = 0; s < nrStations; ++s) blocks_.push_back(randomBlock(settings_, s, random));
    for (const StationBlock& b : blocks_) pointers_.push_back(&b);
  }
  const ObservationSettings& settings() const { return settings_; }
  void processNext(SubbandProcessor& processor, CorrelatedData& output) {
    processor.process(pointers_, 0, 0, output);
  }

 private:
  ObservationSettings settings_;
  std::vector<StationBlock> blocks_;
  std::vector<const StationBlock*> pointers_;
};

/// The cold chain's input: sets of StationBlocks of subbandsPerBlock subbands in shared
/// memory, read through a read-only mapping (see ChainBenchmark.h); processNext() takes the
/// next subband, the next set after the last subband.
class ColdBlocks {
 public:
  ColdBlocks(int nrStations, int subbandsPerBlock)
      : settings_(benchSettings(nrStations, subbandsPerBlock)),
        subbandsPerBlock_(subbandsPerBlock),
        nrSamples_(nrHistorySamples(settings_) + int(settings_.samplesPerBlock())),
        blockBytes_(StationBlock::bytesInOnePiece(subbandsPerBlock, nrSamples_, 16)),
        nrSets_(std::max<size_t>(
            2, (coldBytes() + nrStations * blockBytes_ - 1) / (nrStations * blockBytes_))),
        memory_(nrSets_ * nrStations * blockBytes_),
        views_(nrSets_),
        pointers_(nrSets_) {
    std::mt19937 random(3);
    for (size_t set = 0; set < nrSets_; ++set)
      for (int s = 0; s < nrStations; ++s) {
        const size_t offset = (set * size_t(nrStations) + size_t(s)) * blockBytes_;
        StationBlock written =
            StationBlock::over(memory_.writable(offset), subbandsPerBlock, nrSamples_, 16);
        randomise(written, s, random);
        views_[set].push_back(
            StationBlock::over(memory_.readable(offset), subbandsPerBlock, nrSamples_, 16));
        views_[set].back().header = written.header;
        views_[set].back().header.block = int64_t(set);
      }
    memory_.populateReadable();
    for (size_t set = 0; set < nrSets_; ++set)
      for (const StationBlock& b : views_[set]) pointers_[set].push_back(&b);
  }
  const ObservationSettings& settings() const { return settings_; }
  size_t nrSubbandBlocks() const { return nrSets_ * size_t(subbandsPerBlock_); }
  void processNext(SubbandProcessor& processor, CorrelatedData& output) {
    processor.process(pointers_[set_], subband_, subband_, output);
    if (++subband_ == subbandsPerBlock_) {
      subband_ = 0;
      set_ = (set_ + 1) % nrSets_;
    }
  }

 private:
  ObservationSettings settings_;
  int subbandsPerBlock_;
  int nrSamples_;
  size_t blockBytes_;
  size_t nrSets_;
  SharedBlocks memory_;
  std::vector<std::vector<StationBlock>> views_;  ///< [set][station], as a rank's slot
  std::vector<std::vector<const StationBlock*>> pointers_;
  size_t set_ = 0;
  int subband_ = 0;
};

/// Subbands per core of a processor (one thread) over the blocks' calls: best of several
/// rounds in wall time, or per second of the thread's CPU time.
template <typename Blocks>
double subbandsPerCore(Blocks& blocks, int spectraPerChunk, bool cpuTime,
                       StepTimes* steps = nullptr) {
  SubbandProcessor processor(blocks.settings(), 1, CorrelatorKernel::Isa::kAuto, spectraPerChunk);
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
  const ColdChainFigures cold = chainSubbandsPerCoreCold(nrStations, kChainSubbandsPerBlock);
  printCold(cold);
  printFigure("chain.N16.cold_over_hot", cold.subbandsPerCore / subbands);
  printFigure("chain.N16.cold_first_touch_over_hot", cold.firstTouchSubbandsPerCore / subbands);
  return 0;
}

}  // namespace

double chainSubbandsPerCore(int nrStations, StepTimes* steps) {
  HotBlocks blocks(nrStations);
  return subbandsPerCore(blocks, SubbandProcessor::kSpectraPerChunk, false, steps);
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
