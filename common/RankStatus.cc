#include "rtcp/RankStatus.h"

#include "rtcp/StatusText.h"

namespace rtcp::correlator {
namespace {

/// The single values with their key names, for writing and reading alike.
template <typename StatusT, typename Visit>
void forEachValue(StatusT& s, Visit visit) {
  visit("rank", s.rank);
  visit("host", s.host);
  visit("time", s.wallTime);
  visit("finished", s.finished);
  visit("blocks", s.blocks);
  visit("nrBlocks", s.nrBlocks);
  visit("subbandBlocks", s.subbandBlocks);
  visit("processingSeconds", s.processingSeconds);
  visit("blockDuration", s.blockDuration);
}

}  // namespace

std::string RankStatus::format() const {
  StatusWriter out;
  forEachValue(*this, [&](const char* key, const auto& value) { out.add(key, value); });
  out.addList("steps", steps);
  out.addList("stepSeconds", stepSeconds);
  out.addList("stepCalls", stepCalls);
  if (!tabs.empty()) {
    out.addList("tabs", tabs);
    out.addList("tabPower", tabPower);
    out.add("tabBlock", tabBlock);
  }
  return out.text();
}

RankStatus RankStatus::parse(const std::string& text) {
  const StatusReader in(text);
  RankStatus s;
  forEachValue(s, [&](const char* key, auto& value) { in.take(key, value); });
  in.takeList("steps", s.steps);
  in.takeList("stepSeconds", s.stepSeconds);
  in.takeList("stepCalls", s.stepCalls);
  in.takeList("tabs", s.tabs);
  in.takeList("tabPower", s.tabPower);
  in.take("tabBlock", s.tabBlock);
  if (s.tabPower.size() != s.tabs.size())
    throw std::runtime_error("rank status: tabs and tabPower differ in length");
  if (s.stepSeconds.size() != s.steps.size() || s.stepCalls.size() != s.steps.size())
    throw std::runtime_error("rank status: steps, stepSeconds and stepCalls differ in length");
  return s;
}

RankStatus RankStatus::read(const std::string& path) { return readStatusFile(path, &parse); }

std::string RankStatus::formatLine() const { return statusLine(kLinePrefix, format()); }

std::optional<RankStatus> RankStatus::parseLine(const std::string& line) {
  return parseStatusLine(kLinePrefix, line, &parse);
}

std::string rankStatusPath(const std::string& pattern, int rank) {
  std::string path = pattern;
  if (const size_t at = path.find("%r"); at != std::string::npos)
    path.replace(at, 2, std::to_string(rank));
  return path;
}

}  // namespace rtcp::correlator
