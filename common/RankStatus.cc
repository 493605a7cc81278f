#include "rtcp/RankStatus.h"

#include "rtcp/StatusText.h"

namespace rtcp::correlator {

std::string RankStatus::format() const {
  StatusWriter out;
  out.add("rank", rank);
  out.add("host", host);
  out.add("time", wallTime);
  out.add("finished", finished);
  out.add("blocks", blocks);
  out.add("nrBlocks", nrBlocks);
  out.add("subbandBlocks", subbandBlocks);
  out.add("processingSeconds", processingSeconds);
  out.add("blockDuration", blockDuration);
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
  in.take("rank", s.rank);
  in.take("host", s.host);
  in.take("time", s.wallTime);
  in.take("finished", s.finished);
  in.take("blocks", s.blocks);
  in.take("nrBlocks", s.nrBlocks);
  in.take("subbandBlocks", s.subbandBlocks);
  in.take("processingSeconds", s.processingSeconds);
  in.take("blockDuration", s.blockDuration);
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
  const std::optional<std::string> text = statusTextOfLine(kLinePrefix, line);
  if (!text) return std::nullopt;
  return parse(*text);
}

std::string rankStatusPath(const std::string& pattern, int rank) {
  std::string path = pattern;
  if (const size_t at = path.find("%r"); at != std::string::npos)
    path.replace(at, 2, std::to_string(rank));
  return path;
}

}  // namespace rtcp::correlator
