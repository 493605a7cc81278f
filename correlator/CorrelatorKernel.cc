#include "CorrelatorKernel.h"

#include <omp.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "CorrelatorTiles.h"
#include "rtcp/Baselines.h"

namespace rtcp::correlator {

namespace {

/// Stations per cache block: the first stations of the baselines that one pass over the
/// second stations does, their rows of a span kept in L2: 32 x 12 KB with AVX-512 (whose
/// cores have 1-2 MB of L2; 16 gave 0.02-0.04 less of the peak at 64 and 128 stations),
/// 16 x 12 KB otherwise (AVX2 cores may have 512 KB).
int stationBlock(CorrelatorKernel::Isa isa) {
  return isa == CorrelatorKernel::Isa::kAvx512 ? 32 : 16;
}

/// Samples per span of time: a pair of second stations' rows of a span (24 KB) stay in L1
/// beside a first station's. A longer block (COBALT's 3072 spectra of 64 channels) is
/// correlated a span at a time, the products of later spans added to the first's: whole,
/// the second stations' rows would stream from L2 (0.46-0.53 of the FMA peak at 3072).
constexpr int kSpanLength = 768;

constexpr int kFloatsPerLine = 16;

/// One block of first stations' baselines of one channel over one span of time.
struct SpanWork {
  std::span<const float* const> stations;
  int nrStations, nrChannels, paddedSamples, summedSamples;
  int channel, firstStation, blockSize, start;
  std::complex<float>* visibilities;

  int endOfBlock() const { return std::min(firstStation + blockSize, nrStations); }
  int length() const { return std::min(kSpanLength, summedSamples - start); }
  tiles::Span span() const { return {paddedSamples, length(), start > 0}; }
  /// Station s's [pol][reim] rows of this channel, from the span's start.
  const float* in(int s) const {
    return stations[size_t(s)] + size_t(channel) * 4 * paddedSamples + start;
  }
  std::complex<float>* out(int s1, int s2) const {
    return visibilities + (size_t(baselineIndex(s1, s2)) * nrChannels + channel) * 4;
  }
};

/// AVX-512: second stations in pairs, whose rows stay in L1 while the block's first
/// stations' rows stream from L2 (the hardware prefetchers follow the rows: asking for the
/// next pair's rows, or the next channel's, in software cost 0.02-0.03 of the peak).
void correlatePairs(const SpanWork& work) {
  const tiles::Span span = work.span();
  const int endOfBlock = work.endOfBlock();
  for (int s2 = work.firstStation; s2 + 1 < work.nrStations; s2 += 2) {
    for (int s1 = work.firstStation; s1 < std::min(endOfBlock, s2 + 1); ++s1)
      tiles::pairAvx512(work.in(s1), work.in(s2), work.in(s2 + 1), span, work.out(s1, s2),
                        work.out(s1, s2 + 1));
    if (s2 + 1 < endOfBlock)
      tiles::singleAvx512(work.in(s2 + 1), work.in(s2 + 1), span, work.out(s2 + 1, s2 + 1));
  }
}

/// Asks the cache for share `call` of `calls` of the 4 rows at `rows`.
void prefetchShare(const float* rows, int stride, int linesPerRow, int call, int calls) {
  const int total = 4 * linesPerRow;
  for (int line = total * call / calls; line < total * (call + 1) / calls; ++line)
    __builtin_prefetch(rows + (line / linesPerRow) * stride + (line % linesPerRow) * kFloatsPerLine,
                       0, 3);
}

/// Baselines with second stations from firstSecond on, one at a time, the next second
/// station's rows asked for, a share per call (after the last, the next block's first).
/// A channel's stations lie a channel-block apart, too far apart for the hardware
/// prefetchers (rtcp-bench correlator, AVX2, one thread, 32 and 64 stations: 0.69-0.71 of
/// the FMA peak without, 0.75 with; further ahead, less).
void correlateSingles(const SpanWork& work, tiles::SingleTile single, int firstSecond) {
  const tiles::Span span = work.span();
  const int endOfBlock = work.endOfBlock();
  for (int s2 = firstSecond; s2 < work.nrStations; ++s2) {
    const int next = s2 + 1 < work.nrStations ? s2 + 1 : endOfBlock;
    const float* ahead = next < work.nrStations ? work.in(next) : nullptr;
    const int calls = std::min(endOfBlock, s2 + 1) - work.firstStation;
    for (int call = 0; call < calls; ++call) {
      if (ahead) prefetchShare(ahead, span.stride, span.length / kFloatsPerLine, call, calls);
      const int s1 = work.firstStation + call;
      single(work.in(s1), work.in(s2), span, work.out(s1, s2));
    }
  }
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
      summedSamples_((nrSamples + 15) / 16 * 16),
      isa_(resolve(isa, "CorrelatorKernel")),
      nrThreads_(nrThreads > 0 ? nrThreads : omp_get_max_threads()) {
  if (nrStations < 1 || nrChannels < 1 || nrSamples < 1)
    throw std::invalid_argument("CorrelatorKernel: " + std::to_string(nrStations) + " stations, " +
                                std::to_string(nrChannels) + " channels, " +
                                std::to_string(nrSamples) + " samples");
}

CorrelatorKernel::Isa CorrelatorKernel::resolve(Isa isa, const std::string& part) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (isa == Isa::kAuto) return avx512 ? Isa::kAvx512 : avx2 ? Isa::kAvx2 : Isa::kGeneric;
  if ((isa == Isa::kAvx512 && !avx512) || (isa == Isa::kAvx2 && !avx2))
    throw std::runtime_error(part + ": this CPU lacks " + toString(isa));
  return isa;
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
  singleTile(isa_)(a, b, {paddedSamples_, summedSamples_, false}, out);
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
  if (nrChannels_ >= 2 * nrThreads_) {
    // Contiguous shares of whole channels, a span at a time: a span's rows of every station
    // come from memory once and stay in L2 for all its blocks.
#pragma omp parallel for schedule(static) num_threads(nrThreads_)
    for (int channel = 0; channel < nrChannels_; ++channel)
      correlateChannel(stations, channel, visibilities);
  } else {  // few channels: blocks of unequal work shared out as threads come free
    const int block = stationBlock(isa_), nrBlocks = (nrStations_ + block - 1) / block;
#pragma omp parallel for schedule(dynamic) num_threads(nrThreads_)
    for (int item = 0; item < nrChannels_ * nrBlocks; ++item)
      correlateBlock(stations, item / nrBlocks, (item % nrBlocks) * block, visibilities);
  }
}

void CorrelatorKernel::correlateChannel(std::span<const float* const> stations, int channel,
                                        std::complex<float>* visibilities) const {
  for (int start = 0; start < summedSamples_; start += kSpanLength)
    for (int first = 0; first < nrStations_; first += stationBlock(isa_))
      correlateSpan(stations, channel, first, start, visibilities);
}

void CorrelatorKernel::correlateBlock(std::span<const float* const> stations, int channel,
                                      int firstStation, std::complex<float>* visibilities) const {
  for (int start = 0; start < summedSamples_; start += kSpanLength)
    correlateSpan(stations, channel, firstStation, start, visibilities);
}

/// Baselines (s1, s2) of one channel with s1 in the block of first stations from firstStation
/// over the span of time from `start`.
void CorrelatorKernel::correlateSpan(std::span<const float* const> stations, int channel,
                                     int firstStation, int start,
                                     std::complex<float>* visibilities) const {
  const SpanWork work{stations, nrStations_,  nrChannels_,        paddedSamples_, summedSamples_,
                      channel,  firstStation, stationBlock(isa_), start,          visibilities};
  int firstSingle = firstStation;
  if (isa_ == Isa::kAvx512) {
    correlatePairs(work);
    firstSingle += (nrStations_ - firstStation) / 2 * 2;
  }
  correlateSingles(work, singleTile(isa_), firstSingle);
}

}  // namespace rtcp::correlator
