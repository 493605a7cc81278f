#pragma once
/// \file PacketCounts.h
/// The packets a station's inputs should bring: which of its RSP.ports carry a subband of
/// the observation, and how many packets one stream sends over start..stop, or per second
/// (for the summary and for the console's live loss).

#include <cstdint>
#include <vector>

#include "rtcp/ObservationSettings.h"

namespace rtcp::observe {

/// Whether each input of a station carries a subband of the observation (a port that
/// carries none is not expected to send anything).
std::vector<bool> carryingInputs(const ObservationSettings& s, int station);
/// Packets of one input stream covering start..stop (as station-sim sends them).
uint64_t packetsPerStream(const ObservationSettings& s);
/// Packets one input stream sends per second.
double packetsPerStreamSecond(const ObservationSettings& s);

}  // namespace rtcp::observe
