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

#include <cstddef>
#include <cstdint>
#include <vector>

#include "rtcp/FlaggingSettings.h"

namespace rtcp::correlator {

/// Median and σ of the unflagged values.
struct RobustStatistics {
  float median = 0;
  float sigma = 0;
  size_t count = 0;  ///< unflagged values they were taken from
};

/// Statistics of values[i * stride] with flags[i * stride] == 0, i < n. scratch: reused.
RobustStatistics robustStatistics(const float* values, const uint8_t* flags, size_t n,
                                  size_t stride, FlaggerStatistics kind,
                                  std::vector<float>& scratch);

/// The median alone (0 when every value is flagged).
float median(const float* values, const uint8_t* flags, size_t n, size_t stride,
             std::vector<float>& scratch);

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

}  // namespace rtcp::correlator
