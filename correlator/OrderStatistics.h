#pragma once
/// \file OrderStatistics.h
/// Exact order statistics (the median, percentiles) of the flagger's grids without sorting
/// and without data-dependent branches: the value of rank r (the r-th smallest, from 0) is
/// found by bisection on the values' keys (their float bits, made to order as unsigned
/// integers), each step counting the keys at or below the middle of the bracket in one
/// vectorised sweep. 32 steps, each exact: the result is the very value nth_element would
/// give, in a time that does not depend on the data (std::nth_element on a grid of 3000
/// powers mispredicted most of its comparisons).
///
/// Values must not be NaN; every other float (±0, ±inf, negatives) orders as it should.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace rtcp::correlator {

/// The float's bits made to order as unsigned integers: a positive float gets its sign bit
/// set, a negative one all its bits inverted.
inline uint32_t keyOf(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  return bits ^ (uint32_t(-int32_t(bits >> 31)) | 0x80000000u);
}

/// The float of a key.
inline float keyValue(uint32_t key) {
  return std::bit_cast<float>(key & 0x80000000u ? key ^ 0x80000000u : ~key);
}

/// values[i * stride] with flags[i * stride] == 0 (i < n) as keys in keys[0, count); returns
/// count. keys is resized to n.
size_t gatherKeys(const float* values, const uint8_t* flags, size_t n, size_t stride,
                  std::vector<uint32_t>& keys);

/// out[j] = the value of rank ranks[j] (< count) among keys[0, count).
void selectRanks(const uint32_t* keys, size_t count, std::span<const size_t> ranks,
                 std::span<float> out);

/// Buffers of columnMedians (sized on first use, reused after).
struct MedianScratch {
  std::vector<uint32_t> keys;  ///< [row][column]
  /// [column]: the bracket [low, high] of the rank's key, the column's unflagged values,
  /// the rank, the bracket's middle and the keys at or below it
  std::vector<uint32_t> low, high, count, rank, middle, below;
};

/// Per column l < columns of the grid values[i * columns + l], flags likewise (i < n): the
/// median of its unflagged values (rank count / 2, as median() in SumThreshold.h), 0 for a
/// column without one. The columns are the vector lanes.
void columnMedians(const float* values, const uint8_t* flags, size_t n, size_t columns,
                   float* medians, MedianScratch& scratch);

}  // namespace rtcp::correlator
