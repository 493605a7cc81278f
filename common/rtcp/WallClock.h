#pragma once
/// \file WallClock.h
/// The current time in Unix seconds (the system clock, UTC): what start and stop times,
/// RSP timestamps and deadlines are compared with.

#include <chrono>

namespace rtcp {

inline double wallClock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace rtcp
