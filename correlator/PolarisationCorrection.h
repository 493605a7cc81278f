#pragma once
/// \file PolarisationCorrection.h
/// Step 3b of the signal chain: the per-polarisation part of a station's corrections
/// (COBALT's PIC.Core.<field>.<antennaSet>.<bandFilter>.delay.X/Y and phase0.X/Y, with
/// Cobalt.correctClocks; DESIGN §2.3). Their mean delay travels with the geometric delay
/// (coarse shift and residual); what is left per polarisation P is a delay d_P and a phase
/// phi_P that do not change in time: channel c (sky frequency f_c) of P is multiplied by
/// exp(-i (2 pi f_c d_P + phi_P)). Acts in place on DelayAndBandpassCorrection's output.

#include <array>
#include <complex>
#include <vector>

namespace rtcp::correlator {

class PolarisationCorrection {
 public:
  PolarisationCorrection() = default;  ///< does nothing
  /// delay[P] in seconds, phase[P] in radians, P = X, Y.
  PolarisationCorrection(int nrChannels, int paddedSpectra, double subbandWidth,
                         std::array<double, 2> delay, std::array<double, 2> phase);

  /// False when every delay and phase is zero: apply() does nothing.
  bool active() const { return active_; }
  /// samples[channel][pol][re,im][paddedSpectra] (floats), rotated in place.
  void apply(double subbandFrequency, float* samples) const;
  /// The same in chunks: rotations[channel][pol] at a subband frequency (rotations()),
  /// then spectra [first, first + count) of the time axis rotated by them.
  void rotations(double subbandFrequency, std::vector<std::complex<float>>& rotations) const;
  void apply(const std::vector<std::complex<float>>& rotations, float* samples, int first,
             int count) const;

 private:
  int nrChannels_ = 0;
  int paddedSpectra_ = 0;
  double subbandWidth_ = 0;
  std::array<double, 2> delay_{}, phase_{};
  bool active_ = false;
};

}  // namespace rtcp::correlator
