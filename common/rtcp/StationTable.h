#pragma once
/// \file StationTable.h
/// LOFAR's antenna-field table (parsets/StationPositions.csv): numeric station IDs and
/// ITRF phase centres of every field.

#include <array>
#include <map>
#include <optional>
#include <string>

namespace rtcp {

class StationTable {
 public:
  struct Field {
    std::string station;               ///< e.g. CS001
    int id = 0;                        ///< LOFAR numeric station ID
    std::string field;                 ///< LBA, HBA, HBA0, HBA1
    std::array<double, 3> position{};  ///< ITRF metres
  };

  static StationTable fromFile(const std::string& csvPath);
  /// The table shipped with rtcp (see dataDirectory()).
  static const StationTable& shipped();

  std::optional<Field> find(const std::string& station, const std::string& field) const;
  std::optional<int> stationId(const std::string& station) const;
  size_t size() const { return fields_.size(); }

 private:
  std::map<std::pair<std::string, std::string>, Field> fields_;
};

/// The directory of rtcp's shipped tables (parsets/): $RTCP_DATA_DIR, else the
/// source tree's parsets/ (compiled in), else ../share/rtcp next to the executable.
std::string dataDirectory();

}  // namespace rtcp
