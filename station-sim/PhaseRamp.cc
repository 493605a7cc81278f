#include "PhaseRamp.h"

#include <algorithm>
#include <cmath>

// Hot loops get AVX-512 and AVX2 clones chosen at run time (the build targets baseline
// x86-64).
#define RTCP_SIM_VECTOR_CLONES \
  __attribute__((target_clones("arch=skylake-avx512", "avx2", "default")))

namespace rtcp::sim {
namespace {

constexpr size_t kBlock = 64;

std::complex<double> phasor(double turns) {
  const double angle = 2 * M_PI * (turns - std::floor(turns));
  return {std::cos(angle), std::sin(angle)};
}

}  // namespace

void fillPhasorRamp(std::complex<float>* out, size_t n, double startTurns, double stepTurns,
                    double scale) {
  float steps[2 * kBlock];  // exp(2 pi i k step), k in [0, kBlock)
  for (size_t k = 0; k < kBlock; ++k) {
    const std::complex<double> p = phasor(double(k) * stepTurns);
    steps[2 * k] = float(p.real());
    steps[2 * k + 1] = float(p.imag());
  }
  float* o = reinterpret_cast<float*>(out);
  for (size_t base = 0; base < n; base += kBlock) {
    const std::complex<double> b = scale * phasor(startTurns + double(base) * stepTurns);
    const float br = float(b.real()), bi = float(b.imag());
    const size_t count = std::min(kBlock, n - base);
    for (size_t k = 0; k < count; ++k) {
      o[2 * (base + k)] = br * steps[2 * k] - bi * steps[2 * k + 1];
      o[2 * (base + k) + 1] = br * steps[2 * k + 1] + bi * steps[2 * k];
    }
  }
}

RTCP_SIM_VECTOR_CLONES
void multiply(const std::complex<float>* a, const std::complex<float>* b, std::complex<float>* out,
              size_t n) {
  const float* __restrict x = reinterpret_cast<const float*>(a);
  const float* __restrict y = reinterpret_cast<const float*>(b);
  float* __restrict o = reinterpret_cast<float*>(out);
  for (size_t i = 0; i < n; ++i) {
    const float xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
    o[2 * i] = xr * yr - xi * yi;
    o[2 * i + 1] = xr * yi + xi * yr;
  }
}

RTCP_SIM_VECTOR_CLONES
void multiplyAdd(const std::complex<float>* a, const std::complex<float>* b,
                 std::complex<float>* out, size_t n) {
  const float* __restrict x = reinterpret_cast<const float*>(a);
  const float* __restrict y = reinterpret_cast<const float*>(b);
  float* __restrict o = reinterpret_cast<float*>(out);
  for (size_t i = 0; i < n; ++i) {
    const float xr = x[2 * i], xi = x[2 * i + 1], yr = y[2 * i], yi = y[2 * i + 1];
    o[2 * i] += xr * yr - xi * yi;
    o[2 * i + 1] += xr * yi + xi * yr;
  }
}

RTCP_SIM_VECTOR_CLONES
void add(const std::complex<float>* a, std::complex<float>* out, size_t n) {
  const float* __restrict x = reinterpret_cast<const float*>(a);
  float* __restrict o = reinterpret_cast<float*>(out);
  for (size_t i = 0; i < 2 * n; ++i) o[i] += x[i];
}

RTCP_SIM_VECTOR_CLONES
void multiplyBands(const std::complex<float>* ramp, const std::complex<float>* a0,
                   const std::complex<float>* a1, std::complex<float> c1,
                   const std::complex<float>* a2, std::complex<float> c2, std::complex<float>* out,
                   size_t n) {
  const float* __restrict r = reinterpret_cast<const float*>(ramp);
  const float* __restrict x = reinterpret_cast<const float*>(a0);
  const float* __restrict y = reinterpret_cast<const float*>(a1);
  const float* __restrict z = reinterpret_cast<const float*>(a2);
  float* __restrict o = reinterpret_cast<float*>(out);
  const float c1r = c1.real(), c1i = c1.imag(), c2r = c2.real(), c2i = c2.imag();
  for (size_t i = 0; i < n; ++i) {
    const float sr =
        x[2 * i] + c1r * y[2 * i] - c1i * y[2 * i + 1] + c2r * z[2 * i] - c2i * z[2 * i + 1];
    const float si =
        x[2 * i + 1] + c1r * y[2 * i + 1] + c1i * y[2 * i] + c2r * z[2 * i + 1] + c2i * z[2 * i];
    o[2 * i] = r[2 * i] * sr - r[2 * i + 1] * si;
    o[2 * i + 1] = r[2 * i] * si + r[2 * i + 1] * sr;
  }
}

RTCP_SIM_VECTOR_CLONES
void multiplyReal(const std::complex<float>* a, const float* w, std::complex<float>* out,
                  size_t n) {
  const float* __restrict x = reinterpret_cast<const float*>(a);
  const float* __restrict v = w;
  float* __restrict o = reinterpret_cast<float*>(out);
  for (size_t i = 0; i < n; ++i) {
    o[2 * i] = x[2 * i] * v[i];
    o[2 * i + 1] = x[2 * i + 1] * v[i];
  }
}

RTCP_SIM_VECTOR_CLONES
void mixPair(std::complex<float>* x, std::complex<float>* y, float a, std::complex<float> c,
             float d, size_t n) {
  float* __restrict xs = reinterpret_cast<float*>(x);
  float* __restrict ys = reinterpret_cast<float*>(y);
  const float cr = c.real(), ci = c.imag();
  for (size_t i = 0; i < n; ++i) {
    const float xr = xs[2 * i], xi = xs[2 * i + 1];
    xs[2 * i] = a * xr;
    xs[2 * i + 1] = a * xi;
    ys[2 * i] = cr * xr - ci * xi + d * ys[2 * i];
    ys[2 * i + 1] = cr * xi + ci * xr + d * ys[2 * i + 1];
  }
}

RTCP_SIM_VECTOR_CLONES
void filterReal(const std::complex<float>* in, const float* taps, int nrTaps,
                std::complex<float>* out, size_t n) {
  // On float pairs (re and im share the real tap), kBlock outputs at a time kept in
  // registers while the taps pass over them.
  const float* __restrict x = reinterpret_cast<const float*>(in);
  float* __restrict o = reinterpret_cast<float*>(out);
  const size_t floats = 2 * n, full = floats / kBlock * kBlock;
  for (size_t base = 0; base < full; base += kBlock) {
    float sum[kBlock] = {};
    for (int k = 0; k < nrTaps; ++k) {
      const float tap = taps[k];
      const float* __restrict shifted = x + base + 2 * size_t(nrTaps - 1 - k);
      for (size_t j = 0; j < kBlock; ++j) sum[j] += tap * shifted[j];
    }
    for (size_t j = 0; j < kBlock; ++j) o[base + j] = sum[j];
  }
  for (size_t i = full; i < floats; ++i) {
    float sum = 0;
    for (int k = 0; k < nrTaps; ++k) sum += taps[k] * x[i + 2 * size_t(nrTaps - 1 - k)];
    o[i] = sum;
  }
}

}  // namespace rtcp::sim
