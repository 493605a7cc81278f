#include "rtcp/StationTable.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "rtcp/Csv.h"
#include "rtcp/Parset.h"

namespace rtcp {
namespace {

constexpr const char* kHeader = "STATION,ID,FIELD,X,Y,Z";

/// Parses one data row: STATION,ID,FIELD,X,Y,Z.
StationTable::Field parseRow(const CsvRow& row) {
  StationTable::Field field;
  field.station = row.cells[0];
  field.field = row.cells[2];
  if (field.station.empty() || field.field.empty()) row.fail("empty station or field name");
  if (!parseNumber(row.cells[1], field.id) || field.id < 0)
    row.fail("bad station ID '" + row.cells[1] + "'");
  for (int axis = 0; axis < 3; ++axis) field.position[axis] = row.number(3 + axis, "coordinate");
  return field;
}

}  // namespace

StationTable StationTable::fromFile(const std::string& csvPath) {
  StationTable table;
  readCsv(csvPath, kHeader, [&](const CsvRow& row) {
    Field field = parseRow(row);
    auto key = std::make_pair(field.station, field.field);
    if (!table.fields_.emplace(key, std::move(field)).second)
      row.fail("field " + key.first + " " + key.second + " listed twice");
  });
  return table;
}

const StationTable& StationTable::shipped() {
  static const StationTable table = fromFile(dataDirectory() + "/StationPositions.csv");
  return table;
}

std::optional<StationTable::Field> StationTable::find(const std::string& station,
                                                      const std::string& field) const {
  const auto it = fields_.find({station, field});
  if (it == fields_.end()) return std::nullopt;
  return it->second;
}

std::optional<int> StationTable::stationId(const std::string& station) const {
  const auto it = fields_.lower_bound({station, ""});
  if (it == fields_.end() || it->first.first != station) return std::nullopt;
  return it->second.id;
}

std::string dataDirectory() {
  if (const char* dir = std::getenv("RTCP_DATA_DIR"); dir && *dir) return dir;
  namespace fs = std::filesystem;
#ifdef RTCP_SOURCE_PARSETS_DIR
  std::error_code error;
  if (fs::is_directory(RTCP_SOURCE_PARSETS_DIR, error)) return RTCP_SOURCE_PARSETS_DIR;
#endif
  std::error_code error2;
  const fs::path exe = fs::read_symlink("/proc/self/exe", error2);
  return (exe.parent_path() / ".." / "share" / "rtcp").lexically_normal().string();
}

}  // namespace rtcp
