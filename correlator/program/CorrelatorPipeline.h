#pragma once
/// \file CorrelatorPipeline.h
/// One compute rank's pipeline (COBALT style), two threads joined by a Pool of
/// preallocated block sets:
///
///   main thread:       fetch own stations' block  ->  exchange  ->  pool.filled
///   processing thread: pool.filled  ->  SubbandProcessor per local subband  ->  output
///                      (and, for a beam-formed observation, BeamFormerProcessor on the
///                      same blocks  ->  output.writeBeamFormed)  ->  pool.free
///
/// A beam former's lead-in (BeamFormedSettings::leadInBlocks: a dump's replay) comes first:
/// blocks -leadInBlocks .. -1 (firstProcessedBlock) go through the beam former alone, to
/// build its per-subband state, and nothing of them is correlated or written.
///
/// Only the main thread calls MPI (MPI_THREAD_FUNNELED). While the processing thread
/// correlates block b, the main thread already fetches and exchanges block b + 1, up to
/// `queueBlocks` sets ahead.
///
/// When every rank takes its blocks from ionproc's shared memory (the fetcher
/// lendsSubbands()), there is no exchange: the main thread asks ionproc for the rank's
/// own range of subbands of every station, lent in place under the set's number as lease
/// (a set's blocks stay valid until the set is filled again), and the processing thread
/// reads them where ionproc served them.

#include <mpi.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "PreCorrelationFlagger.h"
#include "SharedMemoryTranspose.h"
#include "StationBlockFetcher.h"
#include "Transpose.h"
#include "VisibilityOutput.h"
#include "WorkDistribution.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Queue.h"
#include "rtcp/StationBlock.h"
#include "rtcp/StepTimes.h"

namespace rtcp::correlator {
class SubbandProcessor;
namespace beamformed {
class BeamFormerProcessor;
}  // namespace beamformed
}  // namespace rtcp::correlator

namespace rtcp::correlator {

class CorrelatorPipeline {
 public:
  struct Options {
    int queueBlocks = 2;  ///< exchanged block sets that may wait for processing
    int nrThreads = 0;    ///< OpenMP threads of the signal chain; 0: OpenMP's default
    /// Ranks all on one node exchange through MPI-3 shared memory (SharedMemoryTranspose)
    /// unless false: then, and across nodes, through MPI messages (Transpose).
    bool sharedMemoryExchange = true;
    /// Every rank lends its own subbands of every station from ionproc's shared memory
    /// (no exchange) when the fetcher can, on every rank; false: fetch and exchange.
    bool lentSubbands = true;
  };
  struct Statistics {
    int64_t blocks = 0;              ///< blocks exchanged (the lead-in's not counted)
    int64_t leadInBlocks = 0;        ///< lead-in blocks through the beam former alone
    double leadInSeconds = 0;        ///< processing thread busy with them
    int64_t subbandBlocks = 0;       ///< (subband, block) pairs this rank correlated
    double processingSeconds = 0;    ///< processing thread busy time (the lead-in's not)
    double fetchSeconds = 0;         ///< main thread waiting for its stations' blocks
    double exchangeWaitSeconds = 0;  ///< main thread waiting for the other ranks
    double exchangeSeconds = 0;      ///< transfers of the all-to-all
    uint64_t bytesExchanged = 0;     ///< sent to other ranks
    double wallSeconds = 0;
    StepTimes steps;  ///< the signal chain's time per step (SubbandProcessor)
    /// Beam-formed observations (settings.beamFormed.enabled()): the subband-blocks the
    /// beam former ran on, and its time per step (BeamFormerProcessor).
    int64_t beamFormedSubbandBlocks = 0;
    StepTimes beamFormerSteps;
    /// Pre-correlation flagging (settings.flagging), per input station; empty when off.
    /// The correlator's chain's (SubbandProcessor), or without correlated output the beam
    /// former's (it flags its own delay-compensation channels).
    std::vector<StationFlagTotals> flags;
    /// The beam former's flagging when the correlator's chain ran too (else empty).
    std::vector<StationFlagTotals> beamFormerFlags;
  };

  CorrelatorPipeline(const ObservationSettings& settings, MPI_Comm comm,
                     StationBlockFetcher& fetcher, VisibilityOutput& output, Options options);

  /// Runs every block of the observation; rethrows the first failure of either thread.
  void run();
  const Statistics& statistics() const { return statistics_; }
  /// How far the processing thread is, for the rank's --status while run() runs.
  /// Thread-safe.
  struct Progress {
    int64_t blocks = 0;            ///< block sets processed
    int64_t subbandBlocks = 0;     ///< (subband, block) pairs correlated
    double processingSeconds = 0;  ///< the processing thread busy
    StepTimes steps;               ///< the signal chain's time per step so far
    /// Beam-formed observations: each TAB's (SAP, TAB) mean power in the newest block,
    /// averaged over this rank's subbands (rtcp::meanPower), and that block.
    std::map<std::pair<int, int>, double> tabPower;
    int64_t tabBlock = -1;
  };
  Progress progress() const;
  const WorkDistribution& distribution() const { return distribution_; }
  /// True when the ranks lend their subbands from ionproc and exchange nothing.
  bool lendsSubbands() const { return lentSubbands_; }
  /// How the ranks get each other's stations, for the log.
  std::string exchangeDescription() const;
  /// Waits and empty pops of the pool between the main and the processing thread.
  std::string queueReport() const { return pool_.report(); }

 private:
  /// One block of every station, holding this rank's share of the subbands.
  struct BlockSet {
    int64_t block = -1;
    int index = 0;  ///< the set's number (in SharedMemoryTranspose's window)
    std::vector<std::unique_ptr<StationBlock>> stations;  ///< [station]; empty: in the window
    std::vector<const StationBlock*> pointers;            ///< [station], for process()
    std::vector<int> subbands;                            ///< [local subband] -> subband index
  };

  void fetchAndExchange();
  void lendOwnSubbands();
  /// The beam former of a beam-formed observation (else null), with this rank's subbands
  /// prepared.
  std::unique_ptr<beamformed::BeamFormerProcessor> makeBeamFormer() const;
  void process(SubbandProcessor& processor, beamformed::BeamFormerProcessor* beamFormer);
  /// A lead-in block set: its subbands through the beam former, the outputs dropped.
  void leadIn(const BlockSet& blocks, beamformed::BeamFormerProcessor& beamFormer,
              std::map<int, std::vector<BeamFormedData>>& outputs);

  const ObservationSettings& settings_;
  MPI_Comm comm_;
  int rank_ = 0;
  StationBlockFetcher& fetcher_;
  VisibilityOutput& output_;
  Options options_;
  WorkDistribution distribution_;
  Transpose transpose_;
  std::unique_ptr<SharedMemoryTranspose> shared_;  ///< null: exchange through transpose_
  bool lentSubbands_ = false;                      ///< no exchange: lendOwnSubbands()
  std::vector<int> ownStations_;
  std::vector<std::unique_ptr<StationBlock>> fetched_;  ///< [own station], every subband
  Pool<BlockSet> pool_{"exchanged"};
  Statistics statistics_;
  mutable std::mutex progressMutex_;
  Progress progress_;                     ///< guarded by progressMutex_
  const StepTimes* liveSteps_ = nullptr;  ///< the processor's, while process() runs
};

}  // namespace rtcp::correlator
