#include "Random.h"

#include <boost/math/special_functions/erf.hpp>
#include <cmath>

namespace rtcp::sim {

GaussianTable::GaussianTable() {
  double sumSquares = 0;
  for (int i = 0; i < kSize; ++i) {
    const double u = (i + 0.5) / kSize;
    const double x = std::sqrt(2.0) * boost::math::erf_inv(2 * u - 1);
    table_[i] = float(x);
    sumSquares += x * x;
  }
  const double norm = 1.0 / std::sqrt(sumSquares / kSize);
  for (float& value : table_) value = float(value * norm);
}

const GaussianTable& GaussianTable::instance() {
  static const GaussianTable table;
  return table;
}

namespace {

/// Four Gaussian components per draw; `add` selects += over =.
template <bool add>
void noise(const float* table, Xoshiro256& rng, double power, std::complex<float>* out, size_t n) {
  const float sigma = float(std::sqrt(power / 2));  // per component
  float* f = reinterpret_cast<float*>(out);
  const size_t components = 2 * n;
  size_t i = 0;
  for (; i + 4 <= components; i += 4) {
    const uint64_t r = rng.next();
    const float a = sigma * table[r & 0xffff], b = sigma * table[(r >> 16) & 0xffff];
    const float c = sigma * table[(r >> 32) & 0xffff], d = sigma * table[r >> 48];
    if constexpr (add) {
      f[i] += a, f[i + 1] += b, f[i + 2] += c, f[i + 3] += d;
    } else {
      f[i] = a, f[i + 1] = b, f[i + 2] = c, f[i + 3] = d;
    }
  }
  if (i < components) {
    for (uint64_t r = rng.next(); i < components; ++i, r >>= 16) {
      const float v = sigma * table[r & 0xffff];
      f[i] = add ? f[i] + v : v;
    }
  }
}

}  // namespace

void GaussianTable::addNoise(Xoshiro256& rng, double power, std::complex<float>* out,
                             size_t n) const {
  noise<true>(table_, rng, power, out, n);
}

void GaussianTable::fillNoise(Xoshiro256& rng, double power, std::complex<float>* out,
                              size_t n) const {
  noise<false>(table_, rng, power, out, n);
}

}  // namespace rtcp::sim
