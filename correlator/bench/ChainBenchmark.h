#pragma once
/// \file ChainBenchmark.h
/// The whole signal chain's speed (SubbandProcessor, 16-bit input, 64 channels, one
/// thread), for rtcp-bench filterbank and for the capacity benchmark's prediction.

#include "rtcp/FlaggingSettings.h"
#include "rtcp/StepTimes.h"

namespace rtcp::correlator::bench {

/// Subbands of nrStations stations one core processes in real time, hot: the same
/// one-subband StationBlocks every call, so the input comes from cache. steps (optional):
/// the processor's step times. flagging (optional): the online flagging it runs (none).
double chainSubbandsPerCore(int nrStations, StepTimes* steps = nullptr,
                            const FlaggingSettings* flagging = nullptr);

/// Subbands per block of a rank in the chain figures: 48 subbands over 2 ranks.
constexpr int kChainSubbandsPerBlock = 24;

/// The chain in the correlator program's condition, cold: each station's StationBlock
/// holds subbandsPerBlock subbands (a rank's share) in shared memory read through a
/// read-only mapping, as a rank's slot is; the subbands are processed one after the other
/// as CorrelatorPipeline does, round-robin over enough block sets (twice the last-level
/// cache) that every input comes from memory.
struct ColdChainFigures {
  /// Subbands per core once every page has been read through the mapping before (the
  /// steady state of a long run: slots reused), best of several rounds.
  double subbandsPerCore = 0;
  /// The first pass over the sets, each page read through the mapping for the first time.
  double firstTouchSubbandsPerCore = 0;
  StepTimes steps, firstTouchSteps;  ///< the processors' step times of each
};
ColdChainFigures chainSubbandsPerCoreCold(int nrStations, int subbandsPerBlock);

}  // namespace rtcp::correlator::bench
