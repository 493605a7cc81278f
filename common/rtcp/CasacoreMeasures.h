#pragma once
/// \file CasacoreMeasures.h
/// The casacore measures rtcp uses (epochs, directions, positions, baselines, uvw,
/// frequencies, frames and their conversion engines) in one include, and the conversion
/// of Unix times to and from casacore epochs. Only the parts that convert coordinates
/// include it (common's DirectionConverter and CasacoreMeasures.cc, storage-sink's MS side).
/// Conversions need the C++20-compatible Allocator.h that the target rtcp_casacore puts
/// first on the include path (common/casacore-cxx20); link rtcp_casacore to get it.

#include <casacore/casa/Quanta/MVEpoch.h>
#include <casacore/casa/Quanta/MVPosition.h>
#include <casacore/measures/Measures/MBaseline.h>
#include <casacore/measures/Measures/MCBaseline.h>
#include <casacore/measures/Measures/MCDirection.h>
#include <casacore/measures/Measures/MCEpoch.h>
#include <casacore/measures/Measures/MCFrequency.h>
#include <casacore/measures/Measures/MCPosition.h>
#include <casacore/measures/Measures/MCuvw.h>
#include <casacore/measures/Measures/MDirection.h>
#include <casacore/measures/Measures/MEpoch.h>
#include <casacore/measures/Measures/MFrequency.h>
#include <casacore/measures/Measures/MPosition.h>
#include <casacore/measures/Measures/MeasConvert.h>
#include <casacore/measures/Measures/MeasFrame.h>
#include <casacore/measures/Measures/Muvw.h>

#include <mutex>  // casacore 3.5's MC*.h use std::once_flag without including <mutex>

namespace rtcp {

/// Unix seconds (UTC) to and from casacore epochs (UTC, MJD seconds).
casacore::MEpoch toEpoch(double unixTime);
double toUnixTime(const casacore::MEpoch& epoch);

}  // namespace rtcp
