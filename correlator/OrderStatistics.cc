#include "OrderStatistics.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

namespace rtcp::correlator {

namespace {

constexpr uint32_t kFlaggedKey = std::numeric_limits<uint32_t>::max();  ///< above every value

constexpr int kBinBits = 10;  ///< selectRanks's histogram: up to 2^10 bins (fewer for few keys)

/// Bisection steps that narrow [low, high] to one key.
int stepsFor(uint32_t low, uint32_t high) { return high > low ? std::bit_width(high - low) : 0; }

/// The lowest and the highest of keys[0, count), count > 0 (vector reductions).
__attribute__((target_clones("avx512f", "avx2", "default"))) void keyRange(
    const uint32_t* __restrict keys, size_t count, uint32_t& lowest, uint32_t& highest) {
  uint32_t low = keys[0], high = keys[0];
  for (size_t i = 0; i < count; ++i) {
    low = std::min(low, keys[i]);
    high = std::max(high, keys[i]);
  }
  lowest = low;
  highest = high;
}

/// The keys of a grid of n rows × L columns (flagged: kFlaggedKey) and each column's
/// bracket: its lowest and highest unflagged key, and their number; columns from l0.
__attribute__((target_clones("avx512f", "avx2", "default"))) void keysOfColumns(
    const float* __restrict values, const uint8_t* __restrict flags, size_t n, size_t L,
    uint32_t* __restrict keys, uint32_t* __restrict low, uint32_t* __restrict high,
    uint32_t* __restrict count, size_t l0) {
  for (size_t l = l0; l < L; ++l) {
    low[l] = kFlaggedKey;
    high[l] = count[l] = 0;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t l = l0; l < L; ++l) {
      const bool valid = flags[i * L + l] == 0;
      const uint32_t key = keyOf(values[i * L + l]);
      keys[i * L + l] = valid ? key : kFlaggedKey;
      low[l] = std::min(low[l], valid ? key : kFlaggedKey);
      high[l] = std::max(high[l], valid ? key : 0u);
      count[l] += valid;
    }
}

/// 16 keys as one value (GCC's vector extension: one AVX-512 register, two AVX2 or four
/// SSE ones, whichever the clone compiling it has).
typedef uint32_t KeyLanes __attribute__((vector_size(16 * sizeof(uint32_t))));
constexpr size_t kKeyLanes = 16;

/// `steps` bisection steps on every column: the bracket [low, high] of each column keeps
/// the half that holds its rank, by the column's keys at or below its middle. 16 columns at
/// a time, their brackets and counts held in registers across the rows.
__attribute__((target_clones("avx512f", "avx2", "default"))) void bisectColumns(
    const uint32_t* __restrict keys, size_t n, size_t L, int steps, MedianScratch& s, size_t l0) {
  for (; l0 + kKeyLanes <= L; l0 += kKeyLanes) {
    KeyLanes low, high, rank;
    std::memcpy(&low, s.low.data() + l0, sizeof low);
    std::memcpy(&high, s.high.data() + l0, sizeof high);
    std::memcpy(&rank, s.rank.data() + l0, sizeof rank);
    for (int step = 0; step < steps; ++step) {
      const KeyLanes middle = low + ((high - low) >> 1);
      KeyLanes below = {};
      for (size_t i = 0; i < n; ++i) {
        KeyLanes row;
        std::memcpy(&row, keys + i * L + l0, sizeof row);
        below -= KeyLanes(row <= middle);  // a true comparison is all ones: -1
      }
      const auto over = below > rank;
      high = over ? middle : high;
      low = over ? low : middle + 1;
    }
    std::memcpy(s.low.data() + l0, &low, sizeof low);
    std::memcpy(s.high.data() + l0, &high, sizeof high);
  }
  for (size_t l = l0; l < L; ++l)  // the columns past the last 16
    for (int step = 0; step < steps; ++step) {
      const uint32_t middle = s.low[l] + (s.high[l] - s.low[l]) / 2;
      uint32_t below = 0;
      for (size_t i = 0; i < n; ++i) below += keys[i * L + l] <= middle;
      if (below > s.rank[l])
        s.high[l] = middle;
      else
        s.low[l] = middle + 1;
    }
}

/// 16 floats' keys (keyOf).
__attribute__((target("avx512f"), always_inline)) inline __m512i keysAvx512(const float* values) {
  const __m512i bits = _mm512_loadu_si512(values);
  return _mm512_xor_si512(bits, _mm512_or_si512(_mm512_maskz_srai_epi32(0xffff, bits, 31),
                                                _mm512_set1_epi32(int32_t(0x80000000u))));
}

/// The 16 flags as a mask of the values kept (flag 0).
__attribute__((target("avx512f"), always_inline)) inline __mmask16 keptAvx512(
    const uint8_t* flags) {
  const __m512i f =
      _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(flags)));
  return _mm512_cmpeq_epi32_mask(f, _mm512_setzero_si512());
}

/// keysOfColumns on 16 columns (row stride L) in AVX-512 registers.
__attribute__((target("avx512f"))) void keysOfColumnsAvx512(const float* values,
                                                            const uint8_t* flags, size_t n,
                                                            size_t L, uint32_t* keys, uint32_t* low,
                                                            uint32_t* high, uint32_t* count) {
  const __m512i flagged = _mm512_set1_epi32(-1);
  __m512i lowest = flagged, highest = _mm512_setzero_si512(), kept = _mm512_setzero_si512();
  for (size_t i = 0; i < n; ++i) {
    const __mmask16 valid = keptAvx512(flags + i * L);
    const __m512i key = keysAvx512(values + i * L);
    _mm512_storeu_si512(keys + i * L, _mm512_mask_mov_epi32(flagged, valid, key));
    lowest = _mm512_mask_min_epu32(lowest, valid, lowest, key);
    highest = _mm512_mask_max_epu32(highest, valid, highest, key);
    kept = _mm512_mask_add_epi32(kept, valid, kept, _mm512_set1_epi32(1));
  }
  _mm512_storeu_si512(low, lowest);
  _mm512_storeu_si512(high, highest);
  _mm512_storeu_si512(count, kept);
}

/// keyRange in AVX-512 registers (the last count % 16 keys masked).
__attribute__((target("avx512f"))) void keyRangeAvx512(const uint32_t* keys, size_t count,
                                                       uint32_t& lowest, uint32_t& highest) {
  __m512i low = _mm512_set1_epi32(-1), high = _mm512_setzero_si512();
  for (size_t i = 0; i < count; i += 16) {
    const __mmask16 in = count - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (count - i)) - 1);
    const __m512i key = _mm512_maskz_loadu_epi32(in, keys + i);
    low = _mm512_mask_min_epu32(low, in, low, key);
    high = _mm512_mask_max_epu32(high, in, high, key);
  }
  uint32_t lows[16], highs[16];
  _mm512_storeu_si512(lows, low);
  _mm512_storeu_si512(highs, high);
  lowest = *std::min_element(lows, lows + 16);
  highest = *std::max_element(highs, highs + 16);
}

/// gatherKeys with stride 1 in AVX-512 registers: the kept keys compressed 16 at a time
/// (keys: n + 16 of them).
__attribute__((target("avx512f"))) size_t gatherKeysAvx512(const float* values,
                                                           const uint8_t* flags, size_t n,
                                                           uint32_t* keys) {
  size_t count = 0, i = 0;
  for (; i + 16 <= n; i += 16) {
    const __mmask16 valid = keptAvx512(flags + i);
    // compressed in a register, stored whole (keys has 16 to spare): a compressing store
    // to memory is microcoded on some processors
    _mm512_storeu_si512(keys + count, _mm512_maskz_compress_epi32(valid, keysAvx512(values + i)));
    count += size_t(__builtin_popcount(valid));
  }
  for (; i < n; ++i) {
    keys[count] = keyOf(values[i]);
    count += flags[i] == 0;
  }
  return count;
}

/// The keys of bins[j] (j < ranks) among keys[0, count) into candidates[j] (found[j] of
/// them), keys binned by (key - first) >> shift; AVX-512 compression, 16 keys at a time
/// (candidates[j]: count + 16 of them).
__attribute__((target("avx512f"))) void gatherBinsAvx512(const uint32_t* keys, size_t count,
                                                         uint32_t first, int shift,
                                                         const size_t* bins, size_t ranks,
                                                         uint32_t* const* candidates,
                                                         size_t* found) {
  const __m512i low = _mm512_set1_epi32(int32_t(first));
  const __m128i by = _mm_cvtsi32_si128(shift);
  __m512i bin[kMaxRanks];
  for (size_t j = 0; j < ranks; ++j) bin[j] = _mm512_set1_epi32(int32_t(bins[j]));
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m512i key = _mm512_loadu_si512(keys + i);
    const __m512i b = _mm512_maskz_srl_epi32(0xffff, _mm512_sub_epi32(key, low), by);
    for (size_t j = 0; j < ranks; ++j) {
      const __mmask16 in = _mm512_cmpeq_epi32_mask(b, bin[j]);
      _mm512_storeu_si512(candidates[j] + found[j], _mm512_maskz_compress_epi32(in, key));
      found[j] += size_t(__builtin_popcount(in));
    }
  }
  for (; i < count; ++i) {
    const size_t b = (keys[i] - first) >> shift;
    for (size_t j = 0; j < ranks; ++j) {
      candidates[j][found[j]] = keys[i];
      found[j] += b == bins[j];
    }
  }
}

/// bisectColumns on 16 columns in AVX-512 registers (L: the row stride), stopping once each
/// column's bracket holds one key: the counts of keys below low (countLow) and at or below
/// high (countHigh) are kept, and a bracket with countHigh - countLow <= 1 is done. Then
/// each column's lowest key at or above low is its rank's: low of the column.
__attribute__((target("avx512f"))) void bisectColumnsAvx512(const uint32_t* keys, size_t n,
                                                            size_t L, int steps, uint32_t* lowOut,
                                                            const uint32_t* highIn,
                                                            const uint32_t* countIn,
                                                            const uint32_t* rankIn) {
  __m512i low = _mm512_loadu_si512(lowOut), high = _mm512_loadu_si512(highIn);
  const __m512i rank = _mm512_loadu_si512(rankIn), one = _mm512_set1_epi32(1);
  __m512i countLow = _mm512_setzero_si512(), countHigh = _mm512_loadu_si512(countIn);
  for (int step = 0; step < steps; ++step) {
    const __mmask16 open = _mm512_cmpgt_epu32_mask(_mm512_sub_epi32(countHigh, countLow), one) &
                           _mm512_cmplt_epu32_mask(low, high);
    if (!open) break;
    const __m512i middle =
        _mm512_add_epi32(low, _mm512_maskz_srli_epi32(0xffff, _mm512_sub_epi32(high, low), 1));
    __m512i below = _mm512_setzero_si512();
    for (size_t i = 0; i < n; ++i)
      below = _mm512_mask_add_epi32(
          below, _mm512_cmple_epu32_mask(_mm512_loadu_si512(keys + i * L), middle), below, one);
    const __mmask16 over = _mm512_cmpgt_epu32_mask(below, rank) & open;
    const __mmask16 under = open & ~over;
    high = _mm512_mask_mov_epi32(high, over, middle);
    countHigh = _mm512_mask_mov_epi32(countHigh, over, below);
    low = _mm512_mask_add_epi32(low, under, middle, one);
    countLow = _mm512_mask_mov_epi32(countLow, under, below);
  }
  __m512i lowest = _mm512_set1_epi32(-1);
  for (size_t i = 0; i < n; ++i) {
    const __m512i row = _mm512_loadu_si512(keys + i * L);
    lowest = _mm512_mask_min_epu32(lowest, _mm512_cmpge_epu32_mask(row, low), lowest, row);
  }
  _mm512_storeu_si512(lowOut, lowest);
}

}  // namespace

bool hasAvx512() {
  static const bool has = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));
  return has;
}

size_t gatherKeys(const float* values, const uint8_t* flags, size_t n, size_t stride,
                  std::vector<uint32_t>& keys, ColumnKernel kernel) {
  keys.resize(n + kKeyLanes);  // 16 to spare for the AVX-512 stores
  if (stride == 1 && kernel == ColumnKernel::kBest && hasAvx512())
    return gatherKeysAvx512(values, flags, n, keys.data());
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {  // branch-free: every key written, the unflagged kept
    keys[count] = keyOf(values[i * stride]);
    count += flags[i * stride] == 0;
  }
  return count;
}

void selectRanks(const uint32_t* keys, size_t count, std::span<const size_t> ranks,
                 std::span<float> out, SelectionScratch& scratch, ColumnKernel kernel) {
  if (count == 0 || ranks.size() != out.size() || ranks.size() > kMaxRanks)
    throw std::invalid_argument("selectRanks: " + std::to_string(count) + " values, " +
                                std::to_string(ranks.size()) + " ranks for " +
                                std::to_string(out.size()) + " results");
  uint32_t first, last;
  if (kernel == ColumnKernel::kBest && hasAvx512())
    keyRangeAvx512(keys, count, first, last);
  else
    keyRange(keys, count, first, last);
  // Bins of 2^shift keys from the lowest: at most kBins of them.
  const int binBits = std::clamp(int(std::bit_width(count)), 4, kBinBits);  // ~1 key a bin
  const int shift = std::max(0, int(std::bit_width(last - first)) - binBits);
  const size_t bins = size_t((last - first) >> shift) + 1;
  std::vector<uint32_t>& histogram = scratch.histogram;
  histogram.assign(bins, 0);
  for (size_t i = 0; i < count; ++i) ++histogram[(keys[i] - first) >> shift];
  // Each rank's bin and the keys below it: one walk up the bins, the ranks in order.
  size_t bin[kMaxRanks], below[kMaxRanks], order[kMaxRanks];
  for (size_t j = 0; j < ranks.size(); ++j) order[j] = j;
  std::sort(order, order + ranks.size(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
  size_t b = 0, sum = 0;
  for (size_t o = 0; o < ranks.size(); ++o) {
    const size_t j = order[o];
    while (sum + histogram[b] <= ranks[j]) sum += histogram[b++];
    bin[j] = b;
    below[j] = sum;
  }
  // The keys of each rank's bin (few), gathered in one sweep without a branch (every key
  // written, those of the bin kept), and the rank among them.
  size_t found[kMaxRanks] = {};
  uint32_t* into[kMaxRanks];
  for (size_t j = 0; j < ranks.size(); ++j) {
    if (scratch.candidates[j].size() < count + kKeyLanes)
      scratch.candidates[j].resize(count + kKeyLanes);
    into[j] = scratch.candidates[j].data();
  }
  if (kernel == ColumnKernel::kBest && hasAvx512()) {
    gatherBinsAvx512(keys, count, first, shift, bin, ranks.size(), into, found);
  } else {
    for (size_t i = 0; i < count; ++i) {
      const uint32_t key = keys[i];
      const size_t b = (key - first) >> shift;
      for (size_t j = 0; j < ranks.size(); ++j) {
        into[j][found[j]] = key;
        found[j] += b == bin[j];
      }
    }
  }
  for (size_t j = 0; j < ranks.size(); ++j) {
    const auto candidates = scratch.candidates[j].begin();
    const auto nth = candidates + long(ranks[j] - below[j]);
    std::nth_element(candidates, nth, candidates + long(found[j]));
    out[j] = keyValue(*nth);
  }
}

void columnMedians(const float* values, const uint8_t* flags, size_t n, size_t columns,
                   float* medians, MedianScratch& s, ColumnKernel kernel) {
  const size_t L = columns;
  s.keys.resize(n * L);
  s.low.resize(L);
  s.high.resize(L);
  s.count.resize(L);
  s.rank.resize(L);
  const bool avx512 = kernel == ColumnKernel::kBest && hasAvx512();
  size_t g = 0;
  if (avx512)
    for (; g + kKeyLanes <= L; g += kKeyLanes)
      keysOfColumnsAvx512(values + g, flags + g, n, L, s.keys.data() + g, s.low.data() + g,
                          s.high.data() + g, s.count.data() + g);
  if (g < L)
    keysOfColumns(values, flags, n, L, s.keys.data(), s.low.data(), s.high.data(), s.count.data(),
                  g);
  int steps = 0;
  for (size_t l = 0; l < L; ++l) {
    s.rank[l] = s.count[l] / 2;
    if (s.count[l] == 0) s.low[l] = s.high[l] = 0;
    steps = std::max(steps, stepsFor(s.low[l], s.high[l]));
  }
  size_t l0 = 0;
  if (avx512)
    for (; l0 + kKeyLanes <= L; l0 += kKeyLanes)
      bisectColumnsAvx512(s.keys.data() + l0, n, L, steps, s.low.data() + l0, s.high.data() + l0,
                          s.count.data() + l0, s.rank.data() + l0);
  if (l0 < L) bisectColumns(s.keys.data(), n, L, steps, s, l0);
  for (size_t l = 0; l < L; ++l) medians[l] = s.count[l] ? keyValue(s.low[l]) : 0.0f;
}

}  // namespace rtcp::correlator
