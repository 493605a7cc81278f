#pragma once
/// \file SubbandBlockFlagger.h
/// The pre-correlation flagger (PreCorrelationFlagger.h) applied to every station of one
/// subband's block, the way both of the ranks' chains use it: the correlator's
/// (SubbandProcessor, on the filter bank's C channels) and the beam former's
/// (beamformed/BeamFormerProcessor, on its C_d delay-compensation channels). Per block:
///
///  1. flagStation() per station (in parallel, one Workspace per thread): its flags, and
///     what it flagged zeroed (as a lost sample is) while the samples are still in cache;
///  2. settle(): stations found broken (findBrokenStations) are flagged whole and zeroed,
///     and the totals are counted;
///  3. mergeSuperstation(), after the Beamformer merged the members' samples and masks:
///     the superstation's flags are its members' intersected (a sample any member flagged
///     is flagged), zeroed in the merged samples, and kept in the first member's place.
///
/// flags()[s] then holds, per channel, the spectra of station s that enter the sums: what
/// arrived and was not flagged.
///
/// Channel 0 (the subband's edges, where the station's filter bank aliases) is not judged
/// by the flagger. The correlator flags it anyway (SpectrumFlagger); for the beam former,
/// whose time series holds it, EdgeChannel::kFollowsSpectra flags it in the spectra whose
/// every other channel is flagged (broadband interference, a broken station), and the
/// station's counts include it.

#include <span>
#include <vector>

#include "Beamformer.h"
#include "ChannelFlags.h"
#include "PreCorrelationFlagger.h"
#include "SpectrumMask.h"
#include "rtcp/FlaggingSettings.h"

namespace rtcp::correlator {

class SubbandBlockFlagger {
 public:
  enum class EdgeChannel {
    kLeftOut,         ///< channel 0 valid where it arrived, not counted (the correlator's)
    kFollowsSpectra,  ///< flagged where every other channel is, counted (the beam former's)
  };

  /// samples of a station: [channel][pol][reim][paddedSpectra] floats (the kernel layout).
  SubbandBlockFlagger(const FlaggingSettings& settings, int nrStations, int nrChannels,
                      int nrSpectra, int paddedSpectra,
                      EdgeChannel edgeChannel = EdgeChannel::kLeftOut);

  /// A workspace per thread that calls flagStation().
  PreCorrelationFlagger::Workspace makeWorkspace() const { return flagger_.makeWorkspace(); }

  /// Flags station `station` of this block: samples (lost spectra zero) and valid (the
  /// spectra that arrived) as PreCorrelationFlagger::flag; zeroes the samples it flagged.
  /// Stations in parallel.
  void flagStation(int station, float* samples, const SpectrumMask& valid,
                   PreCorrelationFlagger::Workspace& workspace);
  /// The same from the cell powers already in workspace.power, e.g. summed by the delay
  /// correction (PreCorrelationFlagger::flagCells; only when takesCellPowers()).
  void flagStationCells(int station, float* samples, const SpectrumMask& valid,
                        PreCorrelationFlagger::Workspace& workspace);
  bool takesCellPowers() const { return flagger_.takesCellPowers(); }
  /// Once every station is flagged: broken stations flagged whole and zeroed (samples[s],
  /// valid[s]: per input station), totals counted.
  void settle(std::span<float* const> samples, std::span<const SpectrumMask* const> valid);
  /// After Beamformer::merge: the superstation's flags and zeroed samples (see above).
  void mergeSuperstation(const Beamformer& beamformer, std::span<float* const> samples,
                         std::span<const SpectrumMask* const> valid);

  /// Per input station: the samples of the last block that enter the sums.
  const std::vector<ChannelFlags>& flags() const { return flags_; }
  /// Per input station: what was flagged since construction.
  const std::vector<StationFlagTotals>& totals() const { return totals_; }

 private:
  /// After the flagger: channel 0 (EdgeChannel::kFollowsSpectra), then the flagged samples
  /// zeroed.
  void finishStation(int station, float* samples, const SpectrumMask& valid);
  /// EdgeChannel::kFollowsSpectra: channel 0 of station's flags and counts.
  void flagEdgeChannel(int station, const SpectrumMask& valid);

  FlaggingSettings settings_;
  EdgeChannel edgeChannel_;
  PreCorrelationFlagger flagger_;
  std::vector<ChannelFlags> flags_;                ///< [input station]
  std::vector<StationFlagStatistics> statistics_;  ///< [input station], this block
  std::vector<StationFlagTotals> totals_;          ///< [input station]
};

}  // namespace rtcp::correlator
