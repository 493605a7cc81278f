#pragma once
/// \file ValidSampleCounter.h
/// Step 7 of the signal chain: completes a block's CorrelatedData. The correlator kernel
/// has summed the visibilities over the block's spectra (flagged spectra are zero); this
/// step gives each visibility its number of valid samples: the spectra valid at both
/// stations of the baseline (channel by channel with the pre-correlation flagger's flags),
/// for every channel but channel 0 (which holds the subband
/// edges: flagged, count 0, visibilities zeroed, when C > 1).

#include <cstdint>
#include <span>
#include <vector>

#include "ChannelFlags.h"
#include "SpectrumMask.h"
#include "rtcp/CorrelatedBlock.h"

namespace rtcp::correlator {

class ValidSampleCounter {
 public:
  ValidSampleCounter(int nrStations, int nrChannels);

  /// masks: one per (output) station. Fills block.validSamples[baseline][channel].
  void count(std::span<const SpectrumMask* const> masks, CorrelatedData& block) const;
  /// The same channel by channel, with the pre-correlation flagger's flags: a baseline's
  /// count in channel c = the spectra valid in channel c at both stations (counted once
  /// for the channels both stations left as their fullest, those with nothing flagged; 0
  /// without counting where either station has nothing valid). Not thread-safe.
  void count(std::span<const ChannelFlags* const> flags, CorrelatedData& block) const;

 private:
  void check(size_t nrMasks, const CorrelatedData& block) const;
  /// Channel 0 (C > 1): count 0, visibilities zeroed.
  void clearEdgeChannel(int baseline, CorrelatedData& block) const;

  int nrStations_;
  int nrChannels_;
  /// count(flags)'s first step: channelKinds_ and referenceChannels_.
  void classifyChannels(std::span<const ChannelFlags* const> flags, int firstChannel) const;

  /// What count(flags) knows of a station's channel before it counts baselines (bits: two
  /// kinds or'ed give kAsReference only when both are).
  enum ChannelKind : uint8_t {
    kAsReference = 1,  ///< the channel's flags equal the station's reference channel's
    kNoneValid = 2,    ///< nothing valid in the channel
    kOwnMask = 4,      ///< neither: counted on its own
  };
  /// count(flags)'s, kept to be reused (not thread-safe):
  mutable std::vector<uint8_t> channelKinds_;  ///< [station][channel]: ChannelKind
  /// [station]: the channel with the most valid spectra (the first of them): all that
  /// arrived, when any channel has nothing flagged
  mutable std::vector<int> referenceChannels_;
  mutable std::vector<int> counts_;  ///< [channel]: valid spectra of one station's channels
};

}  // namespace rtcp::correlator
