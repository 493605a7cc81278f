#pragma once
/// \file StationFilter.h
/// The polyphase filter bank of a LOFAR station, as data: the 16384 FIR coefficients that
/// split the sampled band into 1024 critically sampled subbands (16 taps per branch;
/// common/data/StationFilterCoefficients.txt, embedded by the build), and what follows
/// from them: a subband's amplitude response, the power a subband receives from white
/// input including what aliases in from its neighbours, the bandpass correction LOFAR's
/// correlator (COBALT, BandPass.cc) divides it out with, and a 16-tap filter with that
/// power response (for simulated receiver noise).
///
/// Frequencies nu are in subband widths from a subband's centre: nu = +-0.5 are its edges,
/// nu = 1 is the centre of the next subband up. Responses are relative to the filter's DC
/// gain (the sum of the coefficients) and zero-phase (the filter's constant group delay of
/// 8 subband samples, common to every station, is left out).

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace rtcp {

class StationFilter {
 public:
  static constexpr int kNrSubbands = 1024;  ///< channels of the station's filter bank
  static constexpr int kNrTaps = 16;        ///< taps per branch
  static constexpr int kLength = kNrSubbands * kNrTaps;

  /// The LOFAR station filter (the embedded coefficients).
  static const StationFilter& lofar();

  /// h[tap * 1024 + branch], integers as the station's firmware uses them.
  std::span<const int32_t> coefficients() const { return coefficients_; }
  /// Sum of the coefficients (33380518 = 0.9948 * 2^25).
  double dcGain() const { return dcGain_; }

  /// H(nu) / H(0), real: a plain sum over the 16384 coefficients.
  double response(double nu) const;
  /// response(first + i * step) for i in [0, count), by a chirp-z transform (three FFTs):
  /// the same values as response() to ~1e-12, at a fraction of the cost for long grids.
  std::vector<double> responseGrid(double first, double step, int count) const;

  /// R[tau] = 1024 sum_l h[l] h[l + 1024 tau] / H(0)^2, tau in [0, 16): the autocorrelation
  /// of the filter's branches, which the aliased power is the Fourier series of. R[0] is
  /// the mean of aliasedPower over a subband.
  const std::array<double, kNrTaps>& branchAutocorrelation() const { return autocorrelation_; }
  /// Power a subband receives at nu from white input of unit density, relative to the
  /// centre's own response: sum over all m of |H(nu + m)|^2 / H(0)^2 (its own response and
  /// the aliases of every other subband, since the filter bank is critically sampled).
  /// Exactly R[0] + 2 sum_tau R[tau] cos(2 pi nu tau); periodic in nu with period 1.
  double aliasedPower(double nu) const;

  /// Amplitude gains for C fine channels per subband (C a power of two), as COBALT's
  /// BandPass.cc computes them: channel c (sky frequency centre + (c - C/2) / C) gets
  /// 2^25 / sqrt(sum_m |H_raw((c - C/2) / C + m)|^2), the raw (integer-coefficient)
  /// response and its aliases; about 1.0052 at the centre channel, 1.40 at channel 0.
  /// C = 1 (no filter bank) gives {1}: one channel spans the whole subband.
  std::vector<double> bandpassCorrection(int nrChannels) const;

  /// g[0..16): the minimum-phase filter (at the subband rate) whose power response
  /// |G(nu)|^2 equals aliasedPower(nu): white noise through it has a station subband's
  /// spectrum. Its autocorrelation is R (sum g^2 = R[0]).
  const std::array<double, kNrTaps>& noiseShapingFilter() const { return noiseShaping_; }

 private:
  StationFilter();

  std::span<const int32_t> coefficients_;
  double dcGain_ = 0;
  std::array<double, kNrTaps> autocorrelation_{};
  std::array<double, kNrTaps> noiseShaping_{};
};

}  // namespace rtcp
