#include "rtcp/Csv.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "rtcp/Parset.h"

namespace rtcp {

std::vector<std::string> splitCsv(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream stream(line);
  std::string field;
  while (std::getline(stream, field, ',')) {
    const size_t begin = field.find_first_not_of(" \t");
    const size_t end = field.find_last_not_of(" \t\r");
    fields.push_back(begin == std::string::npos ? "" : field.substr(begin, end - begin + 1));
  }
  if (!line.empty() && line.back() == ',') fields.push_back("");  // an empty last cell
  return fields;
}

void CsvRow::fail(const std::string& problem) const {
  throw ParsetError(path, lineNumber, "", problem + " in line '" + line + "'");
}

double CsvRow::number(size_t i, const char* column) const {
  double value = 0;
  if (!parseNumber(cells.at(i), value)) fail(std::string("bad ") + column + " '" + cells[i] + "'");
  return value;
}

void readCsv(const std::string& path, const std::string& header,
             const std::function<void(const CsvRow&)>& onRow) {
  std::ifstream file(path);
  if (!file)
    throw ParsetError(path, 0, "", std::string("cannot open table: ") + std::strerror(errno));
  const size_t nrColumns = splitCsv(header).size();
  bool headerSeen = false;
  std::string line;
  for (int lineNumber = 1; std::getline(file, line); ++lineNumber) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    if (!headerSeen) {
      if (line != header)
        throw ParsetError(path, lineNumber, "",
                          "expected the header '" + header + "', found '" + line + "'");
      headerSeen = true;
      continue;
    }
    CsvRow row{path, lineNumber, line, splitCsv(line)};
    if (row.cells.size() != nrColumns)
      row.fail("expected " + std::to_string(nrColumns) + " fields (" + header + ")");
    onRow(row);
  }
  if (!headerSeen) throw ParsetError(path, 0, "", "no header line (empty table)");
}

}  // namespace rtcp
