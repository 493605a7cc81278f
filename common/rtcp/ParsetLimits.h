#pragma once
/// \file ParsetLimits.h
/// Sizes beyond any observation's: a parset that exceeds them is refused with an error
/// naming the line or key, before anything is sized from it (or checked element by
/// element). LOFAR's largest: 77 antenna fields (HBA_DUAL), 244 beams of one subband, 976
/// beamlets (4-bit), lines of a few kB (a list of 488 subbands or beamlets).

#include <cstddef>

namespace rtcp {

/// The longest line, or value continued over lines, of a parset.
constexpr size_t kMaxParsetLineBytes = size_t(1) << 20;
/// The most entries of Observation.VirtualInstrument.stationList.
constexpr size_t kMaxStationListEntries = 1024;
/// The most subbands of all beams together.
constexpr int kMaxSubbands = 4096;
/// The most beams (Observation.nrBeams).
constexpr int kMaxBeams = 1024;

}  // namespace rtcp
