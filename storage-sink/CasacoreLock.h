#pragma once
/// \file CasacoreLock.h
/// casacore's table cache and measures tables are shared by every thread of the process:
/// opening, creating and closing tables and converting measures happen under this mutex.
/// (Writing the cells of different tables does not need it.)

#include <mutex>

namespace rtcp::storage {

inline std::mutex& casacoreMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace rtcp::storage
