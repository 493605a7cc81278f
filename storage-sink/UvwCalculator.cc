#include "UvwCalculator.h"

#include <casacore/casa/Quanta/MVDirection.h>
#include <casacore/measures/Measures/MEpoch.h>
#include <casacore/measures/Measures/Muvw.h>

#include <tuple>

namespace rtcp::storage {

UvwCalculator::UvwCalculator(const std::array<double, 3>& reference,
                             const std::vector<std::array<double, 3>>& positions,
                             const Direction& phaseCentre)
    : centre_(phaseCentre),
      moving_(phaseCentre.isJ2000() ? nullptr : std::make_unique<DirectionConverter>(reference)),
      phaseCentre_(casacore::MVDirection(phaseCentre.ra, phaseCentre.dec),
                   casacore::MDirection::J2000) {
  const casacore::MPosition array(casacore::MVPosition(reference[0], reference[1], reference[2]),
                                  casacore::MPosition::ITRF);
  frame_.set(array);
  frame_.set(phaseCentre_);
  frame_.set(casacore::MEpoch(casacore::MVEpoch(51544.5), casacore::MEpoch::UTC));
  for (const auto& p : positions)
    offsets_.push_back({p[0] - reference[0], p[1] - reference[1], p[2] - reference[2]});
  toJ2000_ =
      casacore::MBaseline::Convert(casacore::MBaseline::Ref(casacore::MBaseline::ITRF, frame_),
                                   casacore::MBaseline::Ref(casacore::MBaseline::J2000));
}

UvwCalculator::Rotation UvwCalculator::rotation(double mjdSeconds) {
  constexpr size_t kRecentEpochs = 1024;  // writers of a beam's subbands lag each other by less
  if (const auto known = recent_.find(mjdSeconds); known != recent_.end()) return known->second;
  frame_.resetEpoch(
      casacore::MEpoch(casacore::MVEpoch(mjdSeconds / 86400.0), casacore::MEpoch::UTC));
  if (moving_) {  // where the centre is now, in J2000
    constexpr double kUnixEpochMjdSeconds = 40587.0 * 86400.0;
    const Direction now = moving_->j2000(centre_, mjdSeconds - kUnixEpochMjdSeconds);
    phaseCentre_ =
        casacore::MDirection(casacore::MVDirection(now.ra, now.dec), casacore::MDirection::J2000);
  }
  const casacore::MVDirection direction = phaseCentre_.getValue();
  // rotation[k][axis]: uvw component k of the unit ITRF baseline along axis. A proper
  // rotation's third column is the cross product of the first two.
  Rotation rotation;
  for (int axis = 0; axis < 2; ++axis) {
    casacore::MVBaseline unit(0.0, 0.0, 0.0);
    unit(axis) = 1.0;
    const casacore::Vector<double> v =
        casacore::MVuvw(toJ2000_(unit).getValue(), direction).getValue();
    for (int k = 0; k < 3; ++k) rotation[k][axis] = v[k];
  }
  for (int k = 0; k < 3; ++k)
    rotation[k][2] = rotation[(k + 1) % 3][0] * rotation[(k + 2) % 3][1] -
                     rotation[(k + 2) % 3][0] * rotation[(k + 1) % 3][1];
  if (recent_.size() == kRecentEpochs) recent_.erase(recent_.begin());
  recent_.emplace(mjdSeconds, rotation);
  return rotation;
}

std::vector<std::array<double, 3>> UvwCalculator::stationUvw(double mjdSeconds) {
  const Rotation r = rotation(mjdSeconds);
  std::vector<std::array<double, 3>> uvw(offsets_.size());
  for (size_t s = 0; s < offsets_.size(); ++s)
    for (int k = 0; k < 3; ++k)
      uvw[s][k] = r[k][0] * offsets_[s][0] + r[k][1] * offsets_[s][1] + r[k][2] * offsets_[s][2];
  return uvw;
}

std::shared_ptr<UvwCalculator> UvwCalculator::shared(
    const std::array<double, 3>& reference, const std::vector<std::array<double, 3>>& positions,
    const Direction& phaseCentre) {
  using Key = std::tuple<std::array<double, 3>, std::vector<std::array<double, 3>>, double, double,
                         std::string>;
  static std::map<Key, std::weak_ptr<UvwCalculator>> alive;
  Key key{reference, positions, phaseCentre.ra, phaseCentre.dec, phaseCentre.type};
  std::shared_ptr<UvwCalculator> calculator = alive[key].lock();
  if (!calculator) {
    calculator = std::make_shared<UvwCalculator>(reference, positions, phaseCentre);
    alive[std::move(key)] = calculator;
  }
  return calculator;
}

}  // namespace rtcp::storage
