#include "rtcp/DelayModel.h"

#include <stdexcept>

namespace rtcp {

DelayModel::DelayModel(std::array<double, 3> referencePosition,
                       std::vector<std::array<double, 3>> positions,
                       std::vector<double> instrumentalDelays)
    : reference_(referencePosition),
      positions_(std::move(positions)),
      instrumentalDelays_(std::move(instrumentalDelays)),
      converter_(std::make_unique<DirectionConverter>(reference_)) {
  if (instrumentalDelays_.empty()) instrumentalDelays_.assign(positions_.size(), 0.0);
  if (instrumentalDelays_.size() != positions_.size())
    throw std::invalid_argument("DelayModel: " + std::to_string(positions_.size()) +
                                " positions but " + std::to_string(instrumentalDelays_.size()) +
                                " instrumental delays");
}

namespace {
std::vector<std::array<double, 3>> stationPositions(const ObservationSettings& settings) {
  std::vector<std::array<double, 3>> positions;
  for (const StationSettings& station : settings.stations) positions.push_back(station.position);
  return positions;
}
std::vector<double> instrumentalDelays(const ObservationSettings& settings) {
  std::vector<double> delays;
  for (int s = 0; s < settings.nrStations(); ++s) delays.push_back(settings.instrumentalDelay(s));
  return delays;
}
}  // namespace

DelayModel::DelayModel(const ObservationSettings& settings)
    : DelayModel(settings.referencePhaseCenter, stationPositions(settings),
                 instrumentalDelays(settings)) {}

DelayModel::~DelayModel() = default;
DelayModel::DelayModel(DelayModel&&) noexcept = default;

std::array<double, 3> DelayModel::itrfDirection(const Direction& direction, double unixTime) const {
  return converter_->itrf(direction, unixTime);
}

std::vector<double> DelayModel::delays(const Direction& direction, double unixTime) const {
  const std::array<double, 3> s = itrfDirection(direction, unixTime);
  std::vector<double> result(positions_.size());
  for (size_t i = 0; i < positions_.size(); ++i) {
    double projection = 0;
    for (int k = 0; k < 3; ++k) projection += (positions_[i][k] - reference_[k]) * s[k];
    result[i] = projection / kSpeedOfLight + instrumentalDelays_[i];
  }
  return result;
}

}  // namespace rtcp
