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
void multiply(const std::complex<float>* a, const std::complex<float>* b, std::complex<float>* out,
              size_t n);
/// out[i] += a[i] * b[i].
void multiplyAdd(const std::complex<float>* a, const std::complex<float>* b,
                 std::complex<float>* out, size_t n);
/// out[i] = ramp[i] * (a0[i] + c1 * a1[i] + c2 * a2[i]): three bands of a spectrum,
/// two of them rotated by constant phasors, then a ramp.
void multiplyBands(const std::complex<float>* ramp, const std::complex<float>* a0,
                   const std::complex<float>* a1, std::complex<float> c1,
                   const std::complex<float>* a2, std::complex<float> c2, std::complex<float>* out,
                   size_t n);
/// out[i] = a[i] * w[i] for real weights w.
void multiplyReal(const std::complex<float>* a, const float* w, std::complex<float>* out, size_t n);
/// out[i] = sum_k taps[k] * in[i + nrTaps - 1 - k], i in [0, n): a real FIR filter over
/// complex samples; in holds nrTaps - 1 samples of history before the n new ones.
void filterReal(const std::complex<float>* in, const float* taps, int nrTaps,
                std::complex<float>* out, size_t n);
/// x[i], y[i] = a x[i], c x[i] + d y[i] (a lower-triangular 2 x 2 mix, in place).
void mixPair(std::complex<float>* x, std::complex<float>* y, float a, std::complex<float> c,
             float d, size_t n);
/// out[i] += a[i].
void add(const std::complex<float>* a, std::complex<float>* out, size_t n);

}  // namespace rtcp::sim
