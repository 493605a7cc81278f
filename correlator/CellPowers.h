#pragma once
/// \file CellPowers.h
/// The pre-correlation flagger's input (PreCorrelationFlagger.h): the power of a channel
/// summed over cells of consecutive spectra, from the four rows (X re, X im, Y re, Y im) of
/// the kernel layout [channel][pol][reim][paddedSpectra].
///
/// One summation order, wherever a cell's power is computed, so that every place gives the
/// same bits: the 16 spectra of a full group as 16 lanes, lane s = ((Xre² + Xim²) + Yre²) +
/// Yim², lanes of the cell's groups added lane by lane, then the 16 lanes as a tree of
/// halves (l[i] + l[i + 8], then h[i] + h[i + 4], then (q0 + q2) + (q1 + q3)); the spectra past the
/// last full group one by one after it; every product rounded before it is added (no fused
/// multiply-add, in any target clone). The delay correction's tiles (DelayTiles.h) sum their cells
/// of 16 spectra this way while the samples are in registers, instead of a second read of the
/// station's samples.

#include <cstddef>

namespace rtcp::correlator {

/// Spectra of a group: the lanes of the summation, and the delay correction's tile.
constexpr int kCellLanes = 16;

/// Where a step puts the cells' powers of a station's channels.
struct CellPowerGrid {
  float* cells = nullptr;  ///< [channel][cell]; none asked for when null
  size_t stride = 0;       ///< floats from a channel's cells to the next's
};

/// cells[k] = the power of channel `rows` (its four rows rowStride floats apart) summed
/// over spectra [k S, min((k + 1) S, nrSpectra)), S = spectraPerCell (vectorised).
void channelCellPowers(const float* rows, size_t rowStride, int nrSpectra, int spectraPerCell,
                       float* cells);

}  // namespace rtcp::correlator
