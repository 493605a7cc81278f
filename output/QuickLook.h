#pragma once
/// \file QuickLook.h
/// What the operator's console (observe --console) draws of the data themselves, taken
/// from the integrations as they leave the output path rather than read back from the
/// MSs: of one subband (the middle one of the observation's list), the newest
/// integration's autocorrelation spectrum of every station (XX + YY power per channel)
/// and the amplitude and phase (XX + YY) per channel of up to kBaselines cross baselines,
/// as one small JSON object (observe/README.md, "The console": `quickLook`). One
/// subband's integration in a few microseconds, once per integration time: nothing the
/// chain would notice.

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "rtcp/CorrelatedBlock.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {

class QuickLook {
 public:
  static constexpr int kBaselines = 3;
  explicit QuickLook(const ObservationSettings& settings);

  /// Keeps what the console shows of an integration of the quick-look subband (others
  /// are ignored). Thread-safe.
  void take(const CorrelatedData& integration);
  /// Integrations taken so far: the JSON changes when this does.
  uint64_t version() const;
  /// The newest quick look as one line of JSON; "" before the first integration.
  std::string json() const;

  /// The subband index shown (the middle of the observation's list).
  int subbandIndex() const { return subbandIndex_; }
  /// The cross baselines shown, as station pairs: the first station with the second, the
  /// middle and the last (as far as there are stations).
  const std::vector<std::pair<int, int>>& baselines() const { return baselines_; }

 private:
  std::vector<std::string> stationNames_;
  int subbandIndex_ = 0;
  int subbandNumber_ = 0;
  double startTime_ = 0, integrationSeconds_ = 0;
  std::vector<std::pair<int, int>> baselines_;
  mutable std::mutex mutex_;
  uint64_t version_ = 0;
  int64_t integration_ = -1;
  int nrChannels_ = 0;
  std::vector<float> autoPower_;                 ///< [station][channel]
  std::vector<float> amplitude_, phaseDegrees_;  ///< [baseline of baselines_][channel]
  std::vector<float> validFraction_;             ///< [station]: of the autocorrelation's samples
};

}  // namespace rtcp::ion
