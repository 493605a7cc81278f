#include "rtcp/StatusText.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace rtcp {

std::string encodeStatusWord(const std::string& text) {
  std::string word;
  for (const unsigned char c : text)
    if (c == '%' || c == '=' || c == ',' || c <= ' ' || c == 0x7f) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      word += escaped;
    } else {
      word += char(c);
    }
  return word;
}

std::string decodeStatusWord(const std::string& word) {
  std::string text;
  for (size_t i = 0; i < word.size(); ++i)
    if (word[i] == '%' && i + 2 < word.size() && std::isxdigit((unsigned char)word[i + 1]) &&
        std::isxdigit((unsigned char)word[i + 2])) {
      text += char(std::stoi(word.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      text += word[i];
    }
  return text;
}

StatusReader::StatusReader(const std::string& text) {
  std::istringstream in(text);
  int lineNumber = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNumber;
    if (line.empty()) continue;
    const size_t equals = line.find('=');
    if (equals == std::string::npos || equals == 0)
      throw std::runtime_error("status line " + std::to_string(lineNumber) + ": no key=value: '" +
                               line + "'");
    values_[line.substr(0, equals)] = line.substr(equals + 1);
  }
}

std::string statusLine(std::string_view prefix, std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');  // the values hold no spaces
  if (!text.empty()) text.pop_back();
  return std::string(prefix) + text;
}

std::optional<std::string> statusTextOfLine(std::string_view prefix, const std::string& line) {
  if (!line.starts_with(prefix)) return std::nullopt;
  std::string text = line.substr(prefix.size());
  std::replace(text.begin(), text.end(), ' ', '\n');
  return text;
}

}  // namespace rtcp
