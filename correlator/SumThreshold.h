#pragma once
/// \file SumThreshold.h
/// The detection the pre-correlation flagger runs on its grids of power: robust statistics
/// (median and σ, BG/P's NORMAL or WINSORIZED) and SumThreshold (Offringa et al. 2010,
/// "Post-correlation radio frequency interference classification methods", as AOFlagger
/// does it): a window of M consecutive values is flagged whole when the mean of its values
/// not yet flagged exceeds median + χ_M σ, χ_M = χ_1 · 1.5^log2(M) / M, for M = 1, 2, 4,
/// ... up to the longest window. Only excess power is interference: a value below the
/// median is never flagged.
///
/// Values and flags are read with a stride, so that one grid serves a row (time) and a
/// column (frequency). Flags: 1 = flagged (skipped by the statistics and the sums).
/// sumThresholdColumns() runs every column of a grid at once, the columns as vector lanes:
/// the optimised form of sumThreshold() on each column, which the tests compare it with.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "OrderStatistics.h"
#include "rtcp/FlaggingSettings.h"

namespace rtcp::correlator {

/// Median and σ of the unflagged values.
struct RobustStatistics {
  float median = 0;
  float sigma = 0;
  size_t count = 0;  ///< unflagged values they were taken from
};

/// Statistics of values[i * stride] with flags[i * stride] == 0, i < n (not NaN); the
/// median and percentiles exact (OrderStatistics.h). scratch: reused.
RobustStatistics robustStatistics(const float* values, const uint8_t* flags, size_t n,
                                  size_t stride, FlaggerStatistics kind, SelectionScratch& scratch);

/// The median alone (0 when every value is flagged): the unflagged value of rank count / 2.
float median(const float* values, const uint8_t* flags, size_t n, size_t stride,
             SelectionScratch& scratch);

/// The strided view SumThreshold works on: values[i * stride] and flags[i * stride], i < n.
struct Series {
  const float* values;
  uint8_t* flags;
  size_t n;
  size_t stride;
};

/// One pass of SumThreshold with window M over `series` (running sums: O(n)): windows are
/// judged on the flags as they were before the pass; what it flags is added afterwards.
/// threshold: the limit of a window's mean. Returns the values it newly flagged.
/// scratch: reused (n bytes).
size_t sumThresholdPass(Series series, size_t window, float threshold,
                        std::vector<uint8_t>& scratch);

/// Every window 1, 2, 4, ... up to maxWindow (and n), with thresholds median + χ_M σ from
/// `statistics`, χ_1 = firstThreshold. Returns the values it newly flagged.
size_t sumThreshold(Series series, const RobustStatistics& statistics, float firstThreshold,
                    size_t maxWindow, std::vector<uint8_t>& scratch);

/// χ_M / χ_1 = 1.5^log2(M) / M.
float windowFactor(size_t window);

namespace detail {

/// The moments behind robustStatistics's σ: of the values of keys[0, count) (count > 0)
/// clipped to [low, high], sum = Σ x and, with mean = sum / count, squares = Σ (x − mean)².
/// Each sum in 8 lanes added in a fixed order (lane l: the values i with i % 8 == l, then
/// the lanes in order, then the last count % 8), so both kernels give the same sum bit for
/// bit; the AVX-512 one accumulates the squares with fused multiply-adds (one rounding per
/// value instead of two), so its squares differ by a few parts in 1e16 of themselves.
void clippedMoments(const uint32_t* keys, size_t count, float low, float high, double& sum,
                    double& squares, ColumnKernel kernel = ColumnKernel::kBest);

}  // namespace detail

/// Buffers of sumThresholdColumns() (sized on first use, reused after).
struct ColumnScratch {
  std::vector<float> values;      ///< [row][16]: the columns past the last 16, padded
  std::vector<uint8_t> flags;     ///< the same (the padding flagged)
  std::vector<uint16_t> flagged;  ///< [row]: a group's flags as bits (AVX-512)
};

/// sumThreshold() on every column of a grid of n rows × `columns`: column l is the series
/// values[i * columns + l], flags[i * columns + l], i < n; one `statistics` for all. The
/// columns are the vector lanes, 16 at a time (the last ones, fewer, padded with flagged
/// columns in scratch), each group through every window before the next: a window length
/// whose threshold is above a group's highest unflagged value (with a margin for the sums'
/// rounding) cannot flag there and is skipped. Values finite. The running sums are in float
/// (sumThreshold's in double): the values of a pass with M > 1 are those window 1 left, at
/// most a few σ above the median, so a window's mean differs by about 1e-7 of itself, and
/// only a mean that close to a threshold can be judged otherwise.
void sumThresholdColumns(const float* values, uint8_t* flags, size_t n, size_t columns,
                         const RobustStatistics& statistics, float firstThreshold, size_t maxWindow,
                         ColumnScratch& scratch, ColumnKernel kernel = ColumnKernel::kBest);

}  // namespace rtcp::correlator
