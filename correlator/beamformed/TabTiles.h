#pragma once
/// \file TabTiles.h
/// The register tiles of TabKernel, one set per instruction set. A call forms every TAB of
/// one channel and polarisation over samples [begin, end) (multiples of 16).

#include <cstddef>

namespace rtcp::correlator::beamformed::tiles {

/// Where the rows lie: station s's real row at stations[s] (its imaginary row imOffset
/// floats further), weights[station][tab] as (re, im) float pairs, TAB t's real output row
/// at beams + t * tabStride (its imaginary row imOffset floats further).
struct Rows {
  const float* const* stations;
  const float* weights;
  float* beams;
  int nrStations;
  int nrTabs;
  size_t imOffset;
  size_t tabStride;
};

void formAvx512(const Rows& rows, int begin, int end);
void formAvx2(const Rows& rows, int begin, int end);
void formGeneric(const Rows& rows, int begin, int end);

}  // namespace rtcp::correlator::beamformed::tiles
