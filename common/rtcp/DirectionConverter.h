#pragma once
/// \file DirectionConverter.h
/// A beam or source direction (J2000, AZELGEO, or a solar-system body such as SUN, MOON,
/// JUPITER) at a time, as casacore measures give it: a unit vector in ITRF (for delays),
/// or J2000 angles (for UVW and the MS FIELD of a direction that moves on the sky).
/// Conversion engines are built once per direction type; not thread-safe (one converter
/// per thread).

#include <array>
#include <map>
#include <memory>
#include <string>

#include "rtcp/ObservationSettings.h"

namespace rtcp {

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
  std::unique_ptr<Engines> engines_;
};

}  // namespace rtcp
