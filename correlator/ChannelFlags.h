#pragma once
/// \file ChannelFlags.h
/// Which spectra of a block are valid, channel by channel, for one station: what the
/// pre-correlation flagger leaves (lost spectra and interference). flags.channel(c) bit s
/// set = sample (spectrum s, channel c) enters the correlation.

#include <vector>

#include "SpectrumMask.h"

namespace rtcp::correlator {

class ChannelFlags {
 public:
  ChannelFlags() = default;
  ChannelFlags(int nrChannels, int nrSpectra) {
    for (int c = 0; c < nrChannels; ++c) channels_.emplace_back(nrSpectra);
  }

  int nrChannels() const { return int(channels_.size()); }
  SpectrumMask& channel(int c) { return channels_[size_t(c)]; }
  const SpectrumMask& channel(int c) const { return channels_[size_t(c)]; }
  /// Every channel valid where `valid` is.
  void setAll(const SpectrumMask& valid) {
    for (SpectrumMask& mask : channels_) mask.copyFrom(valid);
  }
  /// Every sample flagged.
  void flagAll() {
    for (SpectrumMask& mask : channels_) mask.setAll(false);
  }
  /// Keeps only the samples valid in both (same shape).
  void intersect(const ChannelFlags& other) {
    for (size_t c = 0; c < channels_.size(); ++c) channels_[c].intersect(other.channels_[c]);
  }

 private:
  std::vector<SpectrumMask> channels_;  ///< [channel]
};

}  // namespace rtcp::correlator
