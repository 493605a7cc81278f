#pragma once
/// \file PhaseRamp.h
/// Phasors of a linearly advancing phase, and the complex vector kernels the
/// simulator's hot loops are made of (written on float pairs so that they vectorise).

#include <complex>
#include <cstddef>

namespace rtcp::sim {

/// out[i] = scale * exp(2 pi i (startTurns + i * stepTurns)) for i in [0, n).
/// Exact sincos every 64 entries, a complex product in between (error ~1e-7).
void fillPhasorRamp(std::complex<float>* out, size_t n, double startTurns, double stepTurns,
                    double scale = 1.0);

/// out[i] = a[i] * b[i].
void multiply(const std::complex<float>* a, const std::complex<float>* b,
              std::complex<float>* out, size_t n);
/// out[i] += a[i] * b[i].
void multiplyAdd(const std::complex<float>* a, const std::complex<float>* b,
                 std::complex<float>* out, size_t n);
/// out[i] += a[i].
void add(const std::complex<float>* a, std::complex<float>* out, size_t n);

}  // namespace rtcp::sim
