#pragma once
/// \file SpectrumFlagger.h
/// Step 2 of the signal chain: which spectra survive lost samples. Spectrum s of a block
/// is computed from input samples [s C, s C + taps C) of the block including its history
/// (one sample for C = 1), so a flagged sample spoils every spectrum whose filter window
/// covers it: up to 16. Flagged spectra are zeroed before correlation (by
/// DelayAndBandpassCorrection) and counted out of the valid-sample counts.

#include <cstdint>

#include "SpectrumMask.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator {

class SpectrumFlagger {
 public:
  SpectrumFlagger(int nrChannels, int nrSpectra);

  /// The valid spectra of subband `subband` of a block (all flagged when ionproc served
  /// it flagged).
  void flag(const StationBlock& block, int subband, SpectrumMask& valid) const;
  /// The same from sample validity bits: sampleValid[time / 64] bit time % 64, time in
  /// [0, nrInputSamples()).
  void flag(const uint64_t* sampleValid, SpectrumMask& valid) const;

  /// Samples a block holds: history + spectra x C.
  int nrInputSamples() const { return window_ - nrChannels_ + nrSpectra_ * nrChannels_; }

 private:
  int nrChannels_;
  int nrSpectra_;
  int window_;  ///< input samples behind one spectrum: taps x C (1 for C = 1)
};

}  // namespace rtcp::correlator
