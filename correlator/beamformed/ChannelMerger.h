#pragma once
/// \file ChannelMerger.h
/// Beam former step 4: back to the subband's time resolution. The inverse of
/// DelayChannelSplitter: per spectrum and polarisation a C_d-point inverse FFT of the
/// delay-compensation channels, normalised by 1 / C_d, so that split then merge gives the
/// input samples back (to rounding). Used per TAB (coherent) and per station (incoherent).

#include <complex>

#include "FftPlan.h"

namespace rtcp::correlator::beamformed {

class ChannelMerger {
 public:
  ChannelMerger(int nrChannels, int nrSpectra);

  /// input[channel][pol][reim][paddedSpectra] (TabKernel's output for one TAB, or
  /// DelayAndBandpassCorrection's for one station) -> samples[time][pol],
  /// time = spectrum x C_d + n. samples 64-byte aligned, nrSpectra x C_d x 2 complex.
  /// Thread-safe (const).
  void merge(const float* input, int paddedSpectra, std::complex<float>* samples) const;

  int nrChannels() const { return nrChannels_; }
  int nrSpectra() const { return nrSpectra_; }
  int nrSamples() const { return nrChannels_ * nrSpectra_; }

 private:
  int nrChannels_;
  int nrSpectra_;
  FftPlan plan_;
};

}  // namespace rtcp::correlator::beamformed
