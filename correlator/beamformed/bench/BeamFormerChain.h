#pragma once
/// \file BeamFormerChain.h
/// The beam former's speed on an observation's own settings, for the capacity benchmark's
/// prediction (rtcp-bench capacity --beamformed): subbands one core beam-forms in real time.

#include "rtcp/ObservationSettings.h"
#include "rtcp/StepTimes.h"

namespace rtcp::correlator::beamformed::bench {

/// Subbands of `settings` (its stations, blocks, TABs, Stokes and dedispersion:
/// settings.beamFormed) that one core beam-forms in real time: BeamFormerProcessor on one
/// thread over random 16-bit blocks of the first subband, hot (the same blocks each call),
/// per second of the thread's CPU, consecutive blocks (the dedispersion's history
/// carried). steps (optional): the processor's step times.
double beamFormerSubbandsPerCore(const ObservationSettings& settings, StepTimes* steps = nullptr);

}  // namespace rtcp::correlator::beamformed::bench
