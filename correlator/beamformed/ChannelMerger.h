#pragma once
/// \file ChannelMerger.h
/// Beam former step 4: back to the subband's time resolution. The inverse of
/// DelayChannelSplitter: per spectrum and polarisation a C_d-point inverse FFT of the
/// delay-compensation channels, normalised by 1 / C_d, so that split then merge gives the
/// input samples back (to rounding). Used per TAB (coherent) and per station (incoherent).
/// It works through the block in tiles of kTileSpectra spectra (16 x C_d x 2 complex, 16 KB
/// at C_d = 64): each tile is gathered from the channel-major input, transformed and scaled
/// while it is in the first-level cache (one pass over the output, not one per channel and
/// polarisation).

#include <complex>
#include <optional>

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

  static constexpr int kTileSpectra = 16;

 private:
  int nrChannels_;
  int nrSpectra_;
  FftPlan plan_;                 ///< a whole tile's transforms
  std::optional<FftPlan> rest_;  ///< the last tile's, when nrSpectra is no multiple of a tile
};

}  // namespace rtcp::correlator::beamformed
