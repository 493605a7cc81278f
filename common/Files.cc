#include "rtcp/Files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace rtcp {

std::optional<std::string> tryReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::ostringstream text;
  text << file.rdbuf();
  if (file.bad()) return std::nullopt;
  return std::move(text).str();
}

std::string readFile(const std::string& path) {
  std::optional<std::string> text = tryReadFile(path);
  if (!text) throw std::runtime_error(path + ": cannot read: " + std::strerror(errno));
  return std::move(*text);
}

void writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << text;
    file.close();
    if (!file) throw std::runtime_error(temporary + ": cannot write: " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": cannot replace with " + temporary + ": " +
                             std::strerror(errno));
}

}  // namespace rtcp
