#include "rtcp/FftwPlanner.h"

namespace rtcp {

std::mutex& fftwPlannerMutex() {
  static std::mutex mutex;
  return mutex;
}

}  // namespace rtcp
