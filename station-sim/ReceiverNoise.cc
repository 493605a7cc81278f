#include "ReceiverNoise.h"

#include <algorithm>

#include "PhaseRamp.h"

namespace rtcp::sim {

ReceiverNoise::ReceiverNoise(uint64_t seed, double power, const std::array<float, kNrTaps>& taps)
    : random_(seed), power_(power), taps_(taps), white_(kNrTaps - 1) {
  GaussianTable::instance().fillNoise(random_, power_, white_.data(), white_.size());  // a past
}

void ReceiverNoise::generate(std::complex<float>* out, size_t n) {
  constexpr size_t history = kNrTaps - 1;
  white_.resize(history + n);
  GaussianTable::instance().fillNoise(random_, power_, white_.data() + history, n);
  filterReal(white_.data(), taps_.data(), kNrTaps, out, n);
  std::copy(white_.end() - history, white_.end(), white_.begin());
}

}  // namespace rtcp::sim
