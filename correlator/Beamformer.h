#pragma once
/// \file Beamformer.h
/// Step 5 of the signal chain: the beamformer (tied-array adder). The stations named in
/// OLAP.tiedArrayStationNames are added coherently (after delay compensation) into one
/// virtual station, which is then correlated like any other.
///
/// Station order after merging: the observation's station list with every member but the
/// first listed one removed; the superstation takes the place of that first listed member
/// (e.g. list [A B C D], members [C A] -> [B C* D]). A merged spectrum is flagged (and
/// zeroed) where any member's is.

#include <span>
#include <string>
#include <vector>

#include "SpectrumMask.h"

namespace rtcp::correlator {

class Beamformer {
 public:
  /// stationNames: the observation's station list; members: fewer than two means no
  /// merging. Throws std::invalid_argument for a member not in the list, or listed twice.
  Beamformer(const std::vector<std::string>& stationNames, const std::vector<std::string>& members);

  int nrOutputStations() const { return int(outputs_.size()); }
  /// Input station index behind each output station (for the superstation: its first member).
  const std::vector<int>& outputStations() const { return outputs_; }
  /// Input station indices of the members, first listed first (empty: no merging).
  const std::vector<int>& members() const { return members_; }
  std::vector<std::string> outputNames(const std::vector<std::string>& stationNames) const;

  /// Adds the members' samples[channel][pol][reim][time] into the first member's buffer,
  /// intersects their masks into the first member's mask, and zeroes the merged spectra
  /// that are flagged. stations/masks: one per input station.
  void merge(std::span<float* const> stations, std::span<SpectrumMask* const> masks, int nrChannels,
             int paddedSpectra) const;

 private:
  std::vector<int> members_;
  std::vector<int> outputs_;
};

}  // namespace rtcp::correlator
