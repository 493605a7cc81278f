#include "FlaggingReport.h"

#include <map>
#include <regex>

namespace rtcp::observe {

namespace {

struct Counts {
  uint64_t part = 0, whole = 0;
};

/// Adds each "NAME ... (PART of WHOLE)" or "NAME in PART of WHOLE unit" of `line` that
/// `entry` matches to counts[NAME].
void addEntries(const std::string& line, const std::regex& entry,
                std::map<std::string, Counts>& counts) {
  for (auto it = std::sregex_iterator(line.begin(), line.end(), entry);
       it != std::sregex_iterator(); ++it) {
    Counts& c = counts[(*it)[1].str()];
    c.part += std::stoull((*it)[2].str());
    c.whole += std::stoull((*it)[3].str());
  }
}

}  // namespace

void addFlaggingReports(const std::vector<std::string>& lines,
                        std::vector<StationSummary>& stations) {
  static const std::regex fraction("([^ ,;:]+) [0-9.]+ % \\(([0-9]+) of ([0-9]+)\\)");
  static const std::regex blocks("([^ ,;:]+) in ([0-9]+) of ([0-9]+) subband-blocks");
  static const std::regex integrations("([^ ,;:]+) in ([0-9]+) of ([0-9]+) subband-integrations");
  std::map<std::string, Counts> pre, post, broken, incoherent;
  for (const std::string& line : lines) {
    if (line.find("pre-correlation flagging: flagged of the samples") != std::string::npos)
      addEntries(line, fraction, pre);
    else if (line.find("post-correlation flagging per station") != std::string::npos)
      addEntries(line, fraction, post);
    else if (line.find("post-correlation broken stations") != std::string::npos)
      addEntries(line, integrations, incoherent);
    else if (line.find("broken stations, flagged whole") != std::string::npos)
      addEntries(line, blocks, broken);
  }
  auto ratio = [](const Counts& c) { return c.whole ? double(c.part) / double(c.whole) : 0.0; };
  for (StationSummary& station : stations) {
    station.preCorrelationFlagged = ratio(pre[station.name]);
    station.postCorrelationFlagged = ratio(post[station.name]);
    station.brokenSubbandBlocks = broken[station.name].part;
    station.incoherentIntegrations = incoherent[station.name].part;
  }
}

}  // namespace rtcp::observe
