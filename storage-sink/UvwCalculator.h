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
/// A phase centre that moves on the sky (a solar-system body, AZELGEO) is taken at each
/// epoch as casacore gives it in J2000 then.

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

#include "rtcp/DirectionConverter.h"

namespace rtcp::storage {

class UvwCalculator {
 public:
  /// positions: ITRF metres per station; phaseCentre: the beam direction (radians).
  UvwCalculator(const std::array<double, 3>& reference,
                const std::vector<std::array<double, 3>>& positions, const Direction& phaseCentre);

  /// uvw[station] in metres (J2000) at a UTC time in MJD seconds.
  std::vector<std::array<double, 3>> stationUvw(double mjdSeconds);

  /// The calculator of these parameters that is alive in this process, or a new one.
  /// Not thread-safe, like casacore's measures: callers serialise all uses.
  static std::shared_ptr<UvwCalculator> shared(const std::array<double, 3>& reference,
                                               const std::vector<std::array<double, 3>>& positions,
                                               const Direction& phaseCentre);

 private:
  using Rotation = std::array<std::array<double, 3>, 3>;  // [uvw][ITRF x, y, z]
  Rotation rotation(double mjdSeconds);

  Direction centre_;                            // as the parset gives it
  std::unique_ptr<DirectionConverter> moving_;  // J2000 per epoch, for a moving centre
  casacore::MDirection phaseCentre_;            // J2000 (of the latest epoch, if moving)
  casacore::MeasFrame frame_;
  std::vector<std::array<double, 3>> offsets_;  // [station][xyz], ITRF offsets from the reference
  casacore::MBaseline::Convert toJ2000_;        // ITRF -> J2000 in frame_
  std::map<double, Rotation> recent_;           // [MJD seconds], the last kRecentEpochs
};

}  // namespace rtcp::storage
