#pragma once
/// \file Polarisation.h
/// A source's X and Y signals with the coherency of its Stokes fractions (DESIGN §2.2,
/// COBALT's convention: I = XX* + YY*, Q = XX* - YY*, U = 2 Re XY*, V = 2 Im XY*).
/// From two independent signals a and b of power I/2 each,
///   X = l00 a,   Y = l10 a + l11 b,
/// with L the Cholesky factor of the normalised coherency matrix
///   C = [[1 + q, u + i v], [u - i v, 1 - q]] = L L^H,
/// so that <X X*> = (1 + q) I/2, <Y Y*> = (1 - q) I/2, <X Y*> = (u + i v) I/2.

#include <complex>
#include <cstddef>

#include "rtcp/ObservationSettings.h"

namespace rtcp::sim {

struct PolarisationMix {
  float l00 = 1;
  std::complex<float> l10{0, 0};
  float l11 = 1;

  /// The factor of a source's fractions q, u, v (q^2 + u^2 + v^2 <= 1).
  static PolarisationMix of(const SimSource& source);
  bool unpolarised() const { return l00 == 1 && l10 == std::complex<float>(0, 0) && l11 == 1; }
  /// The larger of <X X*> and <Y Y*> in units of I/2: 1 + |q|.
  float peakPowerFactor() const;

  /// x, y: the spectra (or signals) of a and b, replaced by those of X and Y.
  void apply(std::complex<float>* x, std::complex<float>* y, size_t n) const;
};

}  // namespace rtcp::sim
