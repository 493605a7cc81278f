#include "rtcp/UnknownKeys.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

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

/// "a.b.c" -> "c".
std::string lastName(const std::string& key) { return key.substr(key.rfind('.') + 1); }

/// The top-level prefixes of LOFAR's parsets (COBALT's, BG/P's, SAS's task specifications):
/// a key under them that rtcp does not read is LOFAR's, for one of its other systems.
bool isLofarPrefix(const std::string& prefix) {
  static const std::set<std::string> prefixes{"ApplCtrl", "Clock160", "Clock200", "Cobalt",
                                              "CorrAppl", "OLAP",     "ObsSW",    "Observation",
                                              "PIC",      "Version",  "_DPname",  "prefix"};
  return prefixes.count(prefix) > 0;
}

std::string lowerCase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return char(std::tolower(c)); });
  return text;
}

/// Edits (insert, delete, substitute, swap two neighbours) from a to b: the optimal string
/// alignment distance.
size_t editDistance(const std::string& a, const std::string& b) {
  // [i][j]: the distance between a's first i and b's first j characters.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

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

bool isNearMiss(const std::string& name, const std::string& known) {
  const std::string a = lowerCase(name), b = lowerCase(known);
  if (a == b) return true;
  // Short names are far apart after one edit (cpu, gpus, host): only long ones may differ.
  const size_t shorter = std::min(a.size(), b.size());
  const size_t allowed = shorter >= 8 ? 2 : shorter >= 4 ? 1 : 0;
  return allowed > 0 && editDistance(a, b) <= allowed;
}

UnknownKeys UnknownKeys::of(const Parset& parset) {
  std::set<std::string> askedPatterns;
  std::map<std::string, std::vector<std::string>> askedByParent;  // parent pattern -> keys
  for (const std::string& key : parset.askedKeys()) {
    const std::string pattern = keyPattern(key);
    if (askedPatterns.insert(pattern).second) askedByParent[parentOf(pattern)].push_back(key);
  }
  auto nearKeyOf = [&](const std::string& pattern) -> std::string {
    const auto siblings = askedByParent.find(parentOf(pattern));
    if (siblings == askedByParent.end()) return "";
    for (const std::string& known : siblings->second)
      if (isNearMiss(lastName(pattern), lastName(known))) return known;
    return "";
  };
  UnknownKeys result;
  std::map<std::string, size_t> groupIndex;
  for (const std::string& key : parset.unusedKeys()) {
    ++result.total;
    const std::string prefix = topLevelPrefix(key);
    UnknownPrefix& counted = result.perPrefix[prefix];
    if (counted.count++ == 0) counted.firstLine = parset.lineOf(key);
    const std::string pattern = keyPattern(key);
    // A key rtcp knows, of a station or beam not in this observation: counted only.
    if (askedPatterns.count(pattern) || isLofarBookkeeping(pattern)) continue;
    const std::string nearKey = nearKeyOf(pattern);
    // Not close to a key rtcp reads: LOFAR's own keys, and keys under parents rtcp never
    // reads (Sim.Source[1].* without a second source), are counted only.
    if (nearKey.empty() && (isLofarPrefix(prefix) || !askedByParent.count(parentOf(pattern))))
      continue;
    const auto [it, fresh] = groupIndex.emplace(pattern, result.listed.size());
    if (fresh) result.listed.push_back({pattern, key, parset.where(key), 0, nearKey});
    ++result.listed[it->second].count;
  }
  return result;
}

std::vector<std::string> UnknownKeys::describe() const {
  std::vector<std::string> lines;
  if (empty()) return lines;
  std::string counts =
      std::to_string(total) + " parset key" + (total == 1 ? "" : "s") + " not used by rtcp:";
  for (const auto& [prefix, counted] : perPrefix)
    counts += " " + (prefix.empty() ? std::string("(no prefix)") : prefix) + " " +
              std::to_string(counted.count) + " (from line " + std::to_string(counted.firstLine) +
              "),";
  counts.pop_back();
  lines.push_back(counts);
  for (const UnknownKeyGroup& group : listed) {
    std::string line = "unknown key " + group.firstKey + " (" + group.where + ")";
    if (group.count > 1)
      line += " and " + std::to_string(group.count - 1) + " more like " + group.pattern;
    lines.push_back(line + (group.nearKey.empty() ? ": ignored"
                                                  : ", close to " + group.nearKey +
                                                        " that rtcp reads: ignored (misspelt?)"));
  }
  return lines;
}

}  // namespace rtcp
