#include "SumThreshold.h"

#include <algorithm>
#include <cmath>

namespace rtcp::correlator {

namespace {

/// The unflagged values, copied into scratch (their order is lost).
size_t gather(const float* values, const uint8_t* flags, size_t n, size_t stride,
              std::vector<float>& scratch) {
  scratch.resize(n);
  size_t count = 0;
  for (size_t i = 0; i < n; ++i)
    if (!flags[i * stride]) scratch[count++] = values[i * stride];
  return count;
}

/// Mean and σ with the values clipped to their 10th and 90th percentiles; σ scaled by
/// 1.54 in variance, which makes it the standard deviation of Gaussian noise (BG/P's).
/// data is partitioned around its median (at count / 2): the 10th percentile lies in the
/// lower part, the 90th in the upper one, so each is found there.
void winsorize(float* data, size_t count, RobustStatistics& result) {
  const size_t mid = count / 2;
  const size_t low = size_t(std::floor(0.1 * double(count)));
  const size_t high = std::max<size_t>(size_t(std::ceil(0.9 * double(count))), 1) - 1;
  if (low < mid) std::nth_element(data, data + low, data + mid);
  const float lowValue = data[low];
  if (high > mid) std::nth_element(data + mid + 1, data + high, data + count);
  const float highValue = data[high];
  double sum = 0;
  for (size_t i = 0; i < count; ++i) sum += std::clamp(data[i], lowValue, highValue);
  const double mean = sum / double(count);
  double squares = 0;
  for (size_t i = 0; i < count; ++i) {
    const double d = std::clamp(data[i], lowValue, highValue) - mean;
    squares += d * d;
  }
  result.sigma = float(std::sqrt(1.54 * squares / double(count)));
}

void normal(const float* data, size_t count, RobustStatistics& result) {
  double sum = 0, squares = 0;
  for (size_t i = 0; i < count; ++i) sum += data[i];
  const double mean = sum / double(count);
  for (size_t i = 0; i < count; ++i) squares += (data[i] - mean) * (data[i] - mean);
  result.sigma = float(std::sqrt(squares / double(count)));
}

}  // namespace

RobustStatistics robustStatistics(const float* values, const uint8_t* flags, size_t n,
                                  size_t stride, FlaggerStatistics kind,
                                  std::vector<float>& scratch) {
  RobustStatistics result;
  result.count = gather(values, flags, n, stride, scratch);
  if (result.count == 0) return result;
  float* data = scratch.data();
  std::nth_element(data, data + result.count / 2, data + result.count);
  result.median = data[result.count / 2];
  if (kind == FlaggerStatistics::kWinsorized)
    winsorize(data, result.count, result);
  else
    normal(data, result.count, result);
  return result;
}

float median(const float* values, const uint8_t* flags, size_t n, size_t stride,
             std::vector<float>& scratch) {
  const size_t count = gather(values, flags, n, stride, scratch);
  if (count == 0) return 0;
  std::nth_element(scratch.begin(), scratch.begin() + long(count / 2),
                   scratch.begin() + long(count));
  return scratch[count / 2];
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

}  // namespace rtcp::correlator
