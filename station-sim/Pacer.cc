#include "Pacer.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace rtcp::sim {

double Pacer::now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void Pacer::waitUntil(double dataTime) {
  const double due = dataTime + offset_;
  const double early = due - now();
  if (early > kSlack) {
    std::this_thread::sleep_for(std::chrono::duration<double>(early));
    burst_ = 0;
    return;
  }
  maxLateness_ = std::max(maxLateness_, -early);
  if (++burst_ >= kMaxBurst) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    burst_ = 0;
  }
}

}  // namespace rtcp::sim
