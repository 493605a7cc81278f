#pragma once
/// \file ReceiverNoise.h
/// The receiver noise of one station and polarisation in one subband, as the station's
/// filter bank delivers it: complex Gaussian noise, white before the filter bank, through
/// the 16-tap filter whose power response is the subband's aliased power
/// (SubbandResponse::noiseTaps), continuous from one chunk to the next.

#include <array>
#include <complex>
#include <cstdint>

#include "Random.h"
#include "rtcp/StationFilter.h"

namespace rtcp::sim {

class ReceiverNoise {
 public:
  static constexpr int kNrTaps = StationFilter::kNrTaps;
  static constexpr int kHistory = kNrTaps - 1;

  /// power: E|z|^2 per sample of the white noise before the filter bank.
  ReceiverNoise(uint64_t seed, double power, const std::array<float, kNrTaps>& taps);

  /// The next n samples, written to out[0, n). scratch: room for n + kHistory samples
  /// (shared by the streams that one thread generates in turn).
  void generate(std::complex<float>* scratch, std::complex<float>* out, size_t n);

 private:
  Xoshiro256 random_;
  double power_;
  std::array<float, kNrTaps> taps_;
  std::array<std::complex<float>, kHistory> history_;  ///< the last white samples
};

}  // namespace rtcp::sim
