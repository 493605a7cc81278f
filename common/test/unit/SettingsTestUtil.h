#pragma once
// Helpers of the ObservationSettings tests: a small valid parset edited key by key, and
// the settings or the error it gives.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "TestData.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::test::settings {

using rtcp::ObservationSettings;
using rtcp::Parset;
using rtcp::ParsetError;
using rtcp::StationTable;

class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tObsSettings-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string path() const { return path_.string(); }
  std::string write(const std::string& name, const std::string& text) const {
    const std::string file = (path_ / name).string();
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

inline const StationTable& table() {
  static const StationTable t =
      StationTable::fromFile(rtcp::test::sourceDir() + "/parsets/StationPositions.csv");
  return t;
}

/// A small valid parset as ordered key/value lines, edited per test.
class Keys {
 public:
  Keys() {
    lines_ = {{"Observation.ObsID", "42"},
              {"Observation.startTime", "'2026-11-22 20:00:00'"},
              {"Observation.stopTime", "'2026-11-22 20:00:10'"},
              {"Observation.antennaSet", "LBA_OUTER"},
              {"Observation.bandFilter", "LBA_30_90"},
              {"Observation.VirtualInstrument.stationList", "[CS001, RS106]"},
              {"Observation.Beam[0].angle1", "5.2336866848"},
              {"Observation.Beam[0].angle2", "0.7109425145"},
              {"Observation.Beam[0].subbandList", "[300..302]"},
              {"PIC.Core.CS001LBA.RSP.ports", "[udp:127.0.0.1:10010]"},
              {"PIC.Core.RS106LBA.RSP.ports", "[udp:127.0.0.1:10020]"}};
  }
  Keys& set(const std::string& key, const std::string& value) {
    for (auto& line : lines_)
      if (line.first == key) {
        line.second = value;
        return *this;
      }
    lines_.emplace_back(key, value);
    return *this;
  }
  Keys& erase(const std::string& key) {
    std::erase_if(lines_, [&](const auto& line) { return line.first == key; });
    return *this;
  }
  /// The parset text; line n + 2 holds lines_[n] (after a comment line).
  std::string text() const {
    std::string text = "# test parset\n";
    for (const auto& [key, value] : lines_) text += key + " = " + value + "\n";
    return text;
  }
  int lineOf(const std::string& key) const {
    for (size_t i = 0; i < lines_.size(); ++i)
      if (lines_[i].first == key) return int(i) + 2;
    return 0;
  }

 private:
  std::vector<std::pair<std::string, std::string>> lines_;
};

inline ObservationSettings settingsOf(const Keys& keys) {
  return ObservationSettings::fromParset(Parset::fromString(keys.text(), "test.parset"), table());
}

/// The error that reading these keys raises; checks that it names file, line and key.
inline std::string errorOf(const Keys& keys, const std::string& key) {
  try {
    settingsOf(keys);
  } catch (const ParsetError& e) {
    const std::string message = e.what();
    const int line = keys.lineOf(key);
    const std::string where = line ? "test.parset:" + std::to_string(line) + ": " : "test.parset: ";
    CPPUNIT_ASSERT_MESSAGE(message, contains(message, where));
    CPPUNIT_ASSERT_MESSAGE(message, contains(message, "'" + key + "'"));
    CPPUNIT_ASSERT_EQUAL(key, e.key());
    return message;
  }
  CPPUNIT_FAIL("expected a ParsetError for " + key);
  return {};
}

}  // namespace rtcp::test::settings
