#pragma once
/// \file ReplayParset.h
/// The parset that replays recordings of an observation's input through the same chain
/// (observe PARSET): the observation's effective parset with every antenna field's
/// RSP.ports set to its recordings (input/InputRecorder.h: FIELD-K.rsp, one per input
/// stream), as fast as the chain goes (Cobalt.realTime = F: the recordings keep their
/// time stamps, so the rows keep theirs), and the MSs and beam-formed files written
/// elsewhere (outputDirectory, under their own names). observe
/// --record-input writes one beside the recordings (replay.parset); a triggered dump
/// one for its window (dump.parset), whose blocks are the live observation's.

#include <cstdint>
#include <optional>
#include <string>

#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"

namespace rtcp {

/// Blocks [firstBlock, firstBlock + nrBlocks) of an observation, and the blocks before
/// them whose samples the recordings also hold to build the beam former's state
/// (beamFormerLeadInBlocks(), rtcp/BeamFormedTiming.h; 0 without beam-formed output).
struct BlockWindow {
  int64_t firstBlock = 0;
  int64_t nrBlocks = 0;
  int64_t leadInBlocks = 0;
};

/// `observed` (the effective parset, whose settings are `s`) replaying the recordings in
/// recordingDirectory into MSs in outputDirectory (on this host); with a window, only
/// those blocks: start and stop such that the replay's block 0 is the observation's
/// firstBlock to the sample (a start time just before that block's first sample), and the
/// window's lead-in as the beam former's (Rtcp.beamFormer.leadInBlocks: the replay runs the
/// beam former over it and writes nothing of it, so that its files cover the window alone
/// with the live samples).
/// std::invalid_argument for a window outside the observation.
Parset replayParset(const Parset& observed, const ObservationSettings& s,
                    const std::string& recordingDirectory, const std::string& outputDirectory,
                    std::optional<BlockWindow> window = std::nullopt);

/// A UTC text of a time in (sample - 1, sample] that parses back to a time whose first
/// sample at or after it is `sample` (formatUtc keeps microseconds; a sample lasts 5.12).
std::string utcOfSample(int clockMHz, int64_t sample);

}  // namespace rtcp
