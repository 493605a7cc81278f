#pragma once
/// \file SubbandResponse.h
/// LOFAR's station filter bank (rtcp::StationFilter: 1024 critically sampled subbands, 16
/// taps per branch) as one subband sees it on the simulator's chunk grid. A station's
/// subband b holds, at baseband frequency nu (subband widths), the sky at
/// f_b + (nu + m) fs weighted by H(nu + m) for every m: its own band (m = 0), rolling off
/// towards the edges, plus what the neighbouring subbands (m = -1, +1) alias into it;
/// further aliases lie in the stop band (below -90 dB) and are left out. Receiver noise,
/// white before the filter bank, leaves it with the aliased power |G(nu)|^2 of a 16-tap
/// filter g (StationFilter::noiseShapingFilter).

#include <array>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/StationFilter.h"

namespace rtcp::sim {

class SubbandResponse {
 public:
  static constexpr int kNrBands = 3;  ///< band index m + 1 for m = -1, 0, +1

  /// Weights on the grid of an fftSize-point chunk FFT of one subband's samples.
  explicit SubbandResponse(int fftSize);

  int fftSize() const { return fftSize_; }
  /// H(nu_i + m), i in FFT order (bin i at nu = i / fftSize, wrapped to [-0.5, 0.5)).
  const float* weights(int m) const { return weights_[m + 1].data(); }
  /// Bins [first, last) outside which the neighbours' weights are below 1e-4 (-80 dB):
  /// their aliases reach only the subband's outer 15 %, around bin fftSize / 2; outside,
  /// the weights are taken as 0.
  int firstAliasBin() const { return firstAliasBin_; }
  int lastAliasBin() const { return lastAliasBin_; }
  /// The receiver-noise filter g[0..16) at the subband rate.
  const std::array<float, StationFilter::kNrTaps>& noiseTaps() const { return noiseTaps_; }
  /// Mean power over the subband of white input of unit density (R[0], about 0.95).
  double meanPower() const { return meanPower_; }
  /// Amplitude gain of a tone offset subband widths from the subband centre: H(offset)
  /// within 1.5 subbands, else 0.
  static double toneGain(double offset);

 private:
  int fftSize_;
  std::array<AlignedBuffer<float>, kNrBands> weights_;
  int firstAliasBin_ = 0, lastAliasBin_ = 0;
  std::array<float, StationFilter::kNrTaps> noiseTaps_{};
  double meanPower_ = 0;
};

}  // namespace rtcp::sim
