#pragma once
/// \file ValidSampleCounter.h
/// Step 7 of the signal chain: completes a block's CorrelatedData. The correlator kernel
/// has summed the visibilities over the block's spectra (flagged spectra are zero); this
/// step gives each visibility its number of valid samples: the spectra valid at both
/// stations of the baseline, for every channel but channel 0 (which holds the subband
/// edges: flagged, count 0, visibilities zeroed, when C > 1).

#include <span>

#include "SpectrumMask.h"
#include "rtcp/CorrelatedBlock.h"

namespace rtcp::correlator {

class ValidSampleCounter {
 public:
  ValidSampleCounter(int nrStations, int nrChannels);

  /// masks: one per (output) station. Fills block.validSamples[baseline][channel].
  void count(std::span<const SpectrumMask* const> masks, CorrelatedData& block) const;

 private:
  int nrStations_;
  int nrChannels_;
};

}  // namespace rtcp::correlator
