#pragma once
/// \file PreCorrelationFlagger.h
/// Step 4c of the signal chain: online RFI flagging per station and subband, after the
/// filter bank and the delay/bandpass correction, before the beamformer and the
/// correlation (BG/P's PreCorrelationFlagger, OLAP.CNProc.onlinePreCorrelationFlagging;
/// FlaggingSettings.h). What it flags is treated as lost: zeroed, so that it enters neither
/// the correlation nor a superstation's sum, and counted out of the valid samples channel
/// by channel (ValidSampleCounter), so WEIGHT_SPECTRUM drops by exactly what it flagged.
///
/// A station's block is seen as a grid of cells: cell (c, k) is the mean power (both
/// polarisations) of channel c over spectra [k S, (k + 1) S), S = spectraPerCell, over the
/// valid spectra only; a cell without one is lost already. Channel 0 (the subband edges,
/// always flagged) is left out when C > 1. With SUM_THRESHOLD (the default), in order
/// (SumThreshold.h: robust statistics, windows 1 .. maxWindow, χ_1 = threshold):
///  1. each channel's cells are divided by the channel's median (the bandpass and a
///     persistent tone's level leave the grid), and SumThreshold runs along time (each
///     channel) and frequency (each cell column) of that grid: bursts, intermittent and
///     drifting narrow-band signals;
///  2. the spectrum integrated over the block (each channel's mean unflagged cell) runs
///     SumThreshold in frequency against its median and the noise the radiometer equation
///     gives (SpectrumNoise.h: not the channels' spread, which an FM transmitter filling
///     the subband inflates), in rounds while it finds more: a channel found is flagged
///     whole (continuous tones, carriers steady over the block);
///  3. the normalised grid averaged over the unflagged channels runs SumThreshold in time:
///     a cell column found is flagged in every channel (weak broadband bursts).
/// BG/P's other types run a part of this: THRESHOLD and INTEGRATED_THRESHOLD_2D step 1
/// with window 1, INTEGRATED_SUM_THRESHOLD_2D step 1, INTEGRATED_(SUM_)THRESHOLD step 2.
/// With onlinePreCorrelationNoChannelsFlagging the power of each spectrum summed over the
/// channels runs SumThreshold in time too, and a spectrum found is flagged in every channel
/// (BG/P did this before its filter bank, on the subband's samples).
///
/// Broken stations (detectBrokenStations): once every station of a subband's block is
/// flagged, findBrokenStations() names those with no signal (the mean power of their
/// unflagged cells below brokenPowerRatio × the median station's; a station sending zeros,
/// or only a tone, once the tone is flagged) or only interference (more than
/// brokenFlaggedFraction of their cells flagged); they are flagged whole.
///
/// The optimised parts, each beside a plain twin the tests compare it with on random data:
/// cellPowers() (16 lanes of the kernel layout's rows at a time, CellPowers.h; or summed by
/// the delay correction's tiles while the samples are in registers, then flagCells()), SumThreshold
/// on every channel or cell column at once as vector lanes (sumThresholdColumns, SumThreshold.h)
/// and the medians and percentiles by bisection on the values' bits (OrderStatistics.h): no
/// sorting, no data-dependent branch. The reference twin of the whole (reference/Reference.h,
/// flagStation) does the step with plain loops, sorting and windows summed afresh.

#include <cstdint>
#include <span>
#include <vector>

#include "CellPowers.h"
#include "ChannelFlags.h"
#include "OrderStatistics.h"
#include "SpectrumMask.h"
#include "SumThreshold.h"
#include "rtcp/FlaggingSettings.h"

namespace rtcp::correlator {

/// What the flagger found in one station's block of one subband.
struct StationFlagStatistics {
  uint64_t cells = 0;         ///< cells with data (channel 0 left out when C > 1)
  uint64_t flaggedCells = 0;  ///< of those, flagged
  double power = 0;           ///< mean power of the unflagged cells with data (per spectrum)
  /// Samples (spectrum × channel, channel 0 left out when C > 1) that arrived and were
  /// flagged: what the valid-sample counts of the station lose.
  uint64_t flaggedSamples = 0;
  uint64_t validSamples = 0;  ///< samples that arrived (the same channels)
};

enum class BrokenStation { kNo, kNoSignal, kInterference };

/// One station's flagging summed over the subband-blocks a processor flagged.
struct StationFlagTotals {
  uint64_t subbandBlocks = 0;       ///< subband-blocks flagged
  uint64_t validSamples = 0;        ///< samples that arrived (spectrum × channel)
  uint64_t flaggedSamples = 0;      ///< of those, flagged (the station's broken blocks too)
  uint64_t brokenNoSignal = 0;      ///< subband-blocks flagged whole: no signal
  uint64_t brokenInterference = 0;  ///< subband-blocks flagged whole: only interference
  void add(const StationFlagStatistics& block, BrokenStation broken);
};

class PreCorrelationFlagger {
 public:
  /// samples of a station: [channel][pol][reim][paddedSpectra] floats (the kernel layout).
  PreCorrelationFlagger(const FlaggingSettings& settings, int nrChannels, int nrSpectra,
                        int paddedSpectra);

  /// Per-thread buffers of one station's grid.
  struct Workspace {
    std::vector<float> power;         ///< [channel][cell]: mean power per valid spectrum
    std::vector<float> normalised;    ///< [channel][cell]: power / channel median
    std::vector<uint8_t> flags;       ///< [channel][cell]: 1 = flagged
    std::vector<int> cellSpectra;     ///< [cell]: valid spectra in the cell
    std::vector<float> cellDivisors;  ///< [cell]: max(cellSpectra, 1)
    std::vector<uint8_t> emptyCells;  ///< [cell]: 1 = no valid spectrum
    std::vector<float> series;        ///< a channel's or a column's values
    std::vector<uint8_t> seriesFlags;
    std::vector<uint8_t> seriesBefore;  ///< seriesFlags before a detection
    /// [channel from firstChannel()]: the valid spectra of its unflagged cells
    std::vector<float> channelSpectra;
    std::vector<double> columnSums;      ///< [cell]: detectInTime's sums over the channels
    std::vector<uint32_t> columnCounts;  ///< [cell]: and the unflagged cells in them
    /// The grid as sumThresholdColumns's columns, padded to 16 lanes: [cell][channel] (in
    /// time) or [channel][cell] (in frequency), channels from firstChannel()
    std::vector<float> laneValues;
    std::vector<uint8_t> laneFlags;
    ColumnScratch columns;
    std::vector<float> spectrumPower;  ///< [spectrum]: power summed over channels
    std::vector<uint8_t> spectrumFlags;
    SelectionScratch selection;   ///< robustStatistics's
    std::vector<float> levels;    ///< [channel from firstChannel()]: the channel's median cell
    std::vector<float> divisors;  ///< [channel from firstChannel()]: the level, 1 where 0
    MedianScratch medians;
    std::vector<uint8_t> passScratch;
  };
  Workspace makeWorkspace() const;

  /// The kernel: power[c * nrCells + k] = summed power of cell (c, k) (not yet divided by
  /// its valid spectra); spectrumPower[s] (when not empty) = power of spectrum s summed over
  /// channels from firstChannel(). Lost spectra are zero in samples.
  void cellPowers(const float* samples, std::span<float> power,
                  std::span<float> spectrumPower) const;

  /// Flags one station: samples as above (lost spectra zero), valid: its spectra that
  /// arrived. Fills flags (every channel) and statistics; samples are not changed.
  void flag(const float* samples, const SpectrumMask& valid, ChannelFlags& flags,
            StationFlagStatistics& statistics, Workspace& workspace) const;

  /// The same from the cells' summed powers already in workspace.power ([channel][cell],
  /// as cellPowers() gives them; channel 0's row is ignored when C > 1), e.g. summed by
  /// DelayAndBandpassCorrection while it wrote the samples: only when takesCellPowers().
  void flagCells(const SpectrumMask& valid, ChannelFlags& flags, StationFlagStatistics& statistics,
                 Workspace& workspace) const;
  /// Whether flagCells() can be given the cell powers of the delay correction's tiles:
  /// cells of kCellLanes spectra, and no power per spectrum asked for
  /// (onlinePreCorrelationNoChannelsFlagging off).
  bool takesCellPowers() const {
    return spectraPerCell_ == kCellLanes && !settings_.preCorrelationNoChannels;
  }

  /// Zeroes the samples of spectra `valid` holds that `flags` flags, a run of flagged
  /// spectra at a time (kernel: AVX-512 masked stores, or std::fill_n, which the tests
  /// compare).
  void zeroFlagged(float* samples, const SpectrumMask& valid, const ChannelFlags& flags,
                   ColumnKernel kernel = ColumnKernel::kBest) const;

  int nrCells() const { return nrCells_; }
  int firstChannel() const { return firstChannel_; }
  int spectraPerCell() const { return spectraPerCell_; }

 private:
  void detectOnGrid(Workspace& w, size_t maxWindow) const;
  void detectInSpectrum(Workspace& w, size_t maxWindow) const;
  void detectInTime(Workspace& w) const;
  void detectSpectra(const SpectrumMask& valid, Workspace& w) const;
  void fillFlags(const SpectrumMask& valid, const Workspace& w, ChannelFlags& flags) const;
  void count(const SpectrumMask& valid, const Workspace& w, const ChannelFlags& flags,
             StationFlagStatistics& statistics) const;

  FlaggingSettings settings_;
  int nrChannels_;
  int nrSpectra_;
  int paddedSpectra_;
  int spectraPerCell_;
  int nrCells_;
  int firstChannel_;
};

/// Per station: whether it is broken (see the file comment). statistics: every station of
/// one subband's block.
std::vector<BrokenStation> findBrokenStations(std::span<const StationFlagStatistics> statistics,
                                              const FlaggingSettings& settings);

}  // namespace rtcp::correlator
