#pragma once
/// \file ValidFractions.h
/// The beam former's valid fractions: which (station, sample) contributions enter a beam,
/// carried from the grid the stations are flagged on to the grid of the final channels.
///
/// The stations' samples are zeroed and counted out on the delay-compensation grid: C_d
/// channels × the block's spectra of C_d samples, one ChannelFlags per station holding
/// both what was lost (a lost sample spoils its whole spectrum, every channel) and what
/// the pre-correlation flagger flagged (cells of a channel). stationFractions() gives the
/// fraction of a beam's stations valid in each cell. ValidFractionMap carries those to the
/// final channels' grid (C_f channels × spectra of C_f samples: the same number of values,
/// nrSamples): final value (j, f) is the mean, weighted by overlap in time and in
/// frequency, of the cells it covers. Channel c of either grid spans the baseband
/// [(c − C/2 − 1/2), (c − C/2 + 1/2)) × fs / C (C/2 rounded down, cyclic at ± fs/2, as
/// DelayChannelSplitter and the final PolyphaseFilterBank place their channels); every cell
/// is shared out completely, so the mean over a block's values is the mean over its cells.

#include <span>
#include <vector>

#include "ChannelFlags.h"

namespace rtcp::correlator::beamformed {

/// cells[spectrum][channel] (nrSpectra × nrChannels of the flags): the fraction of
/// `stations` whose sample is valid there (1 where every one is).
void stationFractions(std::span<const ChannelFlags* const> stations, int nrSpectra, float* cells);

class ValidFractionMap {
 public:
  /// nrSamples: subband-rate samples per block, a multiple of both channel counts.
  /// Throws std::invalid_argument otherwise.
  ValidFractionMap(int nrDelayChannels, int nrFinalChannels, int nrSamples);

  /// cells[delay spectrum][delay channel] -> valid[final spectrum][final channel]
  /// (nrSamples values each). scratch: resized as needed.
  void map(const float* cells, float* valid, std::vector<float>& scratch) const;

  /// Weight of delay channel d in final channel f (the share of f's band d covers).
  double weight(int finalChannel, int delayChannel) const;

 private:
  struct Share {
    int delayChannel;
    float weight;
  };
  int nrDelayChannels_;
  int nrFinalChannels_;
  int nrSamples_;
  std::vector<std::vector<Share>> shares_;  ///< [final channel]: the delay channels it covers
};

}  // namespace rtcp::correlator::beamformed
