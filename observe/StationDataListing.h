#pragma once
/// \file StationDataListing.h
/// The station data an observation kept, for its summary (StationDataSummary): the
/// recording of its live input (observe --record-input) and the dumps rtcp-trigger wrote,
/// each with its size on disk, the window its parset replays (UTC, stations, subbands) and
/// what it lacks (packets not recorded; a dump's parts gone from the buffer or not received,
/// from rtcp-trigger's dump.answer).

#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/ObservationSummary.h"

namespace rtcp::observe {

/// The recordings (*.rsp) in `directory`: their bytes on disk.
uint64_t recordingBytes(const std::string& directory);

/// The recording of the live input in `directory`: the whole observation `s`, the
/// stations' packets recorded and not recorded as ionproc counted them.
StationDataSummary describeRecording(const std::string& directory, const ObservationSettings& s,
                                     const std::vector<StationSummary>& stations);

/// A dump rtcp-trigger wrote into `directory` (its dump.parset, dump.answer and recordings),
/// its window from the first sample of its first block to the end of its last;
/// std::runtime_error naming the file when dump.parset cannot be read. Without dump.answer
/// (rtcp-trigger stopped before its end) the status is "unknown" and the counts are 0.
StationDataSummary describeDump(const std::string& directory);

}  // namespace rtcp::observe
