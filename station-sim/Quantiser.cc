#include "Quantiser.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "rtcp/RspPacket.h"

namespace rtcp::sim {
namespace {

/// Rounds to nearest (even) for |v| < 2^22 without SSE4.1, so the loop vectorises.
inline float roundNearest(float v) {
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23
  return (v + kMagic) - kMagic;
}

inline float clamp(float v, float limit) { return v > limit ? limit : (v < -limit ? -limit : v); }

/// One component: scaled, rounded, clipped to +-max; counts a clip in `clipped`.
inline int16_t quantiseOne(float v, float scale, float max, uint32_t& clipped) {
  const float r = roundNearest(clamp(v * scale, max + 1));
  clipped += (r > max) | (r < -max);
  return int16_t(clamp(r, max));
}

__attribute__((target_clones("arch=skylake-avx512", "avx2", "default"))) uint64_t quantiseLoop(
    const float* __restrict x, const float* __restrict y, size_t n, float scale, float max,
    int16_t* __restrict out) {
  uint32_t clipped = 0;
  for (size_t i = 0; i < n; ++i) {
    out[4 * i] = quantiseOne(x[2 * i], scale, max, clipped);
    out[4 * i + 1] = quantiseOne(x[2 * i + 1], scale, max, clipped);
    out[4 * i + 2] = quantiseOne(y[2 * i], scale, max, clipped);
    out[4 * i + 3] = quantiseOne(y[2 * i + 1], scale, max, clipped);
  }
  return clipped;
}

}  // namespace

double Quantiser::targetRms(int bitsPerSample) {
  switch (bitsPerSample) {
    case 16:
      return 1024;
    case 8:
      return 20;
    case 4:
      return 2.5;
  }
  throw std::invalid_argument("bits per sample must be 16, 8 or 4, not " +
                              std::to_string(bitsPerSample));
}

Quantiser::Quantiser(int bitsPerSample, double powerPerPolarisation)
    : bits_(bitsPerSample), max_(float(maxSampleValue(bitsPerSample))) {
  const double componentRms = std::sqrt(powerPerPolarisation / 2);
  scale_ = float(componentRms > 0 ? targetRms(bitsPerSample) / componentRms : 1.0);
}

uint64_t Quantiser::quantise(const std::complex<float>* x, const std::complex<float>* y, size_t n,
                             std::complex<int16_t>* out) const {
  return quantiseLoop(reinterpret_cast<const float*>(x), reinterpret_cast<const float*>(y), n,
                      scale_, max_, reinterpret_cast<int16_t*>(out));
}

}  // namespace rtcp::sim
