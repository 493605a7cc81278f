#pragma once
/// \file OrderStatistics.h
/// Exact order statistics (the median, percentiles) of the flagger's grids without sorting
/// and without branches that depend on the data's order. Values become keys (their float
/// bits, made to order as unsigned integers).
///  - selectRanks: a histogram of the keys in at most 1024 bins between the lowest and the
///    highest (the float bits are nearly logarithmic, so a bin is a fixed fraction of its
///    value), the bin that holds each rank, then nth_element among that bin's few keys.
///  - columnMedians: many small columns at once (the grid's channels), the columns as vector
///    lanes: bisection on the keys, each step counting every column's keys at or below the
///    middle of its bracket.
/// Both give the very value nth_element would (std::nth_element on a grid of 3000 powers
/// mispredicted most of its comparisons).
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

/// The kernels of the column-wise steps (gatherKeys, selectRanks, columnMedians,
/// sumThresholdColumns in SumThreshold.h): the best the processor runs (AVX-512 registers), or the
/// plain loops it falls back to (which the tests compare too).
enum class ColumnKernel { kBest, kPlain };

/// Whether the processor runs AVX-512 (the kernels kBest picks).
bool hasAvx512();

/// values[i * stride] with flags[i * stride] == 0 (i < n) as keys in keys[0, count); returns
/// count. keys is resized to n + 16.
size_t gatherKeys(const float* values, const uint8_t* flags, size_t n, size_t stride,
                  std::vector<uint32_t>& keys, ColumnKernel kernel = ColumnKernel::kBest);

constexpr size_t kMaxRanks = 4;  ///< ranks selectRanks finds in one call

/// Buffers of selectRanks (sized on first use, reused after).
struct SelectionScratch {
  std::vector<uint32_t> keys;                   ///< the caller's (gatherKeys)
  std::vector<uint32_t> histogram;              ///< [bin]
  std::vector<uint32_t> candidates[kMaxRanks];  ///< [rank]: the keys of its bin
};

/// out[j] = the value of rank ranks[j] (< count) among keys[0, count); at most kMaxRanks.
void selectRanks(const uint32_t* keys, size_t count, std::span<const size_t> ranks,
                 std::span<float> out, SelectionScratch& scratch,
                 ColumnKernel kernel = ColumnKernel::kBest);

/// Buffers of columnMedians (sized on first use, reused after).
struct MedianScratch {
  std::vector<uint32_t> keys;  ///< [row][column]
  /// [column]: the bracket [low, high] of the rank's key, the column's unflagged values and
  /// the rank
  std::vector<uint32_t> low, high, count, rank;
};

/// Per column l < columns of the grid values[i * columns + l], flags likewise (i < n): the
/// median of its unflagged values (rank count / 2, as median() in SumThreshold.h), 0 for a
/// column without one. The columns are the vector lanes. With AVX-512, a group of 16
/// columns stops bisecting once each bracket holds a single key (the counts at its ends
/// tell), which one sweep for the lowest key in the bracket then finds: about 10 sweeps
/// instead of 25 for a channel's 48 cells.
void columnMedians(const float* values, const uint8_t* flags, size_t n, size_t columns,
                   float* medians, MedianScratch& scratch,
                   ColumnKernel kernel = ColumnKernel::kBest);

}  // namespace rtcp::correlator
