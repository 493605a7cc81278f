#pragma once
/// \file StationDump.h
/// A triggered dump: a window of the stations' samples, as ionproc's circular buffers
/// still hold them, written back into recordings (InputRecorder, station-sim's format:
/// RSP packets of 16 samples of the stream's beamlets), without disturbing the running
/// observation (CircularSampleBuffer::peek: nothing marked served, nothing pinned; the
/// disk written behind). The window grows to whole integrations of the observation,
/// with the filter history and the coarse delays around them, so that a replay of the
/// dump (ReplayParset.h, its blocks the observation's) computes the same rows; with
/// beam-formed outputs also the blocks before the window that build the beam former's
/// state (its lead-in, beamFormerLeadInBlocks()), so that the replay's beam-formed samples
/// are the live ones too.

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "InputRecorder.h"
#include "StationInput.h"

namespace rtcp::ion {

struct DumpRequest {
  double from = 0, to = 0;    ///< UTC (Unix seconds), from < to
  std::vector<int> stations;  ///< observation station indices; empty: every one served here
  std::string directory;      ///< absolute; made, must not hold recordings
  size_t bufferBytes = size_t(32) << 20;  ///< InputRecorder chunks (the dump waits for the disk)
};

/// A part of the window a stream's dump lacks.
struct DumpGap {
  std::string station;
  int stream = 0;
  int64_t firstSample = 0, endSample = 0;
  std::string why;  ///< "gone from the buffer", "not received"
};

struct DumpResult {
  /// The observation's blocks the dump replays (whole integrations overlapping the window)
  int64_t firstBlock = 0, nrBlocks = 0;
  /// Blocks before firstBlock dumped for the beam former's state: beamFormerLeadInBlocks(),
  /// or fewer where the observation processed fewer before firstBlock (a replay from
  /// there starts where the observation did)
  int64_t leadInBlocks = 0;
  int64_t firstSample = 0, endSample = 0;   ///< the samples dumped, margins included
  std::vector<RecordingCounts> recordings;  ///< station by station, stream by stream
  std::vector<DumpGap> gaps;                ///< gone parts; runs of packets not received
  bool complete() const;                    ///< nothing gone and every recording written whole
};

/// The blocks of whole integrations overlapping [from, to), clipped to the observation;
/// std::invalid_argument when none.
std::pair<int64_t, int64_t> dumpBlocks(const ObservationSettings& s, double from, double to);

/// Writes the window; waits until its samples may be served (real time: the latency past
/// its end) or the input stops. std::invalid_argument for a bad request, StreamError when
/// a recording cannot be made.
DumpResult dumpStations(StationInput& input, const DumpRequest& request);

}  // namespace rtcp::ion
