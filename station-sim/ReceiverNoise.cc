#include "ReceiverNoise.h"

#include <algorithm>

#include "PhaseRamp.h"

namespace rtcp::sim {

ReceiverNoise::ReceiverNoise(uint64_t seed, double power, const std::array<float, kNrTaps>& taps)
    : random_(seed), power_(power), taps_(taps) {
  GaussianTable::instance().fillNoise(random_, power_, history_.data(), history_.size());  // a past
}

void ReceiverNoise::generate(std::complex<float>* scratch, std::complex<float>* out, size_t n) {
  // scratch = [history, n new white samples]
  std::copy(history_.begin(), history_.end(), scratch);
  GaussianTable::instance().fillNoise(random_, power_, scratch + kHistory, n);
  filterReal(scratch, taps_.data(), kNrTaps, out, n);
  std::copy(scratch + n, scratch + n + kHistory, history_.begin());
}

}  // namespace rtcp::sim
