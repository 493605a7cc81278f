#include "rtcp/AntennaFieldTable.h"

#include <algorithm>
#include <cmath>

#include "rtcp/Csv.h"
#include "rtcp/StationTable.h"

namespace rtcp {
namespace {

constexpr const char* kAxesHeader =
    "STATION,FIELD,TILE_ROTATION,P_X,P_Y,P_Z,Q_X,Q_Y,Q_Z,R_X,R_Y,R_Z";
constexpr const char* kElementsHeader = "STATION,FIELD,ELEMENT,X,Y,Z";

double dot(const Vector3& a, const Vector3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

Vector3 cross(const Vector3& a, const Vector3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}

/// Makes p, q, r exactly orthonormal, keeping r (the field's normal) and the p-q plane's
/// orientation: the tables give 10 digits, and a few fields (DE601 LBA) are skewed by up to
/// 2e-4. Throws when an axis is further than 1e-3 from a right-handed orthonormal set.
void orthonormalise(std::array<Vector3, 3>& pqr, const CsvRow& row) {
  auto& [p, q, r] = pqr;
  const double skew = std::max({std::abs(dot(p, q)), std::abs(dot(q, r)), std::abs(dot(p, r)),
                                std::abs(dot(p, p) - 1), std::abs(dot(q, q) - 1),
                                std::abs(dot(r, r) - 1), std::abs(dot(cross(p, q), r) - 1)});
  if (skew > 1e-3) row.fail("the axes are not a right-handed orthonormal set");
  const double rNorm = std::sqrt(dot(r, r));
  for (double& x : r) x /= rNorm;
  const double along = dot(q, r);
  for (int k = 0; k < 3; ++k) q[k] -= along * r[k];
  const double qNorm = std::sqrt(dot(q, q));
  for (double& x : q) x /= qNorm;
  p = cross(q, r);
}

AntennaFieldTable::Axes parseAxes(const CsvRow& row) {
  AntennaFieldTable::Axes axes;
  for (size_t axis = 0; axis < 3; ++axis)
    for (size_t k = 0; k < 3; ++k)
      axes.pqr[axis][k] = row.number(3 + 3 * axis + k, "axis component");
  orthonormalise(axes.pqr, row);
  const bool hba = row.cells[1].starts_with("HBA");
  if (hba) axes.tileRotation = row.number(2, "TILE_ROTATION");
  if (!hba && !row.cells[2].empty()) row.fail("a tile rotation for a field that is not HBA");
  return axes;
}

}  // namespace

AntennaFieldTable AntennaFieldTable::fromFiles(const std::string& axesCsv,
                                               const std::string& elementsCsv) {
  AntennaFieldTable table;
  readCsv(axesCsv, kAxesHeader, [&](const CsvRow& row) {
    if (!table.axes_.emplace(Key{row.cells[0], row.cells[1]}, parseAxes(row)).second)
      row.fail("field " + row.cells[0] + " " + row.cells[1] + " listed twice");
  });
  readCsv(elementsCsv, kElementsHeader, [&](const CsvRow& row) {
    std::vector<Vector3>& elements = table.elements_[Key{row.cells[0], row.cells[1]}];
    size_t element = 0;
    if (!parseNumber(row.cells[2], element) || element != elements.size())
      row.fail("element " + row.cells[2] + " out of order (expected " +
               std::to_string(elements.size()) + ")");
    elements.push_back({row.number(3, "X"), row.number(4, "Y"), row.number(5, "Z")});
  });
  return table;
}

const AntennaFieldTable& AntennaFieldTable::shipped() {
  static const AntennaFieldTable table = fromFiles(dataDirectory() + "/AntennaFieldAxes.csv",
                                                   dataDirectory() + "/AntennaElements.csv");
  return table;
}

const AntennaFieldTable::Axes* AntennaFieldTable::axes(const std::string& station,
                                                       const std::string& field) const {
  const auto it = axes_.find({station, field});
  return it == axes_.end() ? nullptr : &it->second;
}

const std::vector<Vector3>* AntennaFieldTable::elements(const std::string& station,
                                                        const std::string& type) const {
  const auto it = elements_.find({station, type});
  return it == elements_.end() ? nullptr : &it->second;
}

}  // namespace rtcp
