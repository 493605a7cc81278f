#include "SumThreshold.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "OrderStatistics.h"

namespace rtcp::correlator {

namespace {

constexpr size_t kSumLanes = 8;  ///< independent partial sums: one AVX-512 register of doubles

/// detail::clippedMoments's plain form.
__attribute__((target_clones("avx2", "default"))) void clippedMomentsPlain(
    const uint32_t* __restrict keys, size_t count, float low, float high, double& sum,
    double& squares) {
  double lanes[kSumLanes] = {};
  size_t i = 0;
  for (; i + kSumLanes <= count; i += kSumLanes)
    for (size_t l = 0; l < kSumLanes; ++l)
      lanes[l] += double(std::clamp(keyValue(keys[i + l]), low, high));
  sum = 0;
  for (size_t l = 0; l < kSumLanes; ++l) sum += lanes[l];
  for (; i < count; ++i) sum += double(std::clamp(keyValue(keys[i]), low, high));
  const double mean = sum / double(count);
  double deviations[kSumLanes] = {};
  for (i = 0; i + kSumLanes <= count; i += kSumLanes)
    for (size_t l = 0; l < kSumLanes; ++l) {
      const double d = double(std::clamp(keyValue(keys[i + l]), low, high)) - mean;
      deviations[l] += d * d;
    }
  squares = 0;
  for (size_t l = 0; l < kSumLanes; ++l) squares += deviations[l];
  for (; i < count; ++i) {
    const double d = double(std::clamp(keyValue(keys[i]), low, high)) - mean;
    squares += d * d;
  }
}

/// 8 keys' values (keyValue) clipped to [low, high] (as std::clamp), as doubles.
__attribute__((target("avx512f"), always_inline)) inline __m512d clippedAvx512(const uint32_t* keys,
                                                                               __m256 low,
                                                                               __m256 high) {
  const __m256i key = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys));
  const __m256i sign = _mm256_set1_epi32(int32_t(0x80000000u));
  // a key with its top bit set was a positive float (that bit flipped), else a negative one
  // (every bit flipped)
  const __m256i positive = _mm256_cmpeq_epi32(_mm256_and_si256(key, sign), sign);
  const __m256i bits = _mm256_blendv_epi8(_mm256_xor_si256(key, _mm256_set1_epi32(-1)),
                                          _mm256_xor_si256(key, sign), positive);
  const __m256 value = _mm256_min_ps(high, _mm256_max_ps(low, _mm256_castsi256_ps(bits)));
  return _mm512_maskz_cvtps_pd(0xff, value);
}

/// clippedMomentsPlain with its very lanes and order in AVX-512 registers.
__attribute__((target("avx512f"))) void clippedMomentsAvx512(const uint32_t* keys, size_t count,
                                                             float low, float high, double& sum,
                                                             double& squares) {
  const __m256 lo = _mm256_set1_ps(low), hi = _mm256_set1_ps(high);
  __m512d lanes = _mm512_setzero_pd();
  size_t i = 0;
  for (; i + kSumLanes <= count; i += kSumLanes)
    lanes = _mm512_add_pd(lanes, clippedAvx512(keys + i, lo, hi));
  double partial[kSumLanes];
  _mm512_storeu_pd(partial, lanes);
  sum = 0;
  for (size_t l = 0; l < kSumLanes; ++l) sum += partial[l];
  for (; i < count; ++i) sum += double(std::clamp(keyValue(keys[i]), low, high));
  const double mean = sum / double(count);
  const __m512d average = _mm512_set1_pd(mean);
  __m512d deviations = _mm512_setzero_pd();
  for (i = 0; i + kSumLanes <= count; i += kSumLanes) {
    const __m512d d = _mm512_sub_pd(clippedAvx512(keys + i, lo, hi), average);
    deviations = _mm512_fmadd_pd(d, d, deviations);
  }
  _mm512_storeu_pd(partial, deviations);
  squares = 0;
  for (size_t l = 0; l < kSumLanes; ++l) squares += partial[l];
  for (; i < count; ++i) {
    const double d = double(std::clamp(keyValue(keys[i]), low, high)) - mean;
    squares += d * d;
  }
}

/// Mean and σ with the values clipped to their 10th and 90th percentiles; σ scaled by
/// 1.54 in variance, which makes it the standard deviation of Gaussian noise (BG/P's).
/// keys: the unflagged values (OrderStatistics.h); result.median set here too.
void winsorize(const uint32_t* keys, size_t count, RobustStatistics& result,
               SelectionScratch& scratch) {
  const size_t low = size_t(std::floor(0.1 * double(count)));
  const size_t high = std::max<size_t>(size_t(std::ceil(0.9 * double(count))), 1) - 1;
  const size_t ranks[] = {low, count / 2, high};
  float selected[3];
  selectRanks(keys, count, ranks, selected, scratch);
  result.median = selected[1];
  double sum, squares;
  detail::clippedMoments(keys, count, selected[0], selected[2], sum, squares);
  result.sigma = float(std::sqrt(1.54 * squares / double(count)));
}

void normal(const uint32_t* keys, size_t count, RobustStatistics& result,
            SelectionScratch& scratch) {
  const size_t middle[] = {count / 2};
  selectRanks(keys, count, middle, std::span<float>(&result.median, 1), scratch);
  const float infinity = std::numeric_limits<float>::infinity();
  double sum, squares;
  detail::clippedMoments(keys, count, -infinity, infinity, sum, squares);
  result.sigma = float(std::sqrt(squares / double(count)));
}

constexpr size_t kColumnLanes = 16;  ///< columns of a group: one AVX-512 register of floats

/// Window M > 1 on 16 columns (row stride L): sumThresholdPass with the columns side by
/// side, in one sweep down the rows. Row i: the window starting there is judged (lastHit:
/// the start of the column's last window flagged), the running sums move on a row (row i
/// leaves, row i + M enters; a flagged value is left out), and only then is row i flagged
/// where a window covering it was (lastHit + M > i): every window sees the flags as they
/// were before the pass, as in sumThresholdPass. The plain form, for processors without
/// AVX-512; columnsPassAvx512 does the same in registers.
void columnsPassPlain(const float* values, uint8_t* flags, size_t n, size_t L, size_t M,
                      float threshold) {
  float sum[kColumnLanes] = {}, count[kColumnLanes] = {};
  int32_t lastHit[kColumnLanes];
  const int32_t window = int32_t(M);
  std::fill_n(lastHit, kColumnLanes, -window);
  for (size_t i = 0; i < M; ++i)
    for (size_t l = 0; l < kColumnLanes; ++l) {
      const float keep = float(1 - int(flags[i * L + l]));
      sum[l] += keep * values[i * L + l];
      count[l] += keep;
    }
  for (size_t i = 0; i < n; ++i) {
    if (i + M <= n) {  // the window starting at row i
      for (size_t l = 0; l < kColumnLanes; ++l) {
        const bool any = count[l] > 0;
        lastHit[l] = any && sum[l] > threshold * count[l] ? int32_t(i) : lastHit[l];
        sum[l] = any ? sum[l] : 0.0f;  // no rounding residue carried over an all-flagged stretch
      }
      if (i + M < n)
        for (size_t l = 0; l < kColumnLanes; ++l) {
          const float keepOut = float(1 - int(flags[i * L + l]));
          const float keepIn = float(1 - int(flags[(i + M) * L + l]));
          count[l] += keepIn - keepOut;
          sum[l] = (sum[l] - keepOut * values[i * L + l]) + keepIn * values[(i + M) * L + l];
        }
    }
    for (size_t l = 0; l < kColumnLanes; ++l)
      flags[i * L + l] |= uint8_t(lastHit[l] + window > int32_t(i));
  }
}

/// Window 1 on 16 columns (row stride L): a value above the threshold is flagged (a
/// flagged one stays flagged); highest: the highest value left unflagged (-inf for none),
/// largest: the largest magnitude left unflagged.
void columnsSinglePlain(const float* values, uint8_t* flags, size_t n, size_t L, float threshold,
                        float& highest, float& largest) {
  highest = -std::numeric_limits<float>::infinity();
  largest = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t l = 0; l < kColumnLanes; ++l) {
      const float v = values[i * L + l];
      flags[i * L + l] |= uint8_t(v > threshold);
      if (flags[i * L + l]) continue;
      highest = std::max(highest, v);
      largest = std::max(largest, std::abs(v));
    }
}

/// The 16 flags of a row as a mask of the columns kept (not flagged).
__attribute__((target("avx512f"), always_inline)) inline __mmask16 keptAvx512(
    const uint8_t* flags) {
  const __m512i f =
      _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(flags)));
  return _mm512_cmpeq_epi32_mask(f, _mm512_setzero_si512());
}

/// columnsPassPlain in AVX-512 registers, with the very arithmetic: a kept value is added
/// to or subtracted from the running sum (the plain form's products with 1 or 0 are exact),
/// the counts are integers (exact in float). flagged[i]: row i's flags as a bit mask.
__attribute__((target("avx512f"))) void columnsPassAvx512(const float* values, uint16_t* flagged,
                                                          size_t n, size_t L, size_t M,
                                                          float threshold) {
  const int32_t window = int32_t(M);
  const __m512 limit = _mm512_set1_ps(threshold);
  __m512 sum = _mm512_setzero_ps();
  __m512i count = _mm512_setzero_si512(), lastHit = _mm512_set1_epi32(-window);
  const __m512i one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
  for (size_t i = 0; i < M; ++i) {
    const __mmask16 kept = __mmask16(~flagged[i]);
    sum = _mm512_mask_add_ps(sum, kept, sum, _mm512_loadu_ps(values + i * L));
    count = _mm512_mask_add_epi32(count, kept, count, one);
  }
  for (size_t i = 0; i < n; ++i) {
    const __m512i row = _mm512_set1_epi32(int32_t(i));
    if (i + M <= n) {  // the window starting at row i
      const __mmask16 any = _mm512_cmpgt_epi32_mask(count, zero);
      const __mmask16 hit = _mm512_mask_cmp_ps_mask(
          any, sum, _mm512_mul_ps(limit, _mm512_maskz_cvtepi32_ps(0xffff, count)), _CMP_GT_OQ);
      lastHit = _mm512_mask_mov_epi32(lastHit, hit, row);
      sum = _mm512_maskz_mov_ps(any, sum);  // no rounding residue over an all-flagged stretch
      if (i + M < n) {
        const __mmask16 out = __mmask16(~flagged[i]), in = __mmask16(~flagged[i + M]);
        count = _mm512_mask_sub_epi32(count, out, count, one);
        count = _mm512_mask_add_epi32(count, in, count, one);
        sum = _mm512_mask_sub_ps(sum, out, sum, _mm512_loadu_ps(values + i * L));
        sum = _mm512_mask_add_ps(sum, in, sum, _mm512_loadu_ps(values + (i + M) * L));
      }
    }
    flagged[i] |= uint16_t(
        _mm512_cmpgt_epi32_mask(_mm512_add_epi32(lastHit, _mm512_set1_epi32(window)), row));
  }
}

/// columnsSinglePlain in AVX-512 registers; the flags after it as bit masks, flagged[i] of
/// row i.
__attribute__((target("avx512f"))) void columnsSingleAvx512(const float* values,
                                                            const uint8_t* flags, size_t n,
                                                            size_t L, float threshold,
                                                            uint16_t* flagged, float& highest,
                                                            float& largest) {
  const __m512 limit = _mm512_set1_ps(threshold);
  __m512 high = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  __m512 magnitude = _mm512_setzero_ps();
  for (size_t i = 0; i < n; ++i) {
    const __m512 v = _mm512_loadu_ps(values + i * L);
    const __mmask16 kept = keptAvx512(flags + i * L) & _mm512_cmp_ps_mask(v, limit, _CMP_LE_OQ);
    flagged[i] = uint16_t(~kept);
    high = _mm512_mask_max_ps(high, kept, high, v);
    magnitude = _mm512_mask_max_ps(magnitude, kept, magnitude, _mm512_abs_ps(v));
  }
  float highs[kColumnLanes], magnitudes[kColumnLanes];
  _mm512_storeu_ps(highs, high);
  _mm512_storeu_ps(magnitudes, magnitude);
  highest = *std::max_element(highs, highs + kColumnLanes);
  largest = *std::max_element(magnitudes, magnitudes + kColumnLanes);
}

/// The bit masks back into the flags (1 where set).
__attribute__((target("avx512f"))) void storeFlagsAvx512(const uint16_t* flagged, size_t n,
                                                         size_t L, uint8_t* flags) {
  const __m512i one = _mm512_set1_epi32(1);
  for (size_t i = 0; i < n; ++i)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(flags + i * L),
                     _mm512_maskz_cvtepi32_epi8(0xffff, _mm512_maskz_mov_epi32(flagged[i], one)));
}

/// Every window on 16 columns (stride L), thresholds[w] that of window 2^w (windows of them).
/// A window can only be flagged if a value in it exceeds its threshold, up to the rounding
/// of the running sums (at most 2n additions of sums of M values, each rounded by 2^-24 of
/// itself): a window length whose threshold is above the columns' highest unflagged value
/// by more than that is skipped, with the very flags it would have given.
void columnsGroup(const float* values, uint8_t* flags, size_t n, size_t L, const float* thresholds,
                  size_t windows, bool avx512, std::vector<uint16_t>& flagged) {
  float highest, largest;
  if (avx512) {
    flagged.resize(n);
    columnsSingleAvx512(values, flags, n, L, thresholds[0], flagged.data(), highest, largest);
  } else {
    columnsSinglePlain(values, flags, n, L, thresholds[0], highest, largest);
  }
  for (size_t w = 1; w < windows; ++w) {
    const size_t window = size_t(1) << w;
    const double rounding = double(largest) * double(n) * double(window) * 0x1p-21;
    if (double(highest) + rounding < double(thresholds[w]) * (1 - 0x1p-23)) continue;
    if (avx512)
      columnsPassAvx512(values, flagged.data(), n, L, window, thresholds[w]);
    else
      columnsPassPlain(values, flags, n, L, window, thresholds[w]);
  }
  if (avx512) storeFlagsAvx512(flagged.data(), n, L, flags);
}

}  // namespace

void detail::clippedMoments(const uint32_t* keys, size_t count, float low, float high, double& sum,
                            double& squares, ColumnKernel kernel) {
  if (kernel == ColumnKernel::kBest && hasAvx512())
    clippedMomentsAvx512(keys, count, low, high, sum, squares);
  else
    clippedMomentsPlain(keys, count, low, high, sum, squares);
}

RobustStatistics robustStatistics(const float* values, const uint8_t* flags, size_t n,
                                  size_t stride, FlaggerStatistics kind,
                                  SelectionScratch& scratch) {
  RobustStatistics result;
  result.count = gatherKeys(values, flags, n, stride, scratch.keys);
  if (result.count == 0) return result;
  if (kind == FlaggerStatistics::kWinsorized)
    winsorize(scratch.keys.data(), result.count, result, scratch);
  else
    normal(scratch.keys.data(), result.count, result, scratch);
  return result;
}

float median(const float* values, const uint8_t* flags, size_t n, size_t stride,
             SelectionScratch& scratch) {
  const size_t count = gatherKeys(values, flags, n, stride, scratch.keys);
  if (count == 0) return 0;
  const size_t middle[] = {count / 2};
  float result;
  selectRanks(scratch.keys.data(), count, middle, std::span<float>(&result, 1), scratch);
  return result;
}

float windowFactor(size_t window) {
  return float(std::pow(1.5, std::log2(double(window))) / double(window));
}

size_t sumThresholdPass(Series s, size_t window, float threshold, std::vector<uint8_t>& scratch) {
  if (window == 0 || window > s.n) return 0;
  scratch.assign(s.n, 0);
  // Running sum and count of the unflagged values of [i, i + window).
  double sum = 0;
  size_t count = 0;
  for (size_t i = 0; i < window; ++i)
    if (!s.flags[i * s.stride]) {
      sum += s.values[i * s.stride];
      ++count;
    }
  // A window's flags are written as a run: `until` is the end of the last flagged window.
  size_t until = 0;
  for (size_t start = 0;; ++start) {
    if (count > 0 && sum > double(threshold) * double(count)) {
      for (size_t i = std::max(start, until); i < start + window; ++i) scratch[i] = 1;
      until = start + window;
    }
    if (start + window >= s.n) break;
    const size_t out = start * s.stride, in = (start + window) * s.stride;
    if (!s.flags[out]) {
      sum -= s.values[out];
      --count;
    }
    if (!s.flags[in]) {
      sum += s.values[in];
      ++count;
    }
    if (count == 0) sum = 0;  // no rounding residue carried over an all-flagged stretch
  }
  size_t added = 0;
  for (size_t i = 0; i < s.n; ++i)
    if (scratch[i] && !s.flags[i * s.stride]) {
      s.flags[i * s.stride] = 1;
      ++added;
    }
  return added;
}

size_t sumThreshold(Series series, const RobustStatistics& statistics, float firstThreshold,
                    size_t maxWindow, std::vector<uint8_t>& scratch) {
  if (statistics.count == 0) return 0;
  size_t added = 0;
  // After window 1: the highest unflagged value and the largest magnitude. A longer window
  // whose threshold is above the highest by more than the running sums' rounding (2n
  // additions of sums of M values, 2^-53 of each) cannot flag: skipped, the same flags.
  double highest = -std::numeric_limits<double>::infinity(), largest = 0;
  for (size_t window = 1; window <= maxWindow && window <= series.n; window *= 2) {
    const float threshold =
        statistics.median + firstThreshold * windowFactor(window) * statistics.sigma;
    const double rounding = largest * double(series.n) * double(window) * 0x1p-50;
    if (window > 1 && highest + rounding < double(threshold) * (1 - 0x1p-50)) continue;
    added += sumThresholdPass(series, window, threshold, scratch);
    if (window > 1) continue;
    for (size_t i = 0; i < series.n; ++i) {
      if (series.flags[i * series.stride]) continue;
      const double value = series.values[i * series.stride];
      highest = std::max(highest, value);
      largest = std::max(largest, std::abs(value));
    }
  }
  return added;
}

void sumThresholdColumns(const float* values, uint8_t* flags, size_t n, size_t columns,
                         const RobustStatistics& statistics, float firstThreshold, size_t maxWindow,
                         ColumnScratch& scratch, ColumnKernel kernel) {
  if (statistics.count == 0 || n == 0 || columns == 0) return;
  const bool avx512 = kernel == ColumnKernel::kBest && hasAvx512();
  float thresholds[64];  // [w]: window 2^w's
  size_t windows = 0;
  for (size_t window = 1; window <= maxWindow && window <= n; window *= 2)
    thresholds[windows++] =
        statistics.median + firstThreshold * windowFactor(window) * statistics.sigma;
  size_t l0 = 0;
  for (; l0 + kColumnLanes <= columns; l0 += kColumnLanes)
    columnsGroup(values + l0, flags + l0, n, columns, thresholds, windows, avx512, scratch.flagged);
  if (l0 == columns) return;
  // The last columns, fewer than 16: copied into 16 lanes, the rest flagged.
  const size_t width = columns - l0;
  scratch.values.assign(n * kColumnLanes, 0.0f);
  scratch.flags.assign(n * kColumnLanes, uint8_t(1));
  for (size_t i = 0; i < n; ++i) {
    std::copy_n(values + i * columns + l0, width, scratch.values.data() + i * kColumnLanes);
    std::copy_n(flags + i * columns + l0, width, scratch.flags.data() + i * kColumnLanes);
  }
  columnsGroup(scratch.values.data(), scratch.flags.data(), n, kColumnLanes, thresholds, windows,
               avx512, scratch.flagged);
  for (size_t i = 0; i < n; ++i)
    std::copy_n(scratch.flags.data() + i * kColumnLanes, width, flags + i * columns + l0);
}

}  // namespace rtcp::correlator
