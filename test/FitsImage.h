#pragma once
// Shared by the storage-sink and observe tests (test library rtcp_test_imaging).
// A tiny reader for the 2-D (or degenerate 4-D) float images WSClean writes, with the
// SIN-projection world coordinates of a pixel.

#include <string>
#include <vector>

namespace rtcp::test {

struct FitsImage {
  int width = 0, height = 0;
  std::vector<float> pixels;                                                      // [y][x]
  double crpix1 = 0, crpix2 = 0, cdelt1 = 0, cdelt2 = 0, crval1 = 0, crval2 = 0;  // degrees

  static FitsImage read(const std::string& path);  ///< throws std::runtime_error
  /// J2000 RA and Dec (radians) of a 0-based pixel (x, y), SIN projection.
  void worldOf(double x, double y, double& ra, double& dec) const;

  /// The brightest pixel: its value and J2000 direction (radians).
  struct Peak {
    float value = 0;
    double ra = 0, dec = 0;
  };
  Peak peak() const;
};

/// Angle between two J2000 directions (radians).
double angularDistance(double ra1, double dec1, double ra2, double dec2);

}  // namespace rtcp::test
