#pragma once
/// \file AntennaFieldTable.h
/// LOFAR's antenna-field geometry as rtcp ships it in parsets/ (parsets/README.md): the
/// absolute ITRF position (AntennaField.conf) of every LBA dipole and HBA tile
/// (AntennaElements.csv) and each field's p, q, r axes and HBA tile rotation
/// (AntennaFieldAxes.csv). What LOFAR_ANTENNA_FIELD is made of.

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rtcp {

using Vector3 = std::array<double, 3>;

class AntennaFieldTable {
 public:
  /// A field's local coordinate system.
  struct Axes {
    std::array<Vector3, 3> pqr{};        ///< [p, q, r][ETRS x, y, z], unit vectors; r: normal
    std::optional<double> tileRotation;  ///< HBA fields: tile rotation in degrees (clockwise
                                         ///< from p, seen from above); none for LBA
  };

  static AntennaFieldTable fromFiles(const std::string& axesCsv, const std::string& elementsCsv);
  /// The tables shipped with rtcp (dataDirectory()), read once.
  static const AntennaFieldTable& shipped();

  /// Axes of a field: LBA, HBA (remote and international stations), HBA0 or HBA1 (core).
  const Axes* axes(const std::string& station, const std::string& field) const;
  /// Absolute ITRF positions (metres) of a station's elements, [element][x, y, z], in
  /// LOFAR's numbering; type LBA or HBA (for core stations HBA holds HBA0's tiles 0-23 and
  /// HBA1's 24-47). nullptr when the table has none.
  const std::vector<Vector3>* elements(const std::string& station, const std::string& type) const;

 private:
  using Key = std::pair<std::string, std::string>;  // station, field or type
  std::map<Key, Axes> axes_;
  std::map<Key, std::vector<Vector3>> elements_;
};

}  // namespace rtcp
