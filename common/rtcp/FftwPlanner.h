#pragma once
/// \file FftwPlanner.h
/// The one lock around FFTW's planner. FFTW's plan creation and destruction are not
/// thread-safe (its execute functions are); every part of rtcp that makes or destroys a
/// plan, of either precision, holds this lock while it does.

#include <mutex>

namespace rtcp {

/// The process-wide mutex to hold around fftw(f)_plan_* and fftw(f)_destroy_plan.
std::mutex& fftwPlannerMutex();

}  // namespace rtcp
