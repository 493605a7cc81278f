#include "SumThreshold.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "OrderStatistics.h"

namespace rtcp::correlator {

namespace {

constexpr size_t kSumLanes = 8;  ///< independent partial sums: one AVX-512 register of doubles

/// The moments of the values of keys[0, count) clipped to [low, high]: sum = Σ x and, with
/// mean = sum / count, squares = Σ (x − mean)². Each sum in 8 lanes added in a fixed order.
__attribute__((target_clones("avx512f", "avx2", "default"))) void clippedMoments(
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
  clippedMoments(keys, count, selected[0], selected[2], sum, squares);
  result.sigma = float(std::sqrt(1.54 * squares / double(count)));
}

void normal(const uint32_t* keys, size_t count, RobustStatistics& result,
            SelectionScratch& scratch) {
  const size_t middle[] = {count / 2};
  selectRanks(keys, count, middle, std::span<float>(&result.median, 1), scratch);
  const float infinity = std::numeric_limits<float>::infinity();
  double sum, squares;
  clippedMoments(keys, count, -infinity, infinity, sum, squares);
  result.sigma = float(std::sqrt(squares / double(count)));
}

/// Window 1 on every column: a value above the threshold (a flagged one stays flagged).
__attribute__((target_clones("avx512f", "avx2", "default"))) void columnsSingle(
    const float* __restrict values, uint8_t* __restrict flags, size_t size, float threshold) {
  for (size_t i = 0; i < size; ++i) flags[i] |= uint8_t(values[i] > threshold);
}

/// Window M > 1 on every column (lanes l < L): sumThresholdPass with the columns side by
/// side, in one sweep down the rows. Row i: the window starting there is judged (lastHit[l]:
/// the start of the column's last window flagged), the running sums move on a row (row i
/// leaves, row i + M enters; a flagged value counts as 0, so values must be finite), and
/// only then is row i flagged where a window covering it was (lastHit + M > i): every
/// window sees the flags as they were before the pass, as in sumThresholdPass. Every
/// lane is 32 bits wide (16 to an AVX-512 register).
__attribute__((target_clones("avx512f", "avx2", "default"))) void columnsPass(
    const float* __restrict values, uint8_t* __restrict flags, size_t n, size_t L, size_t M,
    float threshold, ColumnScratch& s) {
  float* __restrict sum = s.sum.data();
  float* __restrict count = s.count.data();
  int32_t* __restrict lastHit = s.lastHit.data();
  const int32_t window = int32_t(M);
  for (size_t l = 0; l < L; ++l) {
    sum[l] = count[l] = 0;
    lastHit[l] = -window;
  }
  for (size_t i = 0; i < M; ++i)
    for (size_t l = 0; l < L; ++l) {
      const float keep = float(1 - int(flags[i * L + l]));
      sum[l] += keep * values[i * L + l];
      count[l] += keep;
    }
  for (size_t i = 0; i < n; ++i) {
    if (i + M <= n) {  // the window starting at row i
      const int32_t start = int32_t(i);
      for (size_t l = 0; l < L; ++l) {
        const bool any = count[l] > 0;
        lastHit[l] = any && sum[l] > threshold * count[l] ? start : lastHit[l];
        sum[l] = any ? sum[l] : 0.0f;  // no rounding residue carried over an all-flagged stretch
      }
      if (i + M < n) {
        const float *out = values + i * L, *in = values + (i + M) * L;
        const uint8_t *outFlags = flags + i * L, *inFlags = flags + (i + M) * L;
        for (size_t l = 0; l < L; ++l) {
          const float keepOut = float(1 - int(outFlags[l]));
          const float keepIn = float(1 - int(inFlags[l]));
          count[l] += keepIn - keepOut;
          sum[l] = (sum[l] - keepOut * out[l]) + keepIn * in[l];
        }
      }
    }
    uint8_t* row = flags + i * L;
    for (size_t l = 0; l < L; ++l) row[l] |= uint8_t(lastHit[l] + window > int32_t(i));
  }
}

}  // namespace

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
  for (size_t window = 1; window <= maxWindow && window <= series.n; window *= 2)
    added += sumThresholdPass(
        series, window,
        statistics.median + firstThreshold * windowFactor(window) * statistics.sigma, scratch);
  return added;
}

void sumThresholdColumns(const float* values, uint8_t* flags, size_t n, size_t columns,
                         const RobustStatistics& statistics, float firstThreshold, size_t maxWindow,
                         ColumnScratch& scratch) {
  if (statistics.count == 0 || n == 0 || columns == 0) return;
  scratch.sum.resize(columns);
  scratch.count.resize(columns);
  scratch.lastHit.resize(columns);
  for (size_t window = 1; window <= maxWindow && window <= n; window *= 2) {
    const float threshold =
        statistics.median + firstThreshold * windowFactor(window) * statistics.sigma;
    if (window == 1)
      columnsSingle(values, flags, n * columns, threshold);
    else
      columnsPass(values, flags, n, columns, window, threshold, scratch);
  }
}

}  // namespace rtcp::correlator
