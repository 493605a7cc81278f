#pragma once
/// \file Csv.h
/// The comma-separated tables rtcp ships in parsets/: `#` comment lines and blank lines are
/// skipped, the first other line must be the expected header, every later line is a row.
/// Errors are ParsetErrors naming the file and line.

#include <charconv>
#include <functional>
#include <string>
#include <vector>

namespace rtcp {

/// The cells of one CSV line, each trimmed of surrounding blanks.
std::vector<std::string> splitCsv(const std::string& line);

/// Parses a whole cell as a number; false when the text is empty or not all a number.
template <typename T>
bool parseNumber(const std::string& text, T& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

/// One data row of a CSV table and where it stands, for error messages.
struct CsvRow {
  const std::string& path;
  int lineNumber = 0;
  const std::string& line;
  std::vector<std::string> cells;  ///< as many as the header has (checked)

  /// A ParsetError naming the file, line and the line's text.
  [[noreturn]] void fail(const std::string& problem) const;
  /// Cell i as a number; fails naming the column when it is not one.
  double number(size_t i, const char* column) const;
};

/// Reads the table at path, checks its header and calls onRow for every row.
void readCsv(const std::string& path, const std::string& header,
             const std::function<void(const CsvRow&)>& onRow);

}  // namespace rtcp
