#include "rtcp/StationTable.h"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "rtcp/Parset.h"

namespace rtcp {
namespace {

constexpr const char* kHeader = "STATION,ID,FIELD,X,Y,Z";

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) {
    const size_t begin = field.find_first_not_of(" \t");
    const size_t end = field.find_last_not_of(" \t\r");
    fields.push_back(begin == std::string::npos ? "" : field.substr(begin, end - begin + 1));
  }
  return fields;
}

template <typename T>
bool parseNumber(const std::string& text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

/// Parses one data row: STATION,ID,FIELD,X,Y,Z.
StationTable::Field parseRow(const std::string& path, int lineNumber, const std::string& line) {
  const auto bad = [&](const std::string& why) {
    return ParsetError(path, lineNumber, "", why + " in line '" + line + "'");
  };
  const std::vector<std::string> cells = splitCsv(line);
  if (cells.size() != 6) throw bad("expected 6 fields (" + std::string(kHeader) + ")");
  StationTable::Field field;
  field.station = cells[0];
  field.field = cells[2];
  if (field.station.empty() || field.field.empty()) throw bad("empty station or field name");
  if (!parseNumber(cells[1], field.id) || field.id < 0)
    throw bad("bad station ID '" + cells[1] + "'");
  for (int axis = 0; axis < 3; ++axis)
    if (!parseNumber(cells[3 + axis], field.position[axis]))
      throw bad("bad coordinate '" + cells[3 + axis] + "'");
  return field;
}

}  // namespace

StationTable StationTable::fromFile(const std::string& csvPath) {
  std::ifstream file(csvPath);
  if (!file)
    throw ParsetError(csvPath, 0, "",
                      std::string("cannot open station table: ") + std::strerror(errno));
  StationTable table;
  bool headerSeen = false;
  std::string line;
  for (int lineNumber = 1; std::getline(file, line); ++lineNumber) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos ||
        line[line.find_first_not_of(" \t")] == '#')
      continue;
    if (!headerSeen) {
      if (line != kHeader)
        throw ParsetError(
            csvPath, lineNumber, "",
            "expected the header '" + std::string(kHeader) + "', found '" + line + "'");
      headerSeen = true;
      continue;
    }
    Field field = parseRow(csvPath, lineNumber, line);
    auto key = std::make_pair(field.station, field.field);
    if (!table.fields_.emplace(key, std::move(field)).second)
      throw ParsetError(csvPath, lineNumber, "",
                        "field " + key.first + " " + key.second + " listed twice");
  }
  if (!headerSeen) throw ParsetError(csvPath, 0, "", "no header line (empty station table)");
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
