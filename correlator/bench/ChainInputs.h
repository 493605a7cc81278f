#pragma once
/// \file ChainInputs.h
/// Inputs of the chain benchmarks (rtcp-bench filterbank): settings of 16-bit, 64-channel,
/// 768-spectrum blocks; random StationBlocks; the hot input (one-subband blocks reused every
/// call) and the cold one (many-subband blocks in shared memory, as a rank's slots).

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "SubbandProcessor.h"
#include "rtcp/RspPacket.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator::bench {

constexpr int kChannels = 64;
constexpr int kSpectra = 768;

inline ObservationSettings benchSettings(int nrStations, int nrSubbands = 1) {
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
inline void randomise(StationBlock& block, int station, std::mt19937& random) {
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
inline StationBlock randomBlock(const ObservationSettings& settings, int station,
                                std::mt19937& random) {
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
inline size_t coldBytes() {
  const long cache = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return std::max<size_t>(2 * size_t(std::max(cache, 0L)), size_t(64) << 20);
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

}  // namespace rtcp::correlator::bench
