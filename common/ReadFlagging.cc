// ObservationSettings: online flagging (FlaggingSettings.h), BG/P's OLAP.CNProc.online* keys
// and rtcp's own Rtcp.Flagging.* keys (SettingsReaders.h).
#include <array>
#include <cmath>
#include <optional>
#include <span>
#include <sstream>

#include "SettingsReaders.h"
#include "rtcp/FlaggingSettings.h"

namespace rtcp {
namespace {

const std::string kBgp = "OLAP.CNProc.";
const std::string kOwn = "Rtcp.Flagging.";

/// A value of an enum and the name a parset gives it.
template <typename Value>
struct Named {
  Value value;
  const char* name;
};

constexpr std::array<Named<PreFlaggerType>, 6> kPreTypes{{
    {PreFlaggerType::kThreshold, "THRESHOLD"},
    {PreFlaggerType::kIntegratedThreshold, "INTEGRATED_THRESHOLD"},
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SUM_THRESHOLD"},
    {PreFlaggerType::kIntegratedThreshold2D, "INTEGRATED_THRESHOLD_2D"},
    {PreFlaggerType::kIntegratedSumThreshold2D, "INTEGRATED_SUM_THRESHOLD_2D"},
    {PreFlaggerType::kSumThreshold, "SUM_THRESHOLD"},
}};
/// BG/P's variants rtcp runs without their history or smoothing: (rtcp's type, BG/P name).
constexpr std::array<Named<PreFlaggerType>, 4> kPreVariants{{
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SUM_THRESHOLD_WITH_HISTORY"},
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SMOOTHED_SUM_THRESHOLD"},
    {PreFlaggerType::kIntegratedSumThreshold, "INTEGRATED_SMOOTHED_SUM_THRESHOLD_WITH_HISTORY"},
    {PreFlaggerType::kIntegratedSumThreshold2D, "INTEGRATED_SUM_THRESHOLD_2D_WITH_HISTORY"},
}};

constexpr std::array<Named<PostFlaggerType>, 5> kPostTypes{{
    {PostFlaggerType::kAoflagger, "AOFLAGGER"},
    {PostFlaggerType::kThreshold, "THRESHOLD"},
    {PostFlaggerType::kSumThreshold, "SUM_THRESHOLD"},
    {PostFlaggerType::kSmoothedSumThreshold, "SMOOTHED_SUM_THRESHOLD"},
    {PostFlaggerType::kSmoothedSumThresholdWithHistory, "SMOOTHED_SUM_THRESHOLD_WITH_HISTORY"},
}};

constexpr std::array<Named<FlaggerStatistics>, 2> kStatistics{{
    {FlaggerStatistics::kWinsorized, "WINSORIZED"},
    {FlaggerStatistics::kNormal, "NORMAL"},
}};

constexpr std::array<Named<PostPolarisations>, 3> kPolarisations{{
    {PostPolarisations::kAll, "all"},
    {PostPolarisations::kParallel, "XXYY"},
    {PostPolarisations::kStokesI, "I"},
}};

/// The entry of `names` called `name`; null when none is.
template <typename Value>
const Named<Value>* byName(std::span<const Named<Value>> names, const std::string& name) {
  for (const Named<Value>& entry : names)
    if (name == entry.name) return &entry;
  return nullptr;
}

/// The name of `value` in `names` ("?" when it has none).
template <typename Value>
std::string nameOf(std::span<const Named<Value>> names, Value value) {
  for (const Named<Value>& entry : names)
    if (entry.value == value) return entry.name;
  return "?";
}

/// "A, B, C": the names of `names`, for an error listing what a key accepts.
template <typename Value>
std::string nameList(std::span<const Named<Value>> names) {
  std::string list;
  for (const Named<Value>& entry : names)
    list += (list.empty() ? "" : ", ") + std::string(entry.name);
  return list;
}

/// One stage's BG/P keys: OLAP.CNProc.online<Stage>Flagging (on with onlineFlagging only),
/// ...FlaggingType (one of `types`, or a BG/P name of `variants` rtcp runs as one of them)
/// and ...FlaggingStatisticsType.
template <typename Type>
struct StageKeys {
  std::string on;                         ///< OLAP.CNProc.online<Stage>Flagging
  std::string kind;                       ///< "pre-correlation", in the error naming the types
  std::span<const Named<Type>> types;     ///< rtcp's types by BG/P's names (the error lists these)
  std::span<const Named<Type>> variants;  ///< BG/P's further names, each run as one of types
  /// The warning on the type key given `given`, run as `runs`, the stage `on` or not; empty:
  /// none.
  std::string (*note)(const std::string& given, Type runs, bool on);

  std::string type() const { return on + "Type"; }
  std::string statistics() const { return on + "StatisticsType"; }
};

const StageKeys<PreFlaggerType> kPre{
    kBgp + "onlinePreCorrelationFlagging", "pre-correlation", kPreTypes, kPreVariants,
    [](const std::string& given, PreFlaggerType runs, bool) -> std::string {
      const std::string name = nameOf<PreFlaggerType>(kPreTypes, runs);
      if (given == name) return "";
      return given + ": rtcp runs " + name + " (no history between blocks, no smoothing)";
    }};

const StageKeys<PostFlaggerType> kPost{
    kBgp + "onlinePostCorrelationFlagging",
    "post-correlation",
    kPostTypes,
    {},
    [](const std::string& given, PostFlaggerType runs, bool on) -> std::string {
      if (runs == PostFlaggerType::kAoflagger || !on) return "";
      return given +
             ": rtcp flags the visibilities with AOFlagger's strategy "
             "(SumThreshold on smoothed data, robust statistics)";
    }};

/// A stage's switch: on when `key` and OLAP.CNProc.onlineFlagging are (a warning when
/// only `key` is, as BG/P).
bool stageSwitch(const Parset& p, settings::Problems& problems, bool online,
                 const std::string& key) {
  const bool on = p.getBool(key, false);
  if (on && !online)
    problems.warn(key, "is T, but OLAP.CNProc.onlineFlagging is not: no flagging (as BG/P)");
  return on && online;
}

template <typename Type>
void readType(const Parset& p, settings::Problems& problems, const StageKeys<Type>& stage, bool on,
              Type& type) {
  const std::string key = stage.type();
  if (!p.isDefined(key)) return;
  const std::string value = p.getString(key);
  const Named<Type>* entry = byName(stage.types, value);
  if (!entry) entry = byName(stage.variants, value);
  if (!entry)
    p.fail(key,
           "'" + value + "' is no " + stage.kind + " flagger type (" + nameList(stage.types) + ")");
  type = entry->value;
  const std::string note = stage.note(value, type, on);
  if (!note.empty()) problems.warn(key, note);
}

FlaggerStatistics readStatistics(const Parset& p, const std::string& key) {
  const std::string value = p.getString(key, "WINSORIZED");
  const Named<FlaggerStatistics>* entry = byName<FlaggerStatistics>(kStatistics, value);
  if (!entry)
    p.fail(key, "'" + value + "' is no statistics type (" +
                    nameList<FlaggerStatistics>(kStatistics) + ")");
  return entry->value;
}

/// A stage's BG/P keys (StageKeys) into its switch, type and statistics.
template <typename Type>
void readStage(const Parset& p, settings::Problems& problems, bool online,
               const StageKeys<Type>& stage, bool& on, Type& type, FlaggerStatistics& statistics) {
  problems.guard([&] { on = stageSwitch(p, problems, online, stage.on); });
  problems.guard([&] { readType(p, problems, stage, on, type); });
  problems.guard([&] { statistics = readStatistics(p, stage.statistics()); });
}

double positive(const Parset& p, const std::string& key, double fallback, double high) {
  const double value = p.getDouble(key, fallback);
  if (!(value > 0) || !(value <= high))
    p.fail(key,
           settings::formatNumber(value) + " is outside (0, " + settings::formatNumber(high) + "]");
  return value;
}

/// Rtcp.Flagging.subbandLevel.*: the view across subbands (input/SubbandLevelFlagger.h). On
/// with pre-correlation flagging unless `enabled` says otherwise; like every stage, only
/// with OLAP.CNProc.onlineFlagging on.
void readSubbandLevelKeys(const Parset& p, settings::Problems& problems, FlaggingSettings& f) {
  SubbandLevelFlagging& level = f.subbandLevel;
  problems.guard([&] {
    const std::string key = kOwn + "subbandLevel.enabled";
    const bool on = p.getBool(key, f.preCorrelation);
    if (on && !f.online && p.isDefined(key))
      problems.warn(key, "is T, but OLAP.CNProc.onlineFlagging is not: no flagging");
    level.on = on && f.online;
  });
  problems.guard([&] {
    level.halfWindow = settings::intInRange(p, kOwn + "subbandLevel.halfWindow", 8, 1, 256);
  });
  problems.guard([&] { level.sigmas = positive(p, kOwn + "subbandLevel.sigmas", 6, 1000); });
  problems.guard([&] { level.minimumDb = positive(p, kOwn + "subbandLevel.minimumDb", 15, 100); });
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
    const std::string value = p.getString(key, "I");
    const Named<PostPolarisations>* entry = byName<PostPolarisations>(kPolarisations, value);
    if (!entry)
      p.fail(key, "'" + value + "' is none of " + nameList<PostPolarisations>(kPolarisations));
    f.postPolarisations = entry->value;
  });
  problems.guard([&] {
    f.postThreads = settings::intInRange(p, kOwn + "postCorrelation.threads", 1, 1, 256);
  });
  readSubbandLevelKeys(p, problems, f);
}

}  // namespace

std::string preFlaggerTypeName(PreFlaggerType type) {
  return nameOf<PreFlaggerType>(kPreTypes, type);
}

std::string postFlaggerTypeName(PostFlaggerType type) {
  return nameOf<PostFlaggerType>(kPostTypes, type);
}

std::string flaggerStatisticsName(FlaggerStatistics statistics) {
  return nameOf<FlaggerStatistics>(kStatistics, statistics);
}

std::string postPolarisationsName(PostPolarisations polarisations) {
  return nameOf<PostPolarisations>(kPolarisations, polarisations);
}

std::vector<std::pair<std::string, std::string>> FlaggingSettings::effectiveKeys() const {
  using settings::formatBool;
  using settings::formatNumber;
  return {{kBgp + "onlineFlagging", formatBool(online)},
          {kPre.on, formatBool(preCorrelation)},
          {kBgp + "onlinePreCorrelationNoChannelsFlagging", formatBool(preCorrelationNoChannels)},
          {kPost.on, formatBool(postCorrelation)},
          {kBgp + "onlinePostCorrelationFlaggingDetectBrokenStations",
           formatBool(detectBrokenStations)},
          {kPre.type(), preFlaggerTypeName(preType)},
          {kPre.statistics(), flaggerStatisticsName(preStatistics)},
          {kPost.type(), postFlaggerTypeName(postType)},
          {kPost.statistics(), flaggerStatisticsName(postStatistics)},
          {kOwn + "preCorrelation.threshold", formatNumber(preThreshold)},
          {kOwn + "preCorrelation.spectraPerCell", std::to_string(spectraPerCell)},
          {kOwn + "preCorrelation.maxWindow", std::to_string(maxWindow)},
          {kOwn + "brokenStation.flaggedFraction", formatNumber(brokenFlaggedFraction)},
          {kOwn + "brokenStation.powerRatio", formatNumber(brokenPowerRatio)},
          {kOwn + "postCorrelation.strategy", settings::quoted(strategy)},
          {kOwn + "postCorrelation.window", std::to_string(postWindow)},
          {kOwn + "postCorrelation.overlap", std::to_string(postOverlap)},
          {kOwn + "postCorrelation.polarisations", postPolarisationsName(postPolarisations)},
          {kOwn + "postCorrelation.threads", std::to_string(postThreads)},
          {kOwn + "subbandLevel.enabled", formatBool(subbandLevel.on)},
          {kOwn + "subbandLevel.halfWindow", std::to_string(subbandLevel.halfWindow)},
          {kOwn + "subbandLevel.sigmas", formatNumber(subbandLevel.sigmas)},
          {kOwn + "subbandLevel.minimumDb", formatNumber(subbandLevel.minimumDb)}};
}

std::string FlaggingSettings::summaryLine() const {
  if (!anyPreCorrelation() && !postCorrelation && !subbandLevel.on) return "online flagging: off";
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
  if (subbandLevel.on)
    line << " whole subbands above the bandpass across subbands (running median of +-"
         << subbandLevel.halfWindow << ", threshold max(" << subbandLevel.minimumDb << " dB, "
         << subbandLevel.sigmas << " sigma));";
  if (postCorrelation)
    line << " post-correlation AOFlagger ("
         << (strategy.empty() ? "rtcp's online strategy" : strategy) << ", polarisations "
         << postPolarisationsName(postPolarisations) << ", windows of " << postWindow
         << " integrations overlapping by " << postOverlap << ", " << postThreads
         << (postThreads == 1 ? " thread)" : " threads)");
  return line.str();
}

namespace settings {

void readFlagging(const Parset& p, Problems& problems, ObservationSettings& s) {
  FlaggingSettings& f = s.flagging;
  problems.guard([&] { f.online = p.getBool(kBgp + "onlineFlagging", false); });
  readStage(p, problems, f.online, kPre, f.preCorrelation, f.preType, f.preStatistics);
  problems.guard([&] {
    f.preCorrelationNoChannels =
        stageSwitch(p, problems, f.online, kBgp + "onlinePreCorrelationNoChannelsFlagging");
  });
  readStage(p, problems, f.online, kPost, f.postCorrelation, f.postType, f.postStatistics);
  problems.guard([&] {
    const std::string key = kBgp + "onlinePostCorrelationFlaggingDetectBrokenStations";
    f.detectBrokenStations =
        p.isDefined(key) ? stageSwitch(p, problems, f.online, key) : f.preCorrelation;
  });
  readOwnKeys(p, problems, s, f);
  if (f.online && !f.anyPreCorrelation() && !f.postCorrelation && !f.subbandLevel.on)
    problems.warn(kBgp + "onlineFlagging",
                  "is T, but no stage is on (OLAP.CNProc.onlinePreCorrelationFlagging, "
                  "onlinePostCorrelationFlagging, Rtcp.Flagging.subbandLevel.enabled, ...): "
                  "nothing is flagged");
}

}  // namespace settings
}  // namespace rtcp
