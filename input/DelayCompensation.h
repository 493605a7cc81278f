#pragma once
/// \file DelayCompensation.h
/// Per-station delays at every block boundary (DESIGN §2.3), computed ahead of time in a
/// thread of their own so that serving a block never waits on casacore.

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {

/// Delays tau_s (seconds, per station of the observation) toward beam `beam` at a Unix time.
using DelayFunction = std::function<std::vector<double>(int beam, double unixTime)>;

/// The delays of one block, per station and beam.
struct BlockDelays {
  int64_t block = 0;
  int nrBeams = 0;
  std::vector<int32_t> coarse;        ///< [station][beam]: n_s = round(tau_s * fs) at the middle
  std::vector<double> residualStart;  ///< [station][beam]: tau_s - n_s / fs at the block start
  std::vector<double> residualEnd;    ///< [station][beam]: tau_s - n_s / fs at the block end

  size_t index(int station, int beam) const { return size_t(station) * nrBeams + beam; }
};

class DelayCompensation {
 public:
  /// settings must outlive this object. delays: injected delay function; empty = rtcp::DelayModel
  /// of the settings (or zeros when OLAP.delayCompensation = F). lookahead: blocks computed ahead
  /// of the newest request.
  DelayCompensation(const ObservationSettings& settings, DelayFunction delays = {},
                    int lookahead = 4);
  ~DelayCompensation();
  DelayCompensation(const DelayCompensation&) = delete;
  DelayCompensation& operator=(const DelayCompensation&) = delete;

  /// The delays of a block; waits for the thread if it has not got there yet.
  std::shared_ptr<const BlockDelays> get(int64_t block);
  /// Blocks before `block` will not be asked for again (they are dropped).
  void release(int64_t block);
  /// The delay function of the settings: DelayModel, or zeros without compensation.
  static DelayFunction fromSettings(const ObservationSettings& settings);

 private:
  BlockDelays compute(int64_t block);
  void run();

  const ObservationSettings& settings_;
  DelayFunction delays_;
  std::mutex delaysMutex_;  ///< the delay function (casacore) is used by one thread at a time
  int lookahead_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<int64_t, std::shared_ptr<const BlockDelays>> computed_;
  int64_t next_;    ///< the next block the thread computes (first: firstProcessedBlock)
  int64_t wanted_;  ///< the thread computes blocks below this
  int64_t released_;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace rtcp::ion
