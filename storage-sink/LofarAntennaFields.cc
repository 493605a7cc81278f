#include "LofarAntennaFields.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "AntennaSets.h"

namespace rtcp::storage {
namespace {

constexpr double kTileElementSpacing = 1.25;  // metres between HBA elements in a tile
constexpr int kTileSide = 4;                  // 4 x 4 elements per tile

Vector3 minus(const Vector3& a, const Vector3& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
Vector3 plus(const Vector3& a, const Vector3& b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
double norm(const Vector3& v) { return std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }

/// LOFAR's element sizes, which it adds to the spread of the elements for DISH_DIAMETER.
double elementSize(const std::string& field) { return field.starts_with("HBA") ? 5.0 : 2.0; }

/// Local east, north and up at an ITRF position: the axes of a field the tables lack.
std::array<Vector3, 3> localAxes(const Vector3& position) {
  const double longitude = std::atan2(position[1], position[0]);
  const double latitude = std::atan2(position[2], std::hypot(position[0], position[1]));
  const double sinLon = std::sin(longitude), cosLon = std::cos(longitude);
  const double sinLat = std::sin(latitude), cosLat = std::cos(latitude);
  return {Vector3{-sinLon, cosLon, 0}, Vector3{-sinLat * cosLon, -sinLat * sinLon, cosLat},
          Vector3{cosLat * cosLon, cosLat * sinLon, sinLat}};
}

/// The LOFAR_ANTENNA_FIELD rows a station's field makes: a core station's HBA is written
/// as the halves the antenna set uses (HBA_ZERO*: HBA0, HBA_ONE*: HBA1, else both).
std::vector<std::string> rowNames(const FieldOfStation& f, const std::string& antennaSet,
                                  const AntennaFieldTable& geometry) {
  if (f.field != "HBA" || geometry.axes(f.station, "HBA") || !geometry.axes(f.station, "HBA0") ||
      !geometry.axes(f.station, "HBA1"))
    return {f.field};
  if (antennaSet.starts_with("HBA_ZERO")) return {"HBA0"};
  if (antennaSet.starts_with("HBA_ONE")) return {"HBA1"};
  return {"HBA0", "HBA1"};
}

/// Builds the rows of one observation's antennas, collecting warnings on the way.
class RowBuilder {
 public:
  RowBuilder(const std::string& antennaSet, const AntennaFieldTable& geometry,
             const StationTable& centres, std::vector<std::string>& warnings)
      : antennaSet_(antennaSet), geometry_(geometry), centres_(centres), warnings_(warnings) {}

  /// The row of field `name` of a station; `fallback` positions it when the station
  /// table has no centre for it.
  LofarFieldRow row(int antennaId, const std::string& station, const std::string& name,
                    const Vector3& fallback) const {
    LofarFieldRow row;
    row.antennaId = antennaId;
    row.name = name;
    const std::string where = station + " " + name;
    const auto centre = centres_.find(station, name);
    row.position = centre ? centre->position : fallback;
    if (!centre)
      warn(where + ": no field centre in the station table; the antenna's position is used");
    const AntennaFieldTable::Axes* axes = geometry_.axes(station, name);
    row.axes = axes ? axes->pqr : localAxes(row.position);
    if (!axes)
      warn(where + ": no p, q, r axes in the antenna-field table; local east, north, up are used");
    if (name.starts_with("HBA")) {
      row.hasTiles = true;
      row.tileElementOffsets =
          hbaTileElementOffsets(row.axes, axes ? axes->tileRotation.value_or(0) : 0);
    }
    addElements(row, station, name);
    return row;
  }

 private:
  void addElements(LofarFieldRow& row, const std::string& station, const std::string& name) const {
    const std::string where = station + " " + name;
    const std::vector<Vector3>* elements = geometry_.elements(station, name.substr(0, 3));
    if (!elements) {
      warn(where + ": no element positions in the antenna-field table; the row has no elements");
      return;
    }
    for (const Vector3& element : *elements)
      row.elementOffsets.push_back(minus(element, row.position));
    const std::string set = antennaSetOfField(antennaSet_, name);
    const std::optional<ElementRcus> rcus =
        elementRcus(set, stationType(station), elements->size());
    if (!rcus)
      warn(where + ": antenna set " + set +
           " is not one of LOFAR's; every element is marked in use");
    row.elementRcus = rcus.value_or(ElementRcus(elements->size(), {-1, -1}));
    for (const auto& rcu : row.elementRcus)  // unknown set: nothing flagged
      row.elementFlags.push_back({rcus && rcu[0] < 0, rcus && rcu[1] < 0});
  }

  void warn(const std::string& text) const {
    if (std::find(warnings_.begin(), warnings_.end(), text) == warnings_.end())
      warnings_.push_back(text);
  }

  const std::string& antennaSet_;
  const AntennaFieldTable& geometry_;
  const StationTable& centres_;
  std::vector<std::string>& warnings_;
};

/// LOFAR's station diameter of a row: twice the largest distance of a used element from
/// the centre, plus an element (0 when no element is known).
double fieldDiameter(const LofarFieldRow& row) {
  double radius = -1;
  for (size_t e = 0; e < row.elementOffsets.size(); ++e)
    if (!row.elementFlags[e][0] || !row.elementFlags[e][1])
      radius = std::max(radius, norm(row.elementOffsets[e]));
  return radius < 0 ? 0 : 2 * radius + elementSize(row.name);
}

/// One row holding the elements of several rows, relative to a new centre.
LofarFieldRow mergedRow(const std::vector<LofarFieldRow>& rows, const Vector3& centre) {
  LofarFieldRow merged = rows.front();
  merged.position = centre;
  merged.elementOffsets.clear();
  merged.elementRcus.clear();
  merged.elementFlags.clear();
  for (const LofarFieldRow& row : rows)
    for (size_t e = 0; e < row.elementOffsets.size(); ++e) {
      merged.elementOffsets.push_back(minus(plus(row.position, row.elementOffsets[e]), centre));
      merged.elementRcus.push_back(row.elementRcus[e]);
      merged.elementFlags.push_back(row.elementFlags[e]);
    }
  return merged;
}

std::vector<LofarStationRow> stationRows(const std::vector<MsAntenna>& antennas,
                                         std::vector<LofarAntennaInfo>& infos) {
  std::vector<LofarStationRow> stations;
  std::map<std::string, int> ids;
  int nextClock = 1;
  for (size_t a = 0; a < antennas.size(); ++a) {
    const MsAntenna& antenna = antennas[a];
    const std::string name =
        antenna.members.size() == 1 ? antenna.members[0].station : antenna.name;
    auto [it, added] = ids.emplace(name, int(stations.size()));
    if (added) {
      const bool core = std::all_of(
          antenna.members.begin(), antenna.members.end(),
          [](const FieldOfStation& m) { return stationType(m.station) == StationType::Core; });
      stations.push_back({name, core ? 0 : nextClock++});
    }
    infos[a].stationId = it->second;
  }
  return stations;
}

}  // namespace

std::vector<Vector3> hbaTileElementOffsets(const std::array<Vector3, 3>& axes,
                                           double rotationDegrees) {
  const double angle = rotationDegrees * M_PI / 180;
  const double c = std::cos(angle), s = std::sin(angle);
  std::vector<Vector3> offsets;
  for (int row = 0; row < kTileSide; ++row)
    for (int column = 0; column < kTileSide; ++column) {
      const double p = (column - 1.5) * kTileElementSpacing;
      const double q = (1.5 - row) * kTileElementSpacing;
      const double turnedP = c * p + s * q, turnedQ = -s * p + c * q;  // clockwise
      Vector3 offset{};
      for (int k = 0; k < 3; ++k) offset[k] = turnedP * axes[0][k] + turnedQ * axes[1][k];
      offsets.push_back(offset);
    }
  return offsets;
}

LofarAntennaFields describeLofarAntennaFields(const std::vector<MsAntenna>& antennas,
                                              const std::string& antennaSet,
                                              const AntennaFieldTable& geometry,
                                              const StationTable& centres) {
  LofarAntennaFields out;
  out.antennas.resize(antennas.size());
  const RowBuilder builder(antennaSet, geometry, centres, out.warnings);
  for (size_t a = 0; a < antennas.size(); ++a) {
    const MsAntenna& antenna = antennas[a];
    std::vector<LofarFieldRow> rows;
    for (const FieldOfStation& member : antenna.members)
      for (const std::string& name : rowNames(member, antennaSet, geometry))
        rows.push_back(builder.row(int(a), member.station, name, antenna.position));
    if (rows.empty()) continue;
    if (antenna.members.size() > 1) {  // a superstation: one field of all its elements
      rows = {mergedRow(rows, antenna.position)};
      rows[0].name = antenna.members.front().field;
    }
    double& diameter = out.antennas[a].dishDiameter;
    if (rows.size() == 2)  // LOFAR: the distance between the halves plus their mean size
      diameter = norm(minus(rows[0].position, rows[1].position)) +
                 0.5 * (fieldDiameter(rows[0]) + fieldDiameter(rows[1]));
    else
      diameter = fieldDiameter(rows[0]);
    out.fields.insert(out.fields.end(), rows.begin(), rows.end());
  }
  out.stations = stationRows(antennas, out.antennas);
  return out;
}

}  // namespace rtcp::storage
