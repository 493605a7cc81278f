#pragma once
/// \file Random.h
/// Fast, reproducible random numbers for the simulator: xoshiro256** seeded through
/// splitmix64, and complex Gaussian noise from a 2^16-entry inverse-CDF table (four
/// Gaussian values per 64-bit draw).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace rtcp::sim {

/// splitmix64 step: mixes a 64-bit state into a well-distributed value.
inline uint64_t splitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// A seed derived from the observation's seed and the identity of a stream of numbers
/// (e.g. {kind, station ID, subband number, polarisation}); equal inputs, equal seeds.
inline uint64_t deriveSeed(uint64_t seed, std::initializer_list<uint64_t> identity) {
  uint64_t state = seed;
  uint64_t value = splitMix64(state);
  for (uint64_t part : identity) {
    state ^= part + 0x632be59bd9b4e019ULL + (value << 6) + (value >> 2);
    value = splitMix64(state);
  }
  return value;
}

/// xoshiro256** by Blackman and Vigna.
class Xoshiro256 {
 public:
  explicit Xoshiro256(uint64_t seed) {
    for (uint64_t& word : s_) word = splitMix64(seed);
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1).
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// Standard normal values by table look-up: entry i is the normal quantile at
/// (i + 0.5) / 2^16, the table scaled to unit variance (tails end at about 4.2 sigma).
class GaussianTable {
 public:
  static const GaussianTable& instance();
  const float* values() const { return table_; }

  /// Adds complex Gaussian noise of the given power (E|z|^2) to out[0, n).
  void addNoise(Xoshiro256& rng, double power, std::complex<float>* out, size_t n) const;
  /// Writes complex Gaussian noise of the given power to out[0, n).
  void fillNoise(Xoshiro256& rng, double power, std::complex<float>* out, size_t n) const;

 private:
  GaussianTable();
  static constexpr int kSize = 1 << 16;
  float table_[kSize];
};

}  // namespace rtcp::sim
