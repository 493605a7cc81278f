#pragma once
/// \file FlaggingSettings.h
/// Online RFI flagging, parsed once from a parset into typed fields: what
/// ObservationSettings::flagging holds (common/ReadFlagging.cc).
///
/// BG/P's keys, as its Parset.cc read them (`OLAP.CNProc.*`): `onlineFlagging` is the
/// switch of the whole; each stage runs only with it and its own key on —
/// `onlinePreCorrelationFlagging` (per station and subband, after the filter bank, in the
/// compute ranks), `onlinePreCorrelationNoChannelsFlagging` (in time only, on the power of
/// the whole subband: BG/P ran it before the filter bank), `onlinePostCorrelationFlagging`
/// (on the integrated visibilities, before they are written), and
/// `onlinePostCorrelationFlaggingDetectBrokenStations`. The `*FlaggingType` and
/// `*FlaggingStatisticsType` keys choose the algorithm and statistics as BG/P named them.
///
/// rtcp's own keys (what BG/P did not have) live under `Rtcp.Flagging.`: thresholds, the
/// pre-correlation cell size and window, broken-station limits, the AOFlagger strategy and
/// the post-correlation window (docs/DESIGN.md §2.2, "Online flagging").

#include <string>
#include <utility>
#include <vector>

namespace rtcp {

/// BG/P's pre-correlation flagger types (OLAP.CNProc.onlinePreCorrelationFlaggingType).
/// rtcp flags on a grid of cells (a channel × `spectraPerCell` spectra, power summed):
/// `kSumThreshold` (rtcp's default, BG/P's older `SUM_THRESHOLD`) runs SumThreshold over
/// the grid in time and frequency, then over the spectrum integrated over the block (whole
/// channels) and the power integrated over channels (whole cells in time); the others are
/// BG/P's subsets of that.
enum class PreFlaggerType {
  kThreshold,                 ///< THRESHOLD: cells above the threshold (window 1 only)
  kIntegratedThreshold,       ///< INTEGRATED_THRESHOLD: integrated spectrum, window 1
  kIntegratedSumThreshold,    ///< INTEGRATED_SUM_THRESHOLD: integrated spectrum, SumThreshold
  kIntegratedThreshold2D,     ///< INTEGRATED_THRESHOLD_2D: the cell grid, window 1
  kIntegratedSumThreshold2D,  ///< INTEGRATED_SUM_THRESHOLD_2D: the cell grid, SumThreshold
  kSumThreshold,              ///< SUM_THRESHOLD: grid, integrated spectrum and time series
};

/// How the flagger estimates the noise: BG/P's NORMAL (mean and standard deviation of
/// the unflagged values) or WINSORIZED (10 % clipped on each side, σ scaled by 1.54;
/// the default), both around the median.
enum class FlaggerStatistics { kNormal, kWinsorized };

/// BG/P's post-correlation flagger types (OLAP.CNProc.onlinePostCorrelationFlaggingType).
/// rtcp's post-correlation flagger is AOFlagger's (its strategy does SumThreshold on
/// smoothed data with robust statistics); BG/P's names are accepted and noted.
enum class PostFlaggerType {
  kAoflagger,                        ///< AOFLAGGER: rtcp's (the default)
  kThreshold,                        ///< THRESHOLD
  kSumThreshold,                     ///< SUM_THRESHOLD
  kSmoothedSumThreshold,             ///< SMOOTHED_SUM_THRESHOLD
  kSmoothedSumThresholdWithHistory,  ///< SMOOTHED_SUM_THRESHOLD_WITH_HISTORY
};

/// The polarisation products AOFlagger's strategy sees in the post-correlation flagger
/// (Rtcp.Flagging.postCorrelation.polarisations); a visibility is flagged in all four
/// when any flags it.
enum class PostPolarisations {
  kAll,       ///< all: XX, XY, YX, YY, as LOFAR's pipelines flag offline
  kParallel,  ///< XXYY: XX and YY only
  kStokesI,   ///< I: (XX + YY) / 2 only (the default: what rtcp's online strategy flags)
};

/// The view across subbands (Rtcp.Flagging.subbandLevel.*; input/SubbandLevelFlagger.h): per
/// station and block, each subband's power against a running median of its neighbours'
/// (log power, ±halfWindow subbands in frequency order); a subband above it by more than
/// max(minimumDb, sigmas × the residuals' robust σ) is flagged whole at that station, in
/// ionproc's input, before the block is served (both the correlation and the beam former).
struct SubbandLevelFlagging {
  /// Rtcp.Flagging.subbandLevel.enabled; default: on with pre-correlation flagging
  bool on = false;
  int halfWindow = 8;     ///< Rtcp.Flagging.subbandLevel.halfWindow: subbands on each side
  double sigmas = 6;      ///< Rtcp.Flagging.subbandLevel.sigmas: × the residuals' robust σ
  double minimumDb = 15;  ///< Rtcp.Flagging.subbandLevel.minimumDb: the threshold's floor
  bool operator==(const SubbandLevelFlagging&) const = default;
};

std::string preFlaggerTypeName(PreFlaggerType type);
std::string postFlaggerTypeName(PostFlaggerType type);
std::string flaggerStatisticsName(FlaggerStatistics statistics);
std::string postPolarisationsName(PostPolarisations polarisations);

struct FlaggingSettings {
  bool online = false;  ///< OLAP.CNProc.onlineFlagging (default F, as BG/P)
  /// OLAP.CNProc.onlinePreCorrelationFlagging, and online
  bool preCorrelation = false;
  /// OLAP.CNProc.onlinePreCorrelationNoChannelsFlagging, and online: SumThreshold in time
  /// on the power of the whole subband (summed over channels), per spectrum
  bool preCorrelationNoChannels = false;
  /// OLAP.CNProc.onlinePostCorrelationFlagging, and online
  bool postCorrelation = false;
  /// OLAP.CNProc.onlinePostCorrelationFlaggingDetectBrokenStations, and online: a station
  /// of a subband and block with no signal, or flagged beyond brokenFlaggedFraction by the
  /// pre-correlation flagger, is flagged whole (in the compute ranks, which see every
  /// station of the subband); and, after correlation, a station whose cross-correlations
  /// carry no sky while the other baselines do (noise alone: its autocorrelation looks
  /// right) is flagged whole in a window of integrations (the output path:
  /// output/IncoherentStations.h). Default: on with pre-correlation flagging.
  bool detectBrokenStations = false;

  PreFlaggerType preType = PreFlaggerType::kSumThreshold;  ///< ...onlinePreCorrelationFlaggingType
  FlaggerStatistics preStatistics = FlaggerStatistics::kWinsorized;  ///< ...StatisticsType
  PostFlaggerType postType = PostFlaggerType::kAoflagger;  ///< ...onlinePostCorrelationFlaggingType
  FlaggerStatistics postStatistics = FlaggerStatistics::kWinsorized;  ///< ...StatisticsType

  /// Rtcp.Flagging.preCorrelation.threshold: SumThreshold's first threshold (window 1), in
  /// σ of the cells above their median; window M uses threshold × 1.5^log2(M) / M (Offringa
  /// et al. 2010).
  double preThreshold = 6.0;
  /// Rtcp.Flagging.preCorrelation.spectraPerCell: spectra whose power one cell sums (BG/P's
  /// onlinePreCorrelationFlaggingIntegration); the block's last cell may hold fewer
  int spectraPerCell = 16;
  /// Rtcp.Flagging.preCorrelation.maxWindow: SumThreshold's longest window (a power of 2)
  int maxWindow = 32;
  /// Rtcp.Flagging.brokenStation.flaggedFraction: a station flagged beyond this fraction of
  /// a subband's block is flagged whole (only interference)
  double brokenFlaggedFraction = 0.5;
  /// Rtcp.Flagging.brokenStation.powerRatio: a station whose unflagged power is below this
  /// fraction of the median station's is flagged whole (no signal)
  double brokenPowerRatio = 0.01;
  /// Rtcp.Flagging.postCorrelation.strategy: an AOFlagger Lua strategy file; empty: rtcp's
  /// online strategy (parsets/rtcp-online.lua); `lofar-default`: AOFlagger's own LOFAR
  /// strategy (its lofar-default.lua, as LOFAR's pipelines flag offline)
  std::string strategy;
  /// Rtcp.Flagging.postCorrelation.window: integrations of a subband flagged together; each
  /// is flagged window / (window - 2 overlap) times (docs/PERFORMANCE.md: 32 costs 0.6 of 16)
  int postWindow = 32;
  /// Rtcp.Flagging.postCorrelation.overlap: integrations of context on each side of the
  /// ones a window decides (less than half the window)
  int postOverlap = 4;
  /// Rtcp.Flagging.postCorrelation.polarisations: what AOFlagger sees (all, XXYY, I)
  PostPolarisations postPolarisations = PostPolarisations::kStokesI;
  /// Rtcp.Flagging.postCorrelation.threads: threads that flag a window's baselines, each
  /// with its own copy of the strategy (the thread completing the integration is one)
  int postThreads = 1;
  /// Whole subbands of a station far above the bandpass across subbands (ionproc's input)
  SubbandLevelFlagging subbandLevel;

  bool anyPreCorrelation() const {
    return preCorrelation || preCorrelationNoChannels || detectBrokenStations;
  }
  /// Every flagging key with the value rtcp uses (the effective parset).
  std::vector<std::pair<std::string, std::string>> effectiveKeys() const;
  /// What runs, in one line ("online flagging: off", or the stages and their settings).
  std::string summaryLine() const;
  bool operator==(const FlaggingSettings&) const = default;
};

}  // namespace rtcp
