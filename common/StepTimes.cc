#include "rtcp/StepTimes.h"

#include <iomanip>
#include <sstream>

namespace rtcp {

StepTimes::StepTimes(std::vector<std::string> names)
    : names_(std::move(names)),
      nanoseconds_(std::make_unique<std::atomic<int64_t>[]>(names_.size())),
      calls_(std::make_unique<std::atomic<uint64_t>[]>(names_.size())) {
  for (size_t i = 0; i < names_.size(); ++i) {
    nanoseconds_[i] = 0;
    calls_[i] = 0;
  }
}

StepTimes::StepTimes(const StepTimes& other) : StepTimes(other.names_) {
  for (size_t i = 0; i < names_.size(); ++i) {
    nanoseconds_[i] = other.nanoseconds_[i].load(std::memory_order_relaxed);
    calls_[i] = other.calls_[i].load(std::memory_order_relaxed);
  }
}

StepTimes& StepTimes::operator=(const StepTimes& other) {
  if (this == &other) return *this;
  StepTimes copy(other);
  names_.swap(copy.names_);
  nanoseconds_.swap(copy.nanoseconds_);
  calls_.swap(copy.calls_);
  return *this;
}

double StepTimes::seconds(size_t step) const {
  return 1e-9 * double(nanoseconds_[step].load(std::memory_order_relaxed));
}

uint64_t StepTimes::calls(size_t step) const {
  return calls_[step].load(std::memory_order_relaxed);
}

double StepTimes::totalSeconds() const {
  double total = 0;
  for (size_t i = 0; i < size(); ++i) total += seconds(i);
  return total;
}

std::string StepTimes::report() const {
  std::ostringstream out;
  out << std::fixed;
  for (size_t i = 0; i < size(); ++i) {
    const uint64_t n = calls(i);
    out << (i ? ", " : "") << names_[i] << " " << std::setprecision(3) << seconds(i) << " s (" << n
        << " x " << std::setprecision(3) << (n ? 1e3 * seconds(i) / double(n) : 0.0) << " ms)";
  }
  return out.str();
}

}  // namespace rtcp
