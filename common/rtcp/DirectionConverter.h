#pragma once
/// \file DirectionConverter.h
/// A beam or source direction (J2000, AZELGEO, or a solar-system body such as SUN, MOON,
/// JUPITER) at a time, as casacore measures give it: a unit vector in ITRF (for delays),
/// or J2000 angles (for UVW and the MS FIELD of a direction that moves on the sky).
/// Conversion engines are built per direction type; not thread-safe (one converter per
/// thread).
///
/// A conversion is a function of its direction and time alone, to the last bit: casacore's
/// engines compute nutation, precession, aberration and the sun's position at the first
/// epoch they are asked and extrapolate them linearly from there for up to 0.04-0.1 days
/// (aipsrc measures.*.d_interval), so an engine asked first at another time gives delays
/// differing by about 1e-18 s, and a replay of part of an observation other visibility bits
/// than the live observation. The engines (and their frame) are made anew at each multiple
/// of kEpochAnchorSeconds of Unix time and first asked at that epoch.

#include <array>
#include <map>
#include <memory>
#include <string>

#include "rtcp/ObservationSettings.h"

namespace rtcp {

/// The grid of epochs casacore's engines extrapolate from (far inside casacore's 0.04 d).
constexpr double kEpochAnchorSeconds = 600;

class DirectionConverter {
 public:
  /// position: ITRF metres of the observer (AZELGEO directions are local to it).
  explicit DirectionConverter(std::array<double, 3> position);
  ~DirectionConverter();
  DirectionConverter(DirectionConverter&&) noexcept;
  DirectionConverter& operator=(DirectionConverter&&) noexcept;

  /// Unit vector of the direction in ITRF at a Unix time. Throws std::runtime_error when
  /// casacore cannot convert it (a solar-system body without casacore's JPL tables).
  std::array<double, 3> itrf(const Direction& direction, double unixTime);
  /// The direction as J2000 RA/Dec at a Unix time (itself for a J2000 direction).
  Direction j2000(const Direction& direction, double unixTime);
  /// Throws std::invalid_argument when casacore does not know the direction type.
  static void checkType(const std::string& type);

 private:
  struct Engines;
  /// The engines anchored at the multiple of kEpochAnchorSeconds at or before unixTime.
  Engines& enginesAt(double unixTime);

  std::array<double, 3> position_;
  std::unique_ptr<Engines> engines_;
};

}  // namespace rtcp
