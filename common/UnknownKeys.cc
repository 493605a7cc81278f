#include "rtcp/UnknownKeys.h"

#include <algorithm>
#include <cctype>
#include <set>

namespace rtcp {
namespace {

/// CS001, RS106, DE601 (two capitals, three digits), optionally followed by an antenna
/// field (LBA, HBA, HBA0, HBA1).
bool isStationOrField(const std::string& part) {
  if (part.size() < 5 || !std::isupper(static_cast<unsigned char>(part[0])) ||
      !std::isupper(static_cast<unsigned char>(part[1])))
    return false;
  for (size_t i = 2; i < 5; ++i)
    if (!std::isdigit(static_cast<unsigned char>(part[i]))) return false;
  const std::string field = part.substr(5);
  return field.empty() || field == "LBA" || field == "HBA" || field == "HBA0" || field == "HBA1";
}

/// "a.b.c" -> "a.b." (the parent including its dot); "" for a key without dots.
std::string parentOf(const std::string& key) {
  const size_t dot = key.rfind('.');
  return dot == std::string::npos ? "" : key.substr(0, dot + 1);
}

std::string topLevelPrefix(const std::string& key) { return key.substr(0, key.find('.')); }

/// Keys LOFAR's parsets carry for its other systems (scheduling, archive, storage nodes,
/// the beam former's products) beside keys rtcp reads: no misspelling, so counted only.
bool isLofarBookkeeping(const std::string& pattern) {
  static const std::set<std::string> exact{"Observation.antennaArray",
                                           "Observation.claimPeriod",
                                           "Observation.clockMode",
                                           "Observation.nrAnaBeams",
                                           "Observation.nrTBBSettings",
                                           "Observation.preparePeriod",
                                           "Observation.processSubtype",
                                           "Observation.processType",
                                           "Observation.strategy",
                                           "Observation.topologyID",
                                           "Observation.momID",
                                           "Observation.originID",
                                           "Observation.KSPType",
                                           "Observation.channelWidth",
                                           "Observation.subbandWidth",
                                           "Observation.samplesPerSecond",
                                           "Observation.nrPolarisations",
                                           "Observation.existingStations",
                                           "Observation.existingAntennaFields",
                                           "Observation.longBaselines",
                                           "Observation.nrBeamformers",
                                           "Observation.receiverList",
                                           "Observation.Scheduler",
                                           "Observation.otdbID"};
  static const std::vector<std::string> suffixes{".duration",
                                                 ".momID",
                                                 ".nrTabRings",
                                                 ".nrTiedArrayBeams",
                                                 ".startTime",
                                                 ".tabRingSize",
                                                 ".target",
                                                 ".archived",
                                                 ".deleted",
                                                 ".dirmask",
                                                 ".identifications",
                                                 ".mountpoints",
                                                 ".namemask",
                                                 ".percentageWritten",
                                                 ".retentiontime",
                                                 ".skip",
                                                 ".minimalNrStations",
                                                 ".partitionList",
                                                 ".stationSet",
                                                 ".storageCapacity",
                                                 ".storageNodeList",
                                                 ".imageNodeList",
                                                 ".rank",
                                                 ".RSP.receiver"};
  if (exact.count(pattern)) return true;
  for (const std::string& suffix : suffixes)
    if (pattern.ends_with(suffix)) return true;
  // The beam former's products when rtcp makes none: their file lists.
  return pattern.starts_with("Observation.DataProducts.Output_") &&
         !pattern.starts_with("Observation.DataProducts.Output_Correlated.");
}

}  // namespace

std::string keyPattern(const std::string& key) {
  std::string pattern;
  size_t start = 0;
  while (start <= key.size()) {
    size_t dot = key.find('.', start);
    if (dot == std::string::npos) dot = key.size();
    std::string part = key.substr(start, dot - start);
    // Beam[12] -> Beam[*]
    for (size_t open = part.find('['); open != std::string::npos; open = part.find('[', open + 1)) {
      const size_t close = part.find(']', open);
      if (close == std::string::npos) break;
      const std::string inside = part.substr(open + 1, close - open - 1);
      if (!inside.empty() && std::all_of(inside.begin(), inside.end(),
                                         [](unsigned char c) { return std::isdigit(c); }))
        part.replace(open + 1, close - open - 1, 1, '*');
    }
    if (isStationOrField(part)) part.assign(1, '*');
    pattern += part;
    if (dot < key.size()) pattern += '.';
    start = dot + 1;
  }
  return pattern;
}

UnknownKeys UnknownKeys::of(const Parset& parset) {
  std::set<std::string> askedPatterns, askedParents;
  for (const std::string& key : parset.askedKeys()) {
    const std::string pattern = keyPattern(key);
    askedPatterns.insert(pattern);
    askedParents.insert(parentOf(pattern));
  }
  UnknownKeys result;
  std::map<std::string, size_t> groupIndex;
  for (const std::string& key : parset.unusedKeys()) {
    ++result.total;
    ++result.perPrefix[topLevelPrefix(key)];
    const std::string pattern = keyPattern(key);
    // A key rtcp knows, of a station or beam not in this observation: counted only.
    if (askedPatterns.count(pattern) || !askedParents.count(parentOf(pattern)) ||
        isLofarBookkeeping(pattern))
      continue;
    const auto [it, fresh] = groupIndex.emplace(pattern, result.listed.size());
    if (fresh) result.listed.push_back({pattern, key, parset.where(key), 0});
    ++result.listed[it->second].count;
  }
  return result;
}

std::vector<std::string> UnknownKeys::describe() const {
  std::vector<std::string> lines;
  if (empty()) return lines;
  std::string counts =
      std::to_string(total) + " parset key" + (total == 1 ? "" : "s") + " not used by rtcp:";
  for (const auto& [prefix, count] : perPrefix)
    counts += " " + (prefix.empty() ? std::string("(no prefix)") : prefix) + " " +
              std::to_string(count) + ",";
  counts.pop_back();
  lines.push_back(counts);
  for (const UnknownKeyGroup& group : listed) {
    std::string line = "unknown key " + group.firstKey + " (" + group.where + ")";
    if (group.count > 1)
      line += " and " + std::to_string(group.count - 1) + " more like " + group.pattern;
    lines.push_back(line + ", beside keys rtcp reads: ignored (misspelt?)");
  }
  return lines;
}

}  // namespace rtcp
