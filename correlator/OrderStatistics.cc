#include "OrderStatistics.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

namespace rtcp::correlator {

namespace {

constexpr uint32_t kFlaggedKey = std::numeric_limits<uint32_t>::max();  ///< above every value

/// Bisection steps that narrow [low, high] to one key.
int stepsFor(uint32_t low, uint32_t high) { return high > low ? std::bit_width(high - low) : 0; }

__attribute__((target_clones("avx512f", "avx2", "default"))) size_t countAtOrBelow(
    const uint32_t* __restrict keys, size_t count, uint32_t limit) {
  uint32_t below = 0;
  for (size_t i = 0; i < count; ++i) below += keys[i] <= limit;
  return below;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void keysOfColumns(
    const float* __restrict values, const uint8_t* __restrict flags, size_t size,
    uint32_t* __restrict keys) {
  for (size_t i = 0; i < size; ++i) {
    const uint32_t key = keyOf(values[i]);
    keys[i] = flags[i] ? kFlaggedKey : key;
  }
}

/// One bisection step on every column: middle = the bracket's middle, below = the keys of
/// the column at or below it; the bracket keeps the half that holds the rank.
__attribute__((target_clones("avx512f", "avx2", "default"))) void bisectColumns(
    const uint32_t* __restrict keys, size_t n, size_t L, MedianScratch& s) {
  uint32_t* __restrict low = s.low.data();
  uint32_t* __restrict high = s.high.data();
  uint32_t* __restrict middle = s.middle.data();
  uint32_t* __restrict below = s.below.data();
  const uint32_t* __restrict rank = s.rank.data();
  for (size_t l = 0; l < L; ++l) {
    middle[l] = low[l] + (high[l] - low[l]) / 2;
    below[l] = 0;
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t l = 0; l < L; ++l) below[l] += keys[i * L + l] <= middle[l];
  for (size_t l = 0; l < L; ++l) {
    const bool over = below[l] > rank[l];
    high[l] = over ? middle[l] : high[l];
    low[l] = over ? low[l] : middle[l] + 1;
  }
}

}  // namespace

size_t gatherKeys(const float* values, const uint8_t* flags, size_t n, size_t stride,
                  std::vector<uint32_t>& keys) {
  keys.resize(n);
  size_t count = 0;
  for (size_t i = 0; i < n; ++i) {  // branch-free: every key written, the unflagged kept
    keys[count] = keyOf(values[i * stride]);
    count += flags[i * stride] == 0;
  }
  return count;
}

void selectRanks(const uint32_t* keys, size_t count, std::span<const size_t> ranks,
                 std::span<float> out) {
  if (count == 0 || ranks.size() != out.size())
    throw std::invalid_argument("selectRanks: no values, or ranks and results differ in number");
  const auto [lowest, highest] = std::minmax_element(keys, keys + count);
  for (size_t j = 0; j < ranks.size(); ++j) {
    // the smallest key with more than ranks[j] keys at or below it
    uint32_t low = *lowest, high = *highest;
    while (low < high) {
      const uint32_t middle = low + (high - low) / 2;
      if (countAtOrBelow(keys, count, middle) > ranks[j])
        high = middle;
      else
        low = middle + 1;
    }
    out[j] = keyValue(low);
  }
}

void columnMedians(const float* values, const uint8_t* flags, size_t n, size_t columns,
                   float* medians, MedianScratch& s) {
  const size_t L = columns;
  s.keys.resize(n * L);
  s.low.assign(L, kFlaggedKey);
  s.high.assign(L, 0);
  s.count.assign(L, 0);
  s.rank.resize(L);
  s.middle.resize(L);
  s.below.resize(L);
  keysOfColumns(values, flags, n * L, s.keys.data());
  for (size_t i = 0; i < n; ++i)  // each column's bracket: its lowest and highest key
    for (size_t l = 0; l < L; ++l) {
      const uint32_t key = s.keys[i * L + l];
      const bool valid = key != kFlaggedKey;
      s.low[l] = std::min(s.low[l], key);
      s.high[l] = std::max(s.high[l], valid ? key : 0u);
      s.count[l] += valid;
    }
  int steps = 0;
  for (size_t l = 0; l < L; ++l) {
    s.rank[l] = s.count[l] / 2;
    if (s.count[l] == 0) s.low[l] = s.high[l] = 0;
    steps = std::max(steps, stepsFor(s.low[l], s.high[l]));
  }
  for (int step = 0; step < steps; ++step) bisectColumns(s.keys.data(), n, L, s);
  for (size_t l = 0; l < L; ++l) medians[l] = s.count[l] ? keyValue(s.low[l]) : 0.0f;
}

}  // namespace rtcp::correlator
