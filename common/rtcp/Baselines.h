#pragma once
/// \file Baselines.h
/// Baseline numbering of DESIGN §2.3: baseline(s1 <= s2) = s2 (s2 + 1) / 2 + s1,
/// autocorrelations included.

#include <utility>

namespace rtcp {

constexpr int nrBaselines(int nrStations) { return nrStations * (nrStations + 1) / 2; }
constexpr int baselineIndex(int station1, int station2) {
  return station2 * (station2 + 1) / 2 + station1;
}
/// The (s1, s2) pair of a baseline index, s1 <= s2.
inline std::pair<int, int> baselineStations(int baseline) {
  int s2 = 0;
  while ((s2 + 1) * (s2 + 2) / 2 <= baseline) ++s2;
  return {baseline - s2 * (s2 + 1) / 2, s2};
}

constexpr int kNrPolarisationProducts = 4;  ///< XX XY YX YY

}  // namespace rtcp
