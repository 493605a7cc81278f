#pragma once
/// \file StatusText.h
/// The codec of rtcp's status files (ionproc's IonStatus, StatusFile.h; storage-sink's
/// StorageStatus, StorageStatus.h; a correlator rank's RankStatus, RankStatus.h): `key=value`
/// lines, numbers in full precision, bools as 0 / 1, texts as one word ('%', '=', ',', white
/// space and control characters as %XX), lists as their items separated by ','. The
/// one-line form for a stream (`--status -`, which mpiexec forwards from another host) is
/// a prefix, then the lines joined by spaces.

#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "rtcp/Files.h"

namespace rtcp {

/// A text as one word of a status value, and back.
std::string encodeStatusWord(const std::string& text);
std::string decodeStatusWord(const std::string& word);

/// Writes `key=value` lines.
class StatusWriter {
 public:
  StatusWriter() { out_.precision(17); }
  template <typename T>
  void add(std::string_view key, const T& value) {
    out_ << key << '=';
    if constexpr (std::is_same_v<T, std::string>)
      out_ << encodeStatusWord(value);
    else if constexpr (std::is_same_v<T, bool>)
      out_ << int(value);
    else
      out_ << value;
    out_ << '\n';
  }
  /// The items separated by ','.
  template <typename T>
  void addList(std::string_view key, const std::vector<T>& items) {
    out_ << key << '=';
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) out_ << ',';
      if constexpr (std::is_same_v<T, std::string>)
        out_ << encodeStatusWord(items[i]);
      else
        out_ << items[i];
    }
    out_ << '\n';
  }
  std::string text() const { return out_.str(); }

 private:
  std::ostringstream out_;
};

/// Reads the `key=value` lines of a status text (empty lines skipped; unknown keys
/// ignored). Throws std::runtime_error naming the line of an entry without '=', or the key
/// of a value that is not of its type.
class StatusReader {
 public:
  explicit StatusReader(const std::string& text);
  /// value = the key's value; unchanged when the key is absent.
  template <typename T>
  void take(const std::string& key, T& value) const {
    const auto it = values_.find(key);
    if (it != values_.end()) parse(key, it->second, value);
  }
  /// items = the key's ','-separated items; unchanged when the key is absent.
  template <typename T>
  void takeList(const std::string& key, std::vector<T>& items) const {
    const auto it = values_.find(key);
    if (it == values_.end()) return;
    items.clear();
    if (it->second.empty()) return;
    std::istringstream list(it->second);
    for (std::string item; std::getline(list, item, ',');) parse(key, item, items.emplace_back());
  }

 private:
  template <typename T>
  static void parse(const std::string& key, const std::string& text, T& value) {
    if constexpr (std::is_same_v<T, std::string>) {
      value = decodeStatusWord(text);
    } else {
      std::istringstream in(text);
      if constexpr (std::is_same_v<T, bool>) {
        int flag = 0;
        in >> flag;
        value = flag != 0;
      } else {
        in >> value;
      }
      if (in.fail() || !(in >> std::ws).eof())
        throw std::runtime_error("status key '" + key + "': bad value '" + text + "'");
    }
  }

  std::map<std::string, std::string> values_;
};

/// The one-line form of a status text: prefix, then its lines separated by spaces.
std::string statusLine(std::string_view prefix, std::string text);
/// The status text of a statusLine() line; nullopt when the line does not start with prefix.
std::optional<std::string> statusTextOfLine(std::string_view prefix, const std::string& line);

/// Reads and parses a status file; throws std::runtime_error naming it when it cannot be
/// read or parsed.
template <typename Status>
Status readStatusFile(const std::string& path, Status (*parse)(const std::string&)) {
  const std::string text = readFile(path);
  try {
    return parse(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

/// Parses a statusLine() line; nullopt when the line does not start with prefix.
template <typename Status>
std::optional<Status> parseStatusLine(std::string_view prefix, const std::string& line,
                                      Status (*parse)(const std::string&)) {
  const std::optional<std::string> text = statusTextOfLine(prefix, line);
  if (!text) return std::nullopt;
  return parse(*text);
}

}  // namespace rtcp
