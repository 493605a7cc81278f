#include "rtcp/RankStatus.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "rtcp/StatusFile.h"
#include "rtcp/StatusWord.h"

namespace rtcp::correlator {
namespace {

/// Names in a list: ',' escaped besides what every status word escapes.
std::string encode(const std::string& text) { return encodeStatusWord(text, ","); }

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) items.push_back(item);
  return items;
}

template <typename T>
std::string joined(const std::vector<T>& values) {
  std::ostringstream out;
  out << std::setprecision(9);
  for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << values[i];
  return out.str();
}

}  // namespace

std::string RankStatus::format() const {
  std::ostringstream out;
  out << std::setprecision(17);
  std::vector<std::string> names;
  for (const std::string& step : steps) names.push_back(encode(step));
  out << "rank=" << rank << "\nhost=" << encode(host) << "\ntime=" << wallTime
      << "\nfinished=" << int(finished) << "\nblocks=" << blocks << "\nnrBlocks=" << nrBlocks
      << "\nsubbandBlocks=" << subbandBlocks << "\nprocessingSeconds=" << processingSeconds
      << "\nblockDuration=" << blockDuration << "\nsteps=" << joined(names)
      << "\nstepSeconds=" << joined(stepSeconds) << "\nstepCalls=" << joined(stepCalls) << "\n";
  if (!tabs.empty()) {
    std::vector<std::string> tabNames;
    for (const std::string& tab : tabs) tabNames.push_back(encode(tab));
    out << "tabs=" << joined(tabNames) << "\ntabPower=" << joined(tabPower)
        << "\ntabBlock=" << tabBlock << "\n";
  }
  return out.str();
}

RankStatus RankStatus::parse(const std::string& text) {
  const std::map<std::string, std::string> values = ion::parseStatusLines(text);
  RankStatus s;
  auto number = [&](const char* key, auto& value) {
    if (const auto it = values.find(key); it != values.end())
      ion::parseStatusValue(it->second, value, key);
  };
  auto text_ = [&](const char* key) {
    const auto it = values.find(key);
    return it == values.end() ? std::string() : it->second;
  };
  number("rank", s.rank);
  s.host = decodeStatusWord(text_("host"));
  number("time", s.wallTime);
  number("finished", s.finished);
  number("blocks", s.blocks);
  number("nrBlocks", s.nrBlocks);
  number("subbandBlocks", s.subbandBlocks);
  number("processingSeconds", s.processingSeconds);
  number("blockDuration", s.blockDuration);
  for (const std::string& name : split(text_("steps"))) s.steps.push_back(decodeStatusWord(name));
  for (const std::string& item : split(text_("stepSeconds"))) {
    double value = 0;
    ion::parseStatusValue(item, value, "stepSeconds");
    s.stepSeconds.push_back(value);
  }
  for (const std::string& item : split(text_("stepCalls"))) {
    uint64_t value = 0;
    ion::parseStatusValue(item, value, "stepCalls");
    s.stepCalls.push_back(value);
  }
  for (const std::string& name : split(text_("tabs"))) s.tabs.push_back(decodeStatusWord(name));
  for (const std::string& item : split(text_("tabPower"))) {
    double value = 0;
    ion::parseStatusValue(item, value, "tabPower");
    s.tabPower.push_back(value);
  }
  number("tabBlock", s.tabBlock);
  if (s.tabPower.size() != s.tabs.size())
    throw std::runtime_error("rank status: tabs and tabPower differ in length");
  if (s.stepSeconds.size() != s.steps.size() || s.stepCalls.size() != s.steps.size())
    throw std::runtime_error("rank status: steps, stepSeconds and stepCalls differ in length");
  return s;
}

RankStatus RankStatus::read(const std::string& path) {
  const std::string text = ion::readStatusText(path);
  try {
    return parse(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string RankStatus::formatLine() const {
  std::string line = format();  // every value one word
  std::replace(line.begin(), line.end(), '\n', ' ');
  if (!line.empty()) line.pop_back();
  return std::string(kLinePrefix) + line;
}

std::optional<RankStatus> RankStatus::parseLine(const std::string& line) {
  if (!line.starts_with(kLinePrefix)) return std::nullopt;
  std::string text = line.substr(kLinePrefix.size());
  std::replace(text.begin(), text.end(), ' ', '\n');
  return parse(text);
}

std::string rankStatusPath(const std::string& pattern, int rank) {
  std::string path = pattern;
  if (const size_t at = path.find("%r"); at != std::string::npos)
    path.replace(at, 2, std::to_string(rank));
  return path;
}

}  // namespace rtcp::correlator
