#include "UvwCalculator.h"

#include <casacore/casa/Quanta/MVDirection.h>
#include <casacore/measures/Measures/MEpoch.h>
#include <casacore/measures/Measures/Muvw.h>

namespace rtcp::storage {

UvwCalculator::UvwCalculator(const std::array<double, 3>& reference,
                             const std::vector<std::array<double, 3>>& positions, double ra,
                             double dec)
    : phaseCentre_(casacore::MVDirection(ra, dec), casacore::MDirection::J2000) {
  const casacore::MPosition array(casacore::MVPosition(reference[0], reference[1], reference[2]),
                                  casacore::MPosition::ITRF);
  frame_.set(array);
  frame_.set(phaseCentre_);
  frame_.set(casacore::MEpoch(casacore::MVEpoch(51544.5), casacore::MEpoch::UTC));
  const casacore::MVPosition origin = array.getValue();
  for (const auto& p : positions)
    offsets_.emplace_back(casacore::MVPosition(p[0], p[1], p[2]), origin);
  toJ2000_ = casacore::MBaseline::Convert(casacore::MBaseline::Ref(casacore::MBaseline::ITRF, frame_),
                                          casacore::MBaseline::Ref(casacore::MBaseline::J2000));
}

std::vector<std::array<double, 3>> UvwCalculator::stationUvw(double mjdSeconds) {
  frame_.resetEpoch(casacore::MEpoch(casacore::MVEpoch(mjdSeconds / 86400.0), casacore::MEpoch::UTC));
  const casacore::MVDirection direction = phaseCentre_.getValue();
  std::vector<std::array<double, 3>> uvw;
  uvw.reserve(offsets_.size());
  for (const casacore::MVBaseline& offset : offsets_) {
    const casacore::MVuvw station(toJ2000_(offset).getValue(), direction);
    const casacore::Vector<double> v = station.getValue();
    uvw.push_back({v[0], v[1], v[2]});
  }
  return uvw;
}

}  // namespace rtcp::storage
