#include "rtcp/DelayModel.h"

#include <stdexcept>

#include "rtcp/CasacoreMeasures.h"
#include "rtcp/SampleTime.h"

namespace rtcp {

/// The casacore frame (epoch, reference position) and the J2000 -> ITRF conversion
/// engine, built once; each call only resets the frame's epoch. Not thread-safe: use
/// one DelayModel per thread.
struct DelayModel::Converter {
  explicit Converter(const std::array<double, 3>& reference)
      : frame(toEpoch(0.0),
              casacore::MPosition(casacore::MVPosition(reference[0], reference[1], reference[2]),
                                  casacore::MPosition::ITRF)),
        convert(casacore::MDirection(casacore::MVDirection(0.0, 0.0), casacore::MDirection::J2000),
                casacore::MDirection::Ref(casacore::MDirection::ITRF, frame)) {}

  std::array<double, 3> toItrf(const Direction& direction, double unixTime) {
    frame.resetEpoch(toEpoch(unixTime).getValue());
    const casacore::MDirection itrf = convert(casacore::MVDirection(direction.ra, direction.dec));
    const casacore::Vector<casacore::Double> xyz = itrf.getValue().getValue();
    return {xyz[0], xyz[1], xyz[2]};
  }

  casacore::MeasFrame frame;
  casacore::MDirection::Convert convert;
};

DelayModel::DelayModel(std::array<double, 3> referencePosition,
                       std::vector<std::array<double, 3>> positions,
                       std::vector<double> clockCorrections)
    : reference_(referencePosition),
      positions_(std::move(positions)),
      clockCorrections_(std::move(clockCorrections)),
      converter_(std::make_unique<Converter>(reference_)) {
  if (clockCorrections_.empty()) clockCorrections_.assign(positions_.size(), 0.0);
  if (clockCorrections_.size() != positions_.size())
    throw std::invalid_argument("DelayModel: " + std::to_string(positions_.size()) +
                                " positions but " + std::to_string(clockCorrections_.size()) +
                                " clock corrections");
}

namespace {
std::vector<std::array<double, 3>> stationPositions(const ObservationSettings& settings) {
  std::vector<std::array<double, 3>> positions;
  for (const StationSettings& station : settings.stations) positions.push_back(station.position);
  return positions;
}
std::vector<double> clockCorrections(const ObservationSettings& settings) {
  std::vector<double> corrections;
  for (const StationSettings& station : settings.stations)
    corrections.push_back(station.clockCorrection);
  return corrections;
}
}  // namespace

DelayModel::DelayModel(const ObservationSettings& settings)
    : DelayModel(settings.referencePhaseCenter, stationPositions(settings),
                 clockCorrections(settings)) {}

DelayModel::~DelayModel() = default;
DelayModel::DelayModel(DelayModel&&) noexcept = default;

std::array<double, 3> DelayModel::itrfDirection(const Direction& direction, double unixTime) const {
  return converter_->toItrf(direction, unixTime);
}

std::vector<double> DelayModel::delays(const Direction& direction, double unixTime) const {
  const std::array<double, 3> s = itrfDirection(direction, unixTime);
  std::vector<double> result(positions_.size());
  for (size_t i = 0; i < positions_.size(); ++i) {
    double projection = 0;
    for (int k = 0; k < 3; ++k) projection += (positions_[i][k] - reference_[k]) * s[k];
    result[i] = projection / kSpeedOfLight + clockCorrections_[i];
  }
  return result;
}

}  // namespace rtcp
