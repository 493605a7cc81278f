#pragma once
/// \file FlaggingReport.h
/// The online flaggers' final report lines (each rank's pre-correlation counts and broken
/// stations, correlator/program/correlator.cc; the output path's post-correlation counts and
/// incoherent stations, output/OutputPath.cc) added up per station into the summary:
/// StationSummary::preCorrelationFlagged, postCorrelationFlagged, brokenSubbandBlocks,
/// incoherentIntegrations (common/rtcp/ObservationSummary.h).

#include <string>
#include <vector>

#include "rtcp/ObservationSummary.h"

namespace rtcp::observe {

/// Reads `lines` (as Observation takes them from the parts' logs) and sets the flagging
/// figures of the stations they name; a station no line names keeps zeros.
void addFlaggingReports(const std::vector<std::string>& lines,
                        std::vector<StationSummary>& stations);

}  // namespace rtcp::observe
