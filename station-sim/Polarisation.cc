#include "Polarisation.h"

#include <algorithm>
#include <cmath>

#include "PhaseRamp.h"

namespace rtcp::sim {

PolarisationMix PolarisationMix::of(const SimSource& source) {
  const double q = source.q, u = source.u, v = source.v;
  PolarisationMix mix;
  const double xx = 1 + q;  // C00
  if (xx <= 1e-12) {        // q = -1: all power in Y, and then u = v = 0
    mix.l00 = 0;
    mix.l11 = float(std::sqrt(std::max(0.0, 1 - q)));
    return mix;
  }
  mix.l00 = float(std::sqrt(xx));
  const std::complex<double> l10 = std::complex<double>(u, -v) / std::sqrt(xx);  // C10 / l00
  mix.l10 = std::complex<float>(l10);
  mix.l11 = float(std::sqrt(std::max(0.0, 1 - q - std::norm(l10))));
  return mix;
}

float PolarisationMix::peakPowerFactor() const {
  return std::max(l00 * l00, std::norm(l10) + l11 * l11);
}

void PolarisationMix::apply(std::complex<float>* x, std::complex<float>* y, size_t n) const {
  mixPair(x, y, l00, l10, l11, n);
}

}  // namespace rtcp::sim
