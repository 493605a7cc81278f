#pragma once
/// \file UvwCalculator.h
/// Per-station J2000 UVW coordinates toward a phase centre, computed as DP3's
/// UVWCalculator does: each station's ITRF offset from the array reference is an
/// MBaseline converted to J2000 at the epoch and turned into Muvw. A baseline's
/// UVW is uvw(s2) - uvw(s1), the convention of casacore's TaQL mscal.uvwj2000.
///
/// Both steps are rotations, so per epoch only the three ITRF axes go through
/// casacore; every station is then one 3x3 matrix product (the measures conversion
/// per station cost more than writing its visibilities). The rotations of recent
/// epochs are kept: the writers of a beam's subbands share one calculator (shared()).

#include <casacore/measures/Measures/MBaseline.h>
#include <casacore/measures/Measures/MCBaseline.h>
#include <casacore/measures/Measures/MDirection.h>
#include <casacore/measures/Measures/MPosition.h>
#include <casacore/measures/Measures/MeasConvert.h>
#include <casacore/measures/Measures/MeasFrame.h>

#include <array>
#include <map>
#include <memory>
#include <vector>

namespace rtcp::storage {

class UvwCalculator {
 public:
  /// positions: ITRF metres per station; phaseCentre: J2000 RA, Dec in radians.
  UvwCalculator(const std::array<double, 3>& reference,
                const std::vector<std::array<double, 3>>& positions, double ra, double dec);

  /// uvw[station] in metres (J2000) at a UTC time in MJD seconds.
  std::vector<std::array<double, 3>> stationUvw(double mjdSeconds);

  /// The calculator of these parameters that is alive in this process, or a new one.
  /// Not thread-safe, like casacore's measures: callers serialise all uses.
  static std::shared_ptr<UvwCalculator> shared(const std::array<double, 3>& reference,
                                               const std::vector<std::array<double, 3>>& positions,
                                               double ra, double dec);

 private:
  using Rotation = std::array<std::array<double, 3>, 3>;  // [uvw][ITRF x, y, z]
  Rotation rotation(double mjdSeconds);

  casacore::MDirection phaseCentre_;
  casacore::MeasFrame frame_;
  std::vector<std::array<double, 3>> offsets_;  // [station][xyz], ITRF offsets from the reference
  casacore::MBaseline::Convert toJ2000_;        // ITRF -> J2000 in frame_
  std::map<double, Rotation> recent_;           // [MJD seconds], the last kRecentEpochs
};

}  // namespace rtcp::storage
