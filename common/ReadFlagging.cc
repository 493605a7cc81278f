// ObservationSettings: online flagging (FlaggingSettings.h), BG/P's OLAP.CNProc.online* keys
// and rtcp's own Rtcp.Flagging.* keys (SettingsReaders.h).
#include <array>
#include <cmath>
#include <optional>
#include <sstream>

#include "SettingsReaders.h"
#include "rtcp/FlaggingSettings.h"

namespace rtcp {
namespace {

const std::string kBgp = "OLAP.CNProc.";
const std::string kOwn = "Rtcp.Flagging.";

struct PreTypeName {
  PreFlaggerType type;
  const char* name;
};
constexpr std::array<PreTypeName, 6> kPreTypes{{
    {PreFlaggerType::kThreshold, "THRESHOLD"},
    {PreFlaggerType::kIntegratedThreshold, "INTEGRATED_THRESHOLD"},
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SUM_THRESHOLD"},
    {PreFlaggerType::kIntegratedThreshold2D, "INTEGRATED_THRESHOLD_2D"},
    {PreFlaggerType::kIntegratedSumThreshold2D, "INTEGRATED_SUM_THRESHOLD_2D"},
    {PreFlaggerType::kSumThreshold, "SUM_THRESHOLD"},
}};
/// BG/P's variants rtcp runs without their history or smoothing: (BG/P name, rtcp's type).
constexpr std::array<PreTypeName, 4> kPreVariants{{
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SUM_THRESHOLD_WITH_HISTORY"},
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SMOOTHED_SUM_THRESHOLD"},
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SMOOTHED_SUM_THRESHOLD_WITH_HISTORY"},
    {PreFlaggerType::kIntegratedSumThreshold2D, "INTEGRATED_SUM_THRESHOLD_2D_WITH_HISTORY"},
}};

struct PostTypeName {
  PostFlaggerType type;
  const char* name;
};
constexpr std::array<PostTypeName, 5> kPostTypes{{
    {PostFlaggerType::kAoflagger, "AOFLAGGER"},
    {PostFlaggerType::kThreshold, "THRESHOLD"},
    {PostFlaggerType::kSumThreshold, "SUM_THRESHOLD"},
    {PostFlaggerType::kSmoothedSumThreshold, "SMOOTHED_SUM_THRESHOLD"},
    {PostFlaggerType::kSmoothedSumThresholdWithHistory, "SMOOTHED_SUM_THRESHOLD_WITH_HISTORY"},
}};

struct PolarisationsName {
  PostPolarisations polarisations;
  const char* name;
};
constexpr std::array<PolarisationsName, 3> kPolarisations{{
    {PostPolarisations::kAll, "all"},
    {PostPolarisations::kParallel, "XXYY"},
    {PostPolarisations::kStokesI, "I"},
}};

template <typename Names>
std::string nameList(const Names& names) {
  std::string list;
  for (const auto& entry : names) list += (list.empty() ? "" : ", ") + std::string(entry.name);
  return list;
}

bool stage(const Parset& p, settings::Problems& problems, bool online, const std::string& name) {
  const std::string key = kBgp + name;
  const bool on = p.getBool(key, false);
  if (on && !online)
    problems.warn(key, "is T, but OLAP.CNProc.onlineFlagging is not: no flagging (as BG/P)");
  return on && online;
}

void readPreType(const Parset& p, settings::Problems& problems, FlaggingSettings& f) {
  const std::string key = kBgp + "onlinePreCorrelationFlaggingType";
  if (!p.isDefined(key)) return;
  const std::string value = p.getString(key);
  for (const PreTypeName& entry : kPreTypes)
    if (value == entry.name) {
      f.preType = entry.type;
      return;
    }
  for (const PreTypeName& entry : kPreVariants)
    if (value == entry.name) {
      f.preType = entry.type;
      problems.warn(key, value + ": rtcp runs " + preFlaggerTypeName(entry.type) +
                             " (no history between blocks, no smoothing)");
      return;
    }
  p.fail(key, "'" + value + "' is no pre-correlation flagger type (" + nameList(kPreTypes) + ")");
}

void readPostType(const Parset& p, settings::Problems& problems, FlaggingSettings& f) {
  const std::string key = kBgp + "onlinePostCorrelationFlaggingType";
  if (!p.isDefined(key)) return;
  const std::string value = p.getString(key);
  for (const PostTypeName& entry : kPostTypes)
    if (value == entry.name) {
      f.postType = entry.type;
      if (entry.type != PostFlaggerType::kAoflagger && f.postCorrelation)
        problems.warn(key, value +
                               ": rtcp flags the visibilities with AOFlagger's strategy "
                               "(SumThreshold on smoothed data, robust statistics)");
      return;
    }
  p.fail(key, "'" + value + "' is no post-correlation flagger type (" + nameList(kPostTypes) + ")");
}

FlaggerStatistics readStatistics(const Parset& p, const std::string& key) {
  const std::string value = p.getString(key, "WINSORIZED");
  if (value == "WINSORIZED") return FlaggerStatistics::kWinsorized;
  if (value == "NORMAL") return FlaggerStatistics::kNormal;
  p.fail(key, "'" + value + "' is no statistics type (WINSORIZED, NORMAL)");
  return FlaggerStatistics::kWinsorized;
}

double positive(const Parset& p, const std::string& key, double fallback, double high) {
  const double value = p.getDouble(key, fallback);
  if (!(value > 0) || !(value <= high))
    p.fail(key,
           settings::formatNumber(value) + " is outside (0, " + settings::formatNumber(high) + "]");
  return value;
}

/// rtcp's own keys (Rtcp.Flagging.*).
void readOwnKeys(const Parset& p, settings::Problems& problems, const ObservationSettings& s,
                 FlaggingSettings& f) {
  problems.guard([&] { f.preThreshold = positive(p, kOwn + "preCorrelation.threshold", 6, 1000); });
  problems.guard([&] {
    const std::string key = kOwn + "preCorrelation.spectraPerCell";
    f.spectraPerCell = settings::intInRange(p, key, std::min(16, s.spectraPerBlock), 1,
                                            std::max(1, s.spectraPerBlock));
  });
  problems.guard([&] {
    const std::string key = kOwn + "preCorrelation.maxWindow";
    f.maxWindow = settings::intInRange(p, key, 32, 1, 1 << 16);
    if ((f.maxWindow & (f.maxWindow - 1)) != 0)
      p.fail(key, std::to_string(f.maxWindow) + " is not a power of two");
  });
  problems.guard([&] {
    f.brokenFlaggedFraction = positive(p, kOwn + "brokenStation.flaggedFraction", 0.5, 1);
  });
  problems.guard(
      [&] { f.brokenPowerRatio = positive(p, kOwn + "brokenStation.powerRatio", 0.01, 1); });
  problems.guard([&] { f.strategy = p.getString(kOwn + "postCorrelation.strategy", ""); });
  problems.guard([&] {
    f.postWindow = settings::intInRange(p, kOwn + "postCorrelation.window", 32, 1, 4096);
  });
  problems.guard([&] {
    const std::string key = kOwn + "postCorrelation.overlap";
    f.postOverlap = settings::intInRange(p, key, std::min(4, (f.postWindow - 1) / 2), 0, 4096);
    if (2 * f.postOverlap >= f.postWindow)
      p.fail(key, std::to_string(f.postOverlap) + " integrations of overlap on each side leave " +
                      "nothing of a window of " + std::to_string(f.postWindow) +
                      " (Rtcp.Flagging.postCorrelation.window) to decide");
  });
  problems.guard([&] {
    const std::string key = kOwn + "postCorrelation.polarisations";
    const std::string value = p.getString(key, "all");
    for (const PolarisationsName& entry : kPolarisations)
      if (value == entry.name) {
        f.postPolarisations = entry.polarisations;
        return;
      }
    p.fail(key, "'" + value + "' is none of " + nameList(kPolarisations));
  });
  problems.guard([&] {
    f.postThreads = settings::intInRange(p, kOwn + "postCorrelation.threads", 1, 1, 256);
  });
}

}  // namespace

std::string preFlaggerTypeName(PreFlaggerType type) {
  for (const PreTypeName& entry : kPreTypes)
    if (entry.type == type) return entry.name;
  return "?";
}

std::string postFlaggerTypeName(PostFlaggerType type) {
  for (const PostTypeName& entry : kPostTypes)
    if (entry.type == type) return entry.name;
  return "?";
}

std::string flaggerStatisticsName(FlaggerStatistics statistics) {
  return statistics == FlaggerStatistics::kNormal ? "NORMAL" : "WINSORIZED";
}

std::string postPolarisationsName(PostPolarisations polarisations) {
  for (const PolarisationsName& entry : kPolarisations)
    if (entry.polarisations == polarisations) return entry.name;
  return "?";
}

std::vector<std::pair<std::string, std::string>> FlaggingSettings::effectiveKeys() const {
  using settings::formatBool;
  using settings::formatNumber;
  return {
      {kBgp + "onlineFlagging", formatBool(online)},
      {kBgp + "onlinePreCorrelationFlagging", formatBool(preCorrelation)},
      {kBgp + "onlinePreCorrelationNoChannelsFlagging", formatBool(preCorrelationNoChannels)},
      {kBgp + "onlinePostCorrelationFlagging", formatBool(postCorrelation)},
      {kBgp + "onlinePostCorrelationFlaggingDetectBrokenStations",
       formatBool(detectBrokenStations)},
      {kBgp + "onlinePreCorrelationFlaggingType", preFlaggerTypeName(preType)},
      {kBgp + "onlinePreCorrelationFlaggingStatisticsType", flaggerStatisticsName(preStatistics)},
      {kBgp + "onlinePostCorrelationFlaggingType", postFlaggerTypeName(postType)},
      {kBgp + "onlinePostCorrelationFlaggingStatisticsType", flaggerStatisticsName(postStatistics)},
      {kOwn + "preCorrelation.threshold", formatNumber(preThreshold)},
      {kOwn + "preCorrelation.spectraPerCell", std::to_string(spectraPerCell)},
      {kOwn + "preCorrelation.maxWindow", std::to_string(maxWindow)},
      {kOwn + "brokenStation.flaggedFraction", formatNumber(brokenFlaggedFraction)},
      {kOwn + "brokenStation.powerRatio", formatNumber(brokenPowerRatio)},
      {kOwn + "postCorrelation.strategy", settings::quoted(strategy)},
      {kOwn + "postCorrelation.window", std::to_string(postWindow)},
      {kOwn + "postCorrelation.overlap", std::to_string(postOverlap)},
      {kOwn + "postCorrelation.polarisations", postPolarisationsName(postPolarisations)},
      {kOwn + "postCorrelation.threads", std::to_string(postThreads)}};
}

std::string FlaggingSettings::summaryLine() const {
  if (!anyPreCorrelation() && !postCorrelation) return "online flagging: off";
  std::ostringstream line;
  line << "online flagging:";
  if (preCorrelation)
    line << " pre-correlation " << preFlaggerTypeName(preType) << " ("
         << flaggerStatisticsName(preStatistics) << ", threshold " << preThreshold
         << " sigma, cells of " << spectraPerCell << " spectra, windows up to " << maxWindow
         << ");";
  if (preCorrelationNoChannels) line << " in time over the whole subband;";
  if (detectBrokenStations)
    line << " broken stations (flagged beyond " << brokenFlaggedFraction << ", or power below "
         << brokenPowerRatio << " of the median, or no sky in their cross-correlations);";
  if (postCorrelation)
    line << " post-correlation AOFlagger (" << (strategy.empty() ? "LOFAR's strategy" : strategy)
         << ", polarisations " << postPolarisationsName(postPolarisations) << ", windows of "
         << postWindow << " integrations overlapping by " << postOverlap << ", " << postThreads
         << (postThreads == 1 ? " thread)" : " threads)");
  return line.str();
}

namespace settings {

void readFlagging(const Parset& p, Problems& problems, ObservationSettings& s) {
  FlaggingSettings& f = s.flagging;
  problems.guard([&] { f.online = p.getBool(kBgp + "onlineFlagging", false); });
  problems.guard(
      [&] { f.preCorrelation = stage(p, problems, f.online, "onlinePreCorrelationFlagging"); });
  problems.guard([&] {
    f.preCorrelationNoChannels =
        stage(p, problems, f.online, "onlinePreCorrelationNoChannelsFlagging");
  });
  problems.guard(
      [&] { f.postCorrelation = stage(p, problems, f.online, "onlinePostCorrelationFlagging"); });
  problems.guard([&] {
    const std::string key = kBgp + "onlinePostCorrelationFlaggingDetectBrokenStations";
    f.detectBrokenStations =
        p.isDefined(key)
            ? stage(p, problems, f.online, "onlinePostCorrelationFlaggingDetectBrokenStations")
            : f.preCorrelation;
  });
  problems.guard([&] { readPreType(p, problems, f); });
  problems.guard([&] {
    f.preStatistics = readStatistics(p, kBgp + "onlinePreCorrelationFlaggingStatisticsType");
  });
  problems.guard([&] { readPostType(p, problems, f); });
  problems.guard([&] {
    f.postStatistics = readStatistics(p, kBgp + "onlinePostCorrelationFlaggingStatisticsType");
  });
  readOwnKeys(p, problems, s, f);
  if (f.online && !f.anyPreCorrelation() && !f.postCorrelation)
    problems.warn(kBgp + "onlineFlagging",
                  "is T, but no stage is on (OLAP.CNProc.onlinePreCorrelationFlagging, "
                  "onlinePostCorrelationFlagging, ...): nothing is flagged");
}

}  // namespace settings
}  // namespace rtcp
