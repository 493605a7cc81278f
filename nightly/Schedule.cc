#include "Schedule.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "rtcp/Files.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"

namespace rtcp::nightly {
namespace {

std::string trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

/// Reads the parset's start and stop times (other keys may be bad: observe will report
/// them); leaves them unset when they cannot be read.
void readParsetTimes(ScheduleEntry& entry) {
  entry.parsetStart.reset();
  entry.parsetStop.reset();
  try {
    std::vector<ParsetError> errors;
    const ObservationSettings s = ObservationSettings::readAll(Parset::fromFile(entry.parset),
                                                               StationTable::shipped(), errors);
    if (s.startTime <= 0 || s.stopTime <= 0) return;  // not read
    entry.parsetStart = s.startTime;
    entry.parsetStop = s.stopTime;
  } catch (const std::exception&) {
  }
}

}  // namespace

Schedule Schedule::fromFile(const std::string& path) {
  const std::optional<std::string> text = tryReadFile(path);
  if (!text) throw ScheduleError(path + ": cannot open schedule");
  const std::filesystem::path base =
      std::filesystem::absolute(std::filesystem::path(path)).parent_path();
  return fromString(*text, base.string(), path);
}

Schedule Schedule::fromString(const std::string& text, const std::string& baseDirectory,
                              const std::string& name) {
  static const std::regex timed(
      R"(^(['"]?)(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?)\1\s+(.+)$)");
  Schedule schedule;
  schedule.name_ = name;
  std::istringstream lines(text);
  std::string raw;
  for (int number = 1; std::getline(lines, raw); ++number) {
    const std::string line = trim(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    ScheduleEntry entry;
    entry.line = number;
    std::string path = line;
    std::smatch match;
    if (std::regex_match(line, match, timed)) {
      try {
        entry.scheduledStart = parseUtc(match[2].str());
      } catch (const std::exception& e) {
        throw ScheduleError(name + ":" + std::to_string(number) + ": bad start time '" +
                            match[2].str() + "': " + e.what());
      }
      path = trim(match[4].str());
    } else if (std::regex_search(line, std::regex(R"(^['"]?\d{4}-\d{2}-\d{2}[ T]\d)"))) {
      throw ScheduleError(name + ":" + std::to_string(number) + ": '" + line +
                          "' is neither 'YYYY-MM-DD HH:MM:SS PARSET' nor a parset path");
    }
    if (path.find_first_of(" \t") != std::string::npos)
      throw ScheduleError(name + ":" + std::to_string(number) + ": '" + line +
                          "': expected one parset path, optionally after a start time");
    const std::filesystem::path p(path);
    entry.parset = (p.is_absolute() ? p : std::filesystem::path(baseDirectory) / p)
                       .lexically_normal()
                       .string();
    readParsetTimes(entry);
    schedule.entries_.push_back(std::move(entry));
  }
  if (schedule.entries_.empty()) throw ScheduleError(name + ": the schedule lists no parsets");
  return schedule;
}

void Schedule::plan(bool now, double nowTime) {
  auto startOf = [](const ScheduleEntry& e) {
    return e.scheduledStart ? e.scheduledStart : e.parsetStart;
  };
  double shift = 0;
  if (now)
    for (const ScheduleEntry& e : entries_)
      if (const auto start = startOf(e)) {
        shift = nowTime - *start;
        break;
      }
  for (ScheduleEntry& e : entries_) {
    const auto start = startOf(e);
    e.plannedStart = start ? *start + shift : 0.0;  // 0: as soon as the one before ends
    const bool moved =
        e.scheduledStart && (!e.parsetStart || std::abs(*e.scheduledStart - *e.parsetStart) > 1e-3);
    e.startNow = now || moved;
  }
}

}  // namespace rtcp::nightly
