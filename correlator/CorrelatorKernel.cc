#include "CorrelatorKernel.h"

#include <omp.h>

#include <stdexcept>
#include <vector>

#include "CorrelatorTiles.h"
#include "rtcp/Baselines.h"

namespace rtcp::correlator {

namespace {

/// Stations per cache block: the first stations of the baselines one work item does
/// (16 stations x 4 rows x paddedSamples floats stay in L2, 192 KB at 768 samples).
constexpr int kStationBlock = 16;

constexpr size_t kCacheLine = 64;

/// Asks the cache for `count` lines from line `first` on of `rows`.
void prefetchLines(const float* rows, int first, int count) {
  const char* bytes = reinterpret_cast<const char*>(rows) + size_t(first) * kCacheLine;
  for (int line = 0; line < count; ++line) __builtin_prefetch(bytes + line * kCacheLine, 0, 3);
}

CorrelatorKernel::Isa resolve(CorrelatorKernel::Isa isa) {
  using Isa = CorrelatorKernel::Isa;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == Isa::kAuto) return avx512 ? Isa::kAvx512 : avx2 ? Isa::kAvx2 : Isa::kGeneric;
  if ((isa == Isa::kAvx512 && !avx512) || (isa == Isa::kAvx2 && !avx2))
    throw std::runtime_error("CorrelatorKernel: this CPU lacks " + CorrelatorKernel::toString(isa));
  return isa;
}

tiles::SingleTile singleTile(CorrelatorKernel::Isa isa) {
  using Isa = CorrelatorKernel::Isa;
  return isa == Isa::kAvx512 ? tiles::singleAvx512
         : isa == Isa::kAvx2 ? tiles::singleAvx2
                             : tiles::singleGeneric;
}

}  // namespace

CorrelatorKernel::CorrelatorKernel(int nrStations, int nrChannels, int nrSamples, Isa isa,
                                   int nrThreads)
    : nrStations_(nrStations),
      nrChannels_(nrChannels),
      nrSamples_(nrSamples),
      paddedSamples_(paddedLength(nrSamples)),
      isa_(resolve(isa)),
      nrThreads_(nrThreads > 0 ? nrThreads : omp_get_max_threads()) {
  if (nrStations < 1 || nrChannels < 1 || nrSamples < 1)
    throw std::invalid_argument("CorrelatorKernel: " + std::to_string(nrStations) + " stations, " +
                                std::to_string(nrChannels) + " channels, " +
                                std::to_string(nrSamples) + " samples");
}

std::string CorrelatorKernel::toString(Isa isa) {
  switch (isa) {
    case Isa::kAuto:
      return "auto";
    case Isa::kAvx512:
      return "AVX-512";
    case Isa::kAvx2:
      return "AVX2";
    case Isa::kGeneric:
      return "generic";
  }
  return "?";
}

double CorrelatorKernel::flopsPerCall() const {
  return 32.0 * nrBaselines(nrStations_) * nrChannels_ * nrSamples_;
}

void CorrelatorKernel::correlateBaseline(const float* a, const float* b,
                                         std::complex<float>* out) const {
  singleTile(isa_)(a, b, paddedSamples_, out);
}

void CorrelatorKernel::correlate(const float* samples, std::complex<float>* visibilities) const {
  std::vector<const float*> stations(static_cast<size_t>(nrStations_));
  for (int s = 0; s < nrStations_; ++s) stations[size_t(s)] = samples + s * floatsPerStation();
  correlate(stations, visibilities);
}

void CorrelatorKernel::correlate(std::span<const float* const> stations,
                                 std::complex<float>* visibilities) const {
  if (int(stations.size()) != nrStations_)
    throw std::invalid_argument("CorrelatorKernel: " + std::to_string(stations.size()) +
                                " station buffers for " + std::to_string(nrStations_) +
                                " stations");
  for (const float* station : stations)
    if (reinterpret_cast<uintptr_t>(station) % 64)
      throw std::invalid_argument("CorrelatorKernel: station buffers must be 64-byte aligned");
  const int nrBlocks = (nrStations_ + kStationBlock - 1) / kStationBlock;
  const int nrItems = nrChannels_ * nrBlocks;
  auto correlateItem = [&](int item) {
    correlateBlock(stations, item / nrBlocks, (item % nrBlocks) * kStationBlock, visibilities);
  };
  if (nrChannels_ >= 2 * nrThreads_) {
    // Contiguous shares of whole channels: a thread's next item is mostly the next
    // channel, which correlateBlock asks the cache for while it computes.
#pragma omp parallel for schedule(static) num_threads(nrThreads_)
    for (int item = 0; item < nrItems; ++item) correlateItem(item);
  } else {  // few channels: blocks of unequal work shared out as threads come free
#pragma omp parallel for schedule(dynamic) num_threads(nrThreads_)
    for (int item = 0; item < nrItems; ++item) correlateItem(item);
  }
}

/// Baselines (s1, s2) of one channel with s1 in [firstStation, firstStation + kStationBlock).
void CorrelatorKernel::correlateBlock(std::span<const float* const> stations, int channel,
                                      int firstStation, std::complex<float>* visibilities) const {
  const size_t channelOffset = size_t(channel) * 4 * paddedSamples_;
  const int n = paddedSamples_;
  auto out = [&](int s1, int s2) {
    return visibilities + (size_t(baselineIndex(s1, s2)) * nrChannels_ + channel) * 4;
  };
  auto in = [&](int s) { return stations[size_t(s)] + channelOffset; };
  // Each pair call prefetches one station's rows of the next channel (stations from
  // firstStation on: those this block reads), then, with nothing left, its own rows.
  const bool lastChannel = channel + 1 == nrChannels_;
  int nextToFetch = firstStation;
  auto prefetch = [&](const float* own) {
    if (lastChannel || nextToFetch == nrStations_) return own;
    return in(nextToFetch++) + 4 * size_t(n);
  };
  const tiles::SingleTile single = singleTile(isa_);
  const int lastFirst = std::min(firstStation + kStationBlock, nrStations_);
  int s2 = firstStation;
  if (isa_ == Isa::kAvx512)  // second stations in pairs: their rows stay in L1
    for (; s2 + 1 < nrStations_; s2 += 2) {
      const int end = std::min(lastFirst, s2 + 1);
      for (int s1 = firstStation; s1 < end; ++s1)
        tiles::pairAvx512(in(s1), in(s2), in(s2 + 1), n, out(s1, s2), out(s1, s2 + 1),
                          prefetch(in(s1)));
      if (s2 + 1 < lastFirst) single(in(s2 + 1), in(s2 + 1), n, out(s2 + 1, s2 + 1));
    }
  // While s2's baselines run, the next second station's rows are asked for from memory, a
  // share per call; after the last station, the first of the next work item (the next
  // block of this channel, or the next channel). A channel's stations lie a channel-block
  // apart, too far apart for the hardware prefetchers (rtcp-bench correlator, one thread,
  // 32 and 64 stations: 0.69-0.71 of the FMA peak without, 0.75 with; further ahead, less).
  const int linesPerStation = int(4 * size_t(n) * sizeof(float) / kCacheLine);
  const bool lastBlock = lastFirst == nrStations_;
  const int nextFirst = lastBlock ? 0 : lastFirst;
  const size_t nextOffset = lastBlock ? channelOffset + 4 * size_t(n) : channelOffset;
  auto ahead = [&](int s) -> const float* {  // s counts on past nrStations_ into the next item
    if (s < nrStations_) return in(s);
    s += nextFirst - nrStations_;
    if (s >= nrStations_ || (lastBlock && lastChannel)) return nullptr;
    return stations[size_t(s)] + nextOffset;
  };
  for (; s2 < nrStations_; ++s2) {
    const int end = std::min(lastFirst, s2 + 1), calls = end - firstStation;
    const int linesPerCall = (linesPerStation + calls - 1) / calls;
    const float* rowsAhead = ahead(s2 + 1);
    for (int s1 = firstStation; s1 < end; ++s1) {
      const int first = (s1 - firstStation) * linesPerCall;
      if (rowsAhead)
        prefetchLines(rowsAhead, first, std::min(linesPerCall, linesPerStation - first));
      single(in(s1), in(s2), n, out(s1, s2));
    }
  }
}

}  // namespace rtcp::correlator
