#pragma once
/// \file Direction.h
/// A direction on the sky (or the ground) in one of casacore's direction frames.

#include <string>

namespace rtcp {

/// A direction in one of casacore's direction frames, angles in radians.
struct Direction {
  double ra = 0;   ///< angle1: RA (J2000), azimuth (AZELGEO); unused for SUN, MOON, ...
  double dec = 0;  ///< angle2: Dec (J2000), elevation (AZELGEO); unused for SUN, MOON, ...
  std::string type = "J2000";  ///< J2000, AZELGEO, or a solar-system body (SUN, MOON, ...)
  /// True for a direction fixed on the sky (J2000): no conversion per time is needed
  /// to give its J2000 coordinates.
  bool isJ2000() const { return type == "J2000"; }
  bool operator==(const Direction&) const = default;
};

}  // namespace rtcp
