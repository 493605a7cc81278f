#include "rtcp/DirectionConverter.h"

#include <casacore/casa/Exceptions/Error.h>

#include <cmath>
#include <stdexcept>

#include "rtcp/CasacoreMeasures.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace {

casacore::MDirection::Types directionType(const std::string& name) {
  casacore::MDirection::Types type;
  if (!casacore::MDirection::getType(type, name))
    throw std::invalid_argument("casacore does not know the direction type '" + name + "'");
  return type;
}

}  // namespace

/// The frame (epoch, observer) and one engine per (from type, to type), built on first use
/// and first asked at the anchor epoch.
struct DirectionConverter::Engines {
  Engines(const std::array<double, 3>& position, double anchorTime)
      : anchor(anchorTime),
        frame(toEpoch(anchorTime),
              casacore::MPosition(casacore::MVPosition(position[0], position[1], position[2]),
                                  casacore::MPosition::ITRF)) {}

  casacore::MDirection::Convert& engine(const Direction& d, casacore::MDirection::Types to) {
    const auto key = std::make_pair(d.type, int(to));
    auto it = engines.find(key);
    if (it == engines.end()) {
      it = engines
               .emplace(key, casacore::MDirection::Convert(
                                 casacore::MDirection::Ref(directionType(d.type)),
                                 casacore::MDirection::Ref(to, frame)))
               .first;
      frame.resetEpoch(toEpoch(anchor).getValue());  // what it extrapolates from
      it->second(casacore::MVDirection(d.ra, d.dec));
    }
    return it->second;
  }

  casacore::MVDirection convert(const Direction& d, double unixTime,
                                casacore::MDirection::Types to) {
    try {
      casacore::MDirection::Convert& convert = engine(d, to);
      frame.resetEpoch(toEpoch(unixTime).getValue());
      return convert(casacore::MVDirection(d.ra, d.dec)).getValue();
    } catch (const casacore::AipsError& e) {
      throw std::runtime_error(
          "casacore cannot say where " + d.type + " is: " + std::string(e.getMesg()) +
          " (a solar-system body needs the JPL ephemeris DE200 of casacore-data-jpl-de200 where "
          "casacore looks for it: scripts/setup.sh links it)");
    }
  }

  double anchor;
  casacore::MeasFrame frame;
  std::map<std::pair<std::string, int>, casacore::MDirection::Convert> engines;
};

DirectionConverter::DirectionConverter(std::array<double, 3> position) : position_(position) {}
DirectionConverter::~DirectionConverter() = default;
DirectionConverter::DirectionConverter(DirectionConverter&&) noexcept = default;
DirectionConverter& DirectionConverter::operator=(DirectionConverter&&) noexcept = default;

DirectionConverter::Engines& DirectionConverter::enginesAt(double unixTime) {
  const double anchor = std::floor(unixTime / kEpochAnchorSeconds) * kEpochAnchorSeconds;
  if (!engines_ || engines_->anchor != anchor)
    engines_ = std::make_unique<Engines>(position_, anchor);
  return *engines_;
}

std::array<double, 3> DirectionConverter::itrf(const Direction& direction, double unixTime) {
  const casacore::Vector<casacore::Double> xyz =
      enginesAt(unixTime).convert(direction, unixTime, casacore::MDirection::ITRF).getValue();
  return {xyz[0], xyz[1], xyz[2]};
}

Direction DirectionConverter::j2000(const Direction& direction, double unixTime) {
  if (direction.isJ2000()) return direction;
  const casacore::MVDirection j2000 =
      enginesAt(unixTime).convert(direction, unixTime, casacore::MDirection::J2000);
  const double ra = std::fmod(j2000.getLong() + 2 * M_PI, 2 * M_PI);  // [0, 2 pi)
  return {ra, j2000.getLat(), "J2000"};
}

void DirectionConverter::checkType(const std::string& type) { directionType(type); }

}  // namespace rtcp
