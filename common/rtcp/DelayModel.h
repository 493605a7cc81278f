#pragma once
/// \file DelayModel.h
/// Geometric delays (DESIGN §2.3): tau_s = (p_s - p_ref) . s_hat / c + instrumental delay,
/// with s_hat the direction (J2000, AZELGEO or a solar-system body, which moves on the sky)
/// converted to ITRF at the given time by casacore measures. tau_s is how much earlier
/// station s receives a wavefront than the reference position does.

#include <array>
#include <memory>
#include <vector>

#include "rtcp/DirectionConverter.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp {

constexpr double kSpeedOfLight = 299792458.0;

/// Holds one casacore conversion engine, built once: not thread-safe, so use one
/// DelayModel per thread. Each call costs a full J2000 -> ITRF conversion (tens of us).
class DelayModel {
 public:
  /// positions: ITRF metres per station; instrumentalDelays: seconds added per station
  /// (empty: all zero; otherwise one per station, or std::invalid_argument).
  DelayModel(std::array<double, 3> referencePosition, std::vector<std::array<double, 3>> positions,
             std::vector<double> instrumentalDelays);
  /// The settings' positions, with ObservationSettings::instrumentalDelay per station.
  explicit DelayModel(const ObservationSettings& settings);
  ~DelayModel();
  DelayModel(DelayModel&&) noexcept;

  /// Unit vector of a direction in ITRF at a Unix time.
  std::array<double, 3> itrfDirection(const Direction& direction, double unixTime) const;
  /// Delays in seconds per station toward a direction at a Unix time.
  std::vector<double> delays(const Direction& direction, double unixTime) const;
  int nrStations() const { return int(positions_.size()); }

 private:
  std::array<double, 3> reference_;
  std::vector<std::array<double, 3>> positions_;
  std::vector<double> instrumentalDelays_;
  std::unique_ptr<DirectionConverter> converter_;  // casacore frame and conversion engines
};

}  // namespace rtcp
