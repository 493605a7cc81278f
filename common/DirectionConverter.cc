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

/// The frame (epoch, observer) and one engine per (from type, to type), built on first use.
struct DirectionConverter::Engines {
  explicit Engines(const std::array<double, 3>& position)
      : frame(toEpoch(0.0),
              casacore::MPosition(casacore::MVPosition(position[0], position[1], position[2]),
                                  casacore::MPosition::ITRF)) {}

  casacore::MDirection::Convert& engine(const std::string& from, casacore::MDirection::Types to) {
    const auto key = std::make_pair(from, int(to));
    auto it = engines.find(key);
    if (it == engines.end())
      it = engines
               .emplace(key, casacore::MDirection::Convert(
                                 casacore::MDirection::Ref(directionType(from)),
                                 casacore::MDirection::Ref(to, frame)))
               .first;
    return it->second;
  }

  casacore::MVDirection convert(const Direction& d, double unixTime,
                                casacore::MDirection::Types to) {
    frame.resetEpoch(toEpoch(unixTime).getValue());
    try {
      return engine(d.type, to)(casacore::MVDirection(d.ra, d.dec)).getValue();
    } catch (const casacore::AipsError& e) {
      throw std::runtime_error(
          "casacore cannot say where " + d.type + " is: " + std::string(e.getMesg()) +
          " (a solar-system body needs the JPL ephemeris DE200 of casacore-data-jpl-de200 where "
          "casacore looks for it: scripts/setup.sh links it)");
    }
  }

  casacore::MeasFrame frame;
  std::map<std::pair<std::string, int>, casacore::MDirection::Convert> engines;
};

DirectionConverter::DirectionConverter(std::array<double, 3> position)
    : engines_(std::make_unique<Engines>(position)) {}
DirectionConverter::~DirectionConverter() = default;
DirectionConverter::DirectionConverter(DirectionConverter&&) noexcept = default;
DirectionConverter& DirectionConverter::operator=(DirectionConverter&&) noexcept = default;

std::array<double, 3> DirectionConverter::itrf(const Direction& direction, double unixTime) {
  const casacore::Vector<casacore::Double> xyz =
      engines_->convert(direction, unixTime, casacore::MDirection::ITRF).getValue();
  return {xyz[0], xyz[1], xyz[2]};
}

Direction DirectionConverter::j2000(const Direction& direction, double unixTime) {
  if (direction.isJ2000()) return direction;
  const casacore::MVDirection j2000 =
      engines_->convert(direction, unixTime, casacore::MDirection::J2000);
  const double ra = std::fmod(j2000.getLong() + 2 * M_PI, 2 * M_PI);  // [0, 2 pi)
  return {ra, j2000.getLat(), "J2000"};
}

void DirectionConverter::checkType(const std::string& type) { directionType(type); }

}  // namespace rtcp
