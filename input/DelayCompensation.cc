#include "DelayCompensation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "rtcp/DelayModel.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"

namespace rtcp::ion {

DelayCompensation::DelayCompensation(const ObservationSettings& settings, DelayFunction delays,
                                     int lookahead)
    : settings_(settings),
      delays_(delays ? std::move(delays) : fromSettings(settings)),
      lookahead_(std::max(lookahead, 1)),
      next_(firstProcessedBlock(settings)),
      wanted_(next_ + lookahead_),
      released_(next_),
      thread_([this] { run(); }) {}

DelayCompensation::~DelayCompensation() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    changed_.notify_all();
  }
  thread_.join();
}

DelayFunction DelayCompensation::fromSettings(const ObservationSettings& settings) {
  const int nrStations = settings.nrStations();
  if (!settings.delayCompensation)
    return [nrStations](int, double) { return std::vector<double>(nrStations, 0.0); };
  auto model = std::make_shared<DelayModel>(settings);
  auto beams = settings.beams;
  return
      [model, beams](int beam, double unixTime) { return model->delays(beams.at(beam), unixTime); };
}

BlockDelays DelayCompensation::compute(int64_t block) {
  const SampleClock clock(settings_.clockMHz);
  const double fs = settings_.subbandWidth();
  const int64_t start = settings_.blockStartSample(block);
  const int64_t length = settings_.samplesPerBlock();
  BlockDelays d;
  d.block = block;
  d.nrBeams = int(settings_.beams.size());
  const size_t size = size_t(settings_.nrStations()) * d.nrBeams;
  d.coarse.resize(size);
  d.residualStart.resize(size);
  d.residualEnd.resize(size);
  std::lock_guard lock(delaysMutex_);
  for (int beam = 0; beam < d.nrBeams; ++beam) {
    const auto first = delays_(beam, clock.unixTime(start));
    const auto middle = delays_(beam, clock.unixTime(start) + 0.5 * length / fs);
    const auto last = delays_(beam, clock.unixTime(start + length));
    if (int(first.size()) != settings_.nrStations() || middle.size() != first.size() ||
        last.size() != first.size())
      throw std::runtime_error("delay model gave " + std::to_string(first.size()) + " delays for " +
                               std::to_string(settings_.nrStations()) + " stations");
    for (int s = 0; s < settings_.nrStations(); ++s) {
      const size_t i = d.index(s, beam);
      d.coarse[i] = int32_t(std::llround(middle[s] * fs));
      d.residualStart[i] = first[s] - d.coarse[i] / fs;
      d.residualEnd[i] = last[s] - d.coarse[i] / fs;
    }
  }
  return d;
}

void DelayCompensation::run() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    if (next_ >= wanted_) {
      changed_.wait(lock);
      continue;
    }
    const int64_t block = std::max(next_, released_);
    lock.unlock();
    std::shared_ptr<const BlockDelays> delays;
    std::exception_ptr error;
    try {
      delays = std::make_shared<const BlockDelays>(compute(block));
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error) {
      error_ = error;
      changed_.notify_all();
      return;
    }
    computed_[block] = std::move(delays);
    next_ = block + 1;
    changed_.notify_all();
  }
}

std::shared_ptr<const BlockDelays> DelayCompensation::get(int64_t block) {
  std::unique_lock lock(mutex_);
  if (block + lookahead_ + 1 > wanted_) {
    wanted_ = block + lookahead_ + 1;
    changed_.notify_all();
  }
  if ((block < next_ || block < released_) && !computed_.count(block)) {
    // Released or before the first request: compute it here (rare).
    lock.unlock();
    return std::make_shared<const BlockDelays>(compute(block));
  }
  changed_.wait(lock, [&] { return computed_.count(block) || error_ || stop_; });
  if (error_) std::rethrow_exception(error_);
  if (stop_) throw std::runtime_error("delay compensation stopped");
  return computed_.at(block);
}

void DelayCompensation::release(int64_t block) {
  std::lock_guard lock(mutex_);
  released_ = std::max(released_, block);
  computed_.erase(computed_.begin(), computed_.lower_bound(released_));
}

}  // namespace rtcp::ion
