#include "rtcp/StatusWord.h"

#include <cctype>
#include <cstdio>

namespace rtcp {

std::string encodeStatusWord(const std::string& text, const std::string& alsoEscape) {
  std::string word;
  for (const unsigned char c : text)
    if (c == '%' || c == '=' || c <= ' ' || c == 0x7f ||
        alsoEscape.find(char(c)) != std::string::npos) {
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

}  // namespace rtcp
