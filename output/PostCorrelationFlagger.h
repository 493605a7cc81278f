#pragma once
/// \file PostCorrelationFlagger.h
/// Online RFI flagging of the integrated visibilities before they are written
/// (OLAP.CNProc.onlinePostCorrelationFlagging; common/rtcp/FlaggingSettings.h): AOFlagger's
/// library (Debian's aoflagger-dev, the one LOFAR's pipelines use offline) runs a strategy —
/// rtcp's online strategy (`rtcp-online.lua` in the data directory, parsets/: LOFAR's cut
/// down to what real time affords, the input flags kept), or the file
/// Rtcp.Flagging.postCorrelation.strategy names (`lofar-default`: AOFlagger's LOFAR
/// strategy) — over time–frequency chunks of each cross-correlation baseline of a subband:
/// `window` integrations × the subband's channels, Stokes I (DATA = sum / valid samples; or
/// XX and YY, or all four products, as Rtcp.Flagging.postCorrelation.polarisations says)
/// with the flags already set (lost or flagged before correlation) as existing flags. The
/// baselines of a window are shared out over Rtcp.Flagging.postCorrelation.threads threads,
/// each with its own copy of the strategy. AOFlagger's strategy is nearly all of the cost
/// (docs/PERFORMANCE.md §3).
///
/// Windows overlap so that their edges are not blind: each window decides only the
/// integrations with `overlap` integrations of context on both sides (the observation's
/// first and last also without), then hands on the decided ones, keeping the last 2 ×
/// overlap (the first half of them decided, the left context of the next window; the second
/// half undecided, its right context). So an integration leaves window integrations after
/// it came in, and every integration is flagged window / (window − 2 overlap) times.
/// A flagged visibility gets valid samples 0 and visibility 0: storage-sink writes FLAG and
/// WEIGHT_SPECTRUM 0 there (storage-sink/README.md). Autocorrelations are not flagged
/// (AOFlagger's strategies are for cross-correlations).
///
/// With OLAP.CNProc.onlinePostCorrelationFlaggingDetectBrokenStations each window is first
/// checked for stations whose cross-correlations carry no sky while other baselines do
/// (IncoherentStations.h); such a station is flagged whole in the integrations the window
/// decides, autocorrelation included, before AOFlagger runs on what is left (AOFlagger
/// would flag parts of a dead station's baselines and leave its autocorrelation). Either stage runs
/// without the other (AOFlagger only with onlinePostCorrelationFlagging).
///
/// Where it runs: in the output path (OutputPath), between the Integrator and the storage
/// sender — in ionproc, or in a rank of the correlator's local mode: the one place that
/// holds whole integrations of a subband (every baseline) before they are serialised, so
/// the flags are in the rows storage-sink writes (a writer in storage-sink would have to
/// hold rows back from its MSs, or rewrite them). add() is thread-safe; the flagging runs
/// in the thread that completes an integration.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "rtcp/CorrelatedBlock.h"
#include "rtcp/FlaggingSettings.h"

namespace rtcp::ion {

class PostCorrelationFlagger {
 public:
  using Emit = std::function<void(std::unique_ptr<CorrelatedData>)>;

  /// With settings.postCorrelation, loads the strategy (rtcp's online strategy, or
  /// settings.strategy); throws std::runtime_error naming
  /// Rtcp.Flagging.postCorrelation.strategy when it cannot be found or loaded.
  PostCorrelationFlagger(const FlaggingSettings& settings, Emit emit);
  ~PostCorrelationFlagger();

  /// Takes an integration of a subband; hands on (emit, in integration order per subband)
  /// those decided.
  void add(std::unique_ptr<CorrelatedData> integration);
  /// Flags and hands on every integration held.
  void flush();

  struct Statistics {
    uint64_t integrations = 0;  ///< handed on
    uint64_t windows = 0;       ///< AOFlagger runs per baseline, summed
    uint64_t visibilities =
        0;  ///< cross-correlation visibilities (baseline × channel) handed on with data
    uint64_t flagged = 0;  ///< of those, flagged here by AOFlagger
    double seconds = 0;    ///< thread time in AOFlagger, the coherence check, the conversions
    /// [station]: the visibilities and AOFlagger's flags above of its cross-correlations
    std::vector<uint64_t> stationVisibilities, stationFlagged;
    /// [station]: subband-integrations in which it was flagged whole as incoherent
    std::vector<uint64_t> incoherent;
  };
  Statistics statistics() const;
  /// The strategy file in use; empty when AOFlagger does not run.
  const std::string& strategyFile() const { return strategyFile_; }

 private:
  struct Subband {
    std::deque<std::unique_ptr<CorrelatedData>> held;  ///< by integration
    int decided = 0;                                   ///< of held, the first `decided` are decided
  };
  /// Flags held[from, to) of a subband, with every held integration as context.
  void flagWindow(Subband& subband, size_t from, size_t to);
  struct Worker;
  /// AOFlagger on each cross-correlation baseline of the window, the baselines shared out
  /// over the workers' threads (this one and postThreads − 1 more).
  void runAoflagger(Subband& subband, size_t from, size_t to);
  /// A worker's images and mask shaped for the window (reallocated only when it changes).
  void prepareImages(Worker& worker, const Subband& subband) const;
  /// One baseline of the window into the worker's images and existing-flag mask; false when
  /// none of its cells holds data.
  bool fillImages(Worker& worker, const Subband& subband, int baseline) const;
  /// One baseline s1-s2 (s1 < s2) of the window into the worker's images, its strategy run,
  /// the flags it finds in held[from, to) set (valid 0, visibility 0) and counted.
  void flagBaseline(Worker& worker, Subband& subband, int s1, int s2, size_t from, size_t to) const;
  /// The coherence check: stations without sky flagged whole in held[from, to).
  void flagIncoherentStations(Subband& subband, size_t from, size_t to);
  void handOn(Subband& subband, size_t count);

  FlaggingSettings settings_;
  Emit emit_;
  std::string strategyFile_;
  struct Aoflagger;
  std::unique_ptr<Aoflagger> aoflagger_;
  mutable std::mutex mutex_;
  std::map<int, Subband> subbands_;
  Statistics statistics_;
};

}  // namespace rtcp::ion
