#include "ObservationConsole.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "PacketCounts.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe {
namespace {

namespace fs = std::filesystem;

/// A number as JSON (null for NaN and infinities).
std::string number(double value) {
  if (!std::isfinite(value)) return "null";
  std::ostringstream out;
  out << std::setprecision(10) << value;
  return out.str();
}

std::string flag(bool value) { return value ? "true" : "false"; }

/// The packets ionproc took in inside start..stop (as the summary counts them).
uint64_t receivedInWindow(const ion::IonStatus::Station& s) {
  return s.packetsAccepted -
         std::min(s.packetsAccepted, s.acceptedBeforeStart + s.acceptedAfterStop);
}

/// A log line's level and message: "DATE TIME PROCESS[PID] LEVEL COMPONENT: MESSAGE".
std::optional<std::pair<std::string, std::string>> warningOrError(const std::string& line) {
  for (const char* level : {" WARN ", " ERROR "}) {
    const size_t at = line.find(level);
    if (at == std::string::npos || at > 80) continue;  // in the prefix, not the message
    std::string message = line.substr(at + std::string(level).size());
    message.erase(0, message.find_first_not_of(' '));
    std::string name = level;
    return std::pair{name.substr(1, name.size() - 2), message};
  }
  return std::nullopt;
}

}  // namespace

ConsoleStatus::ConsoleStatus(const ObservationSettings& settings, std::string directory,
                             std::vector<std::string> measurementSets,
                             std::vector<std::string> beamFormedFiles)
    : settings_(settings),
      directory_(std::move(directory)),
      measurementSets_(std::move(measurementSets)),
      beamFormedFiles_(std::move(beamFormedFiles)) {}

void ConsoleStatus::noteIonStatus(const ion::IonStatus& status) {
  if (ion_ && status.wallTime == ion_->wallTime) return;
  if (ion_ && status.stations.size() == ion_->stations.size()) {
    historyTimes_.push_back(status.wallTime);
    for (size_t i = 0; i < status.stations.size(); ++i) {
      const auto& now = status.stations[i];
      const auto& before = ion_->stations[i];
      const uint64_t served = now.samplesServed - std::min(now.samplesServed, before.samplesServed);
      const uint64_t flagged =
          now.samplesFlagged - std::min(now.samplesFlagged, before.samplesFlagged);
      // No samples served in the interval: the fraction so far.
      const double fraction = served ? double(flagged) / double(served)
                              : now.samplesServed
                                  ? double(now.samplesFlagged) / double(now.samplesServed)
                                  : 0;
      historyFlagged_[now.name].push_back(fraction);
    }
    if (historyTimes_.size() > kMaxHistory) {
      historyTimes_.pop_front();
      for (auto& [name, values] : historyFlagged_)
        if (values.size() > kMaxHistory) values.pop_front();
    }
  }
  if (!ion_ || status.wallTime - ion_->wallTime >= 0.5) previousIon_ = ion_;
  ion_ = status;
}

void ConsoleStatus::noteRankStatuses(std::vector<correlator::RankStatus> ranks) {
  ranks_ = std::move(ranks);
  int64_t block = -1;
  for (const correlator::RankStatus& r : ranks_) block = std::max(block, r.tabBlock);
  if (block <= tabBlock_) return;
  tabBlock_ = block;
  std::map<std::string, std::pair<double, int>> power;  // sum over ranks, ranks
  for (const correlator::RankStatus& r : ranks_)
    if (r.tabBlock == block)
      for (size_t k = 0; k < r.tabs.size(); ++k) {
        power[r.tabs[k]].first += r.tabPower[k];
        ++power[r.tabs[k]].second;
      }
  tabTimes_.push_back(settings_.startTime + double(block) * settings_.blockDuration());
  for (const auto& [name, sum] : power) {
    std::deque<double>& values = tabPower_[name];
    values.resize(tabTimes_.size() - 1, NAN);  // a TAB that came late: no power before
    values.push_back(sum.first / sum.second);
  }
  if (tabTimes_.size() > kMaxHistory) {
    tabTimes_.pop_front();
    for (auto& [name, values] : tabPower_)
      if (values.size() > kMaxHistory) values.pop_front();
  }
}

std::string ConsoleStatus::tabsJson() const {
  std::ostringstream out;
  out << "[";
  bool first = true;
  for (const auto& [name, values] : tabPower_) {
    out << (first ? "\n    " : ",\n    ") << "{\"name\": " << jsonString(name) << ", \"times\": [";
    first = false;
    const size_t skip = tabTimes_.size() - std::min(tabTimes_.size(), values.size());
    for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << number(tabTimes_[i + skip]);
    out << "], \"power\": [";
    for (size_t i = 0; i < values.size(); ++i) out << (i ? "," : "") << number(values[i]);
    out << "]}";
  }
  out << "]";
  return out.str();
}

void ConsoleStatus::addEvent(double time, std::string level, std::string source,
                             std::string message) {
  events_.push_back({time, std::move(level), std::move(source), std::move(message)});
  if (events_.size() > kMaxEvents) events_.pop_front();
}

void ConsoleStatus::setSummary(const ObservationSummary& summary) {
  summaryJson_ = summary.toJson();
  while (!summaryJson_.empty() && summaryJson_.back() == '\n') summaryJson_.pop_back();
  phase_ = "ended";
}

std::string ConsoleStatus::stationsJson() const {
  std::ostringstream out;
  out << "[";
  if (!ion_) return "[]";
  const ion::IonStatus& st = *ion_;
  const double rate = packetsPerStreamSecond(settings_);
  // Packets due by the status's time: in real time by the wall clock, less the network
  // delay a packet may take; in a replay, those of the blocks served so far.
  const double duration = settings_.stopTime - settings_.startTime;
  const double due =
      settings_.realTime
          ? std::clamp(st.wallTime - settings_.startTime - settings_.maxNetworkDelay, 0.0, duration)
          : std::clamp(double(st.newestBlock + 1) * st.blockDuration, 0.0, duration);
  const bool comparable = previousIon_ && previousIon_->stations.size() == st.stations.size() &&
                          st.wallTime > previousIon_->wallTime;
  for (size_t i = 0; i < st.stations.size(); ++i) {
    const ion::IonStatus::Station& s = st.stations[i];
    const int index = settings_.stationIndex(s.name);
    const std::vector<bool> carrying =
        index >= 0 ? carryingInputs(settings_, index) : std::vector<bool>{};
    const double streams = double(std::count(carrying.begin(), carrying.end(), true));
    const uint64_t received = receivedInWindow(s);
    const uint64_t expected = uint64_t(std::llround(streams * rate * due));
    const uint64_t lost = expected > received ? expected - received : 0;
    double perSecond = NAN, recentLoss = NAN;
    if (comparable) {
      const ion::IonStatus::Station& b = previousIon_->stations[i];
      const double seconds = st.wallTime - previousIon_->wallTime;
      perSecond =
          double(s.packetsAccepted - std::min(s.packetsAccepted, b.packetsAccepted)) / seconds;
      // Of the packets due in the interval (real time, inside start..stop only).
      const double begin =
          std::max(previousIon_->wallTime - settings_.maxNetworkDelay, settings_.startTime);
      const double end = std::min(st.wallTime - settings_.maxNetworkDelay, settings_.stopTime);
      if (settings_.realTime && end - begin > 0.2) {
        const double dueThen = streams * rate * (end - begin);
        const double came = double(received - std::min(received, receivedInWindow(b)));
        recentLoss = std::clamp(1 - came / dueThen, 0.0, 1.0);
      }
    }
    out << (i ? ",\n    " : "\n    ") << "{\"name\": " << jsonString(s.name)
        << ", \"packetsReceived\": " << received << ", \"packetsExpected\": " << expected
        << ", \"packetsLost\": " << lost
        << ", \"lossFraction\": " << number(expected ? double(lost) / double(expected) : 0)
        << ", \"recentLossFraction\": " << number(recentLoss)
        << ", \"packetsPerSecond\": " << number(perSecond) << ", \"packetsLate\": " << s.late
        << ", \"packetsDuplicated\": " << s.duplicated << ", \"packetsRejected\": "
        << s.rejected - std::min(s.rejected, s.implausible + s.beforeStart)
        << ", \"packetsImplausible\": " << s.implausible << ", \"flaggedFraction\": "
        << number(s.samplesServed ? double(s.samplesFlagged) / double(s.samplesServed) : 0)
        << ", \"blocksServed\": " << s.blocksServed << ", \"blocksDropped\": " << s.blocksGone
        << "}";
  }
  out << "]";
  return out.str();
}

std::string ConsoleStatus::ranksJson() const {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < ranks_.size(); ++i) {
    const correlator::RankStatus& r = ranks_[i];
    out << (i ? ",\n    " : "\n    ") << "{\"rank\": " << r.rank
        << ", \"host\": " << jsonString(r.host) << ", \"time\": " << number(r.wallTime)
        << ", \"finished\": " << flag(r.finished) << ", \"blocks\": " << r.blocks
        << ", \"nrBlocks\": " << r.nrBlocks << ", \"subbandBlocks\": " << r.subbandBlocks
        << ", \"processingSeconds\": " << number(r.processingSeconds)
        << ", \"realTimeFactor\": " << number(r.realTimeFactor()) << ", \"secondsPerBlock\": "
        << number(r.blocks ? r.processingSeconds / double(r.blocks) : NAN) << ", \"steps\": [";
    for (size_t k = 0; k < r.steps.size(); ++k)
      out << (k ? ", " : "") << "{\"name\": " << jsonString(r.steps[k])
          << ", \"seconds\": " << number(r.stepSeconds[k]) << ", \"calls\": " << r.stepCalls[k]
          << ", \"meanSeconds\": "
          << number(r.stepCalls[k] ? r.stepSeconds[k] / double(r.stepCalls[k]) : NAN) << "}";
    out << "]}";
  }
  out << "]";
  return out.str();
}

std::string ConsoleStatus::queuesJson() const {
  std::ostringstream out;
  out << "\"ionproc\": ";
  if (ion_) {
    const ion::IonStatus& s = *ion_;
    out << "{\"time\": " << number(s.wallTime) << ", \"finished\": " << flag(s.finished)
        << ", \"newestBlock\": " << s.newestBlock << ", \"nrBlocks\": " << s.nrBlocks
        << ", \"marginSeconds\": "
        << number(settings_.realTime && s.newestBlock >= 0
                      ? settings_.secondsOfBuffer - s.newestBlockLag
                      : NAN)
        << ", \"bufferSeconds\": " << number(settings_.secondsOfBuffer)
        << ", \"integrations\": " << s.integrations
        << ", \"incompleteIntegrations\": " << s.incompleteIntegrations
        << ", \"storageQueued\": " << s.storageQueued << ", \"storageSent\": " << s.storageSent
        << ", \"storageWaiting\": "
        << s.storageQueued - std::min(s.storageQueued, s.storageSent + s.storageDropped)
        << ", \"storageDropped\": " << s.storageDropped
        << ", \"storageConnections\": " << s.storageConnections
        << ", \"beamFormedQueued\": " << s.beamFormedQueued
        << ", \"beamFormedSent\": " << s.beamFormedSent
        << ", \"beamFormedDropped\": " << s.beamFormedDropped
        << ", \"beamFormedSpooled\": " << s.beamFormedSpooled
        << ", \"beamFormedResent\": " << s.beamFormedResent
        << ", \"beamFormedUnprotected\": " << s.beamFormedUnprotected << "}";
  } else {
    out << "null";
  }
  out << ",\n  \"storage\": ";
  if (storage_) {
    const storage::StorageStatus& s = *storage_;
    out << "{\"time\": " << number(s.wallTime) << ", \"listening\": " << flag(s.listening)
        << ", \"finished\": " << flag(s.finished) << ", \"measurementSets\": " << s.measurementSets
        << ", \"measurementSetsReady\": " << s.measurementSetsReady
        << ", \"measurementSetsClosed\": " << s.measurementSetsClosed
        << ", \"integrationsExpected\": " << s.integrationsExpected
        << ", \"integrationsWritten\": " << s.integrationsWritten
        << ", \"integrationsFlagged\": " << s.integrationsFlagged << ", \"backlog\": " << s.backlog
        << ", \"backlogBytes\": " << s.backlogBytes << ", \"bytesWritten\": " << s.bytesWritten
        << ", \"failed\": " << flag(s.failed) << ", \"error\": " << jsonString(s.error)
        << ", \"beamFormedFiles\": " << s.beamFormedFiles
        << ", \"beamFormedBlocksExpected\": " << s.beamFormedBlocksExpected
        << ", \"beamFormedBlocksWritten\": " << s.beamFormedBlocksWritten
        << ", \"beamFormedSubbandBlocksLost\": " << s.beamFormedSubbandBlocksLost
        << ", \"beamFormedBytesWritten\": " << s.beamFormedBytesWritten
        << ", \"beamFormedFilesWritten\": [";
    for (size_t f = 0; f < s.beamFormedFileNames.size(); ++f)
      out << (f ? ", " : "") << "{\"name\": " << jsonString(s.beamFormedFileNames[f])
          << ", \"blocks\": " << s.beamFormedFileBlocks[f]
          << ", \"subbandBlocksLost\": " << s.beamFormedFileSubbandBlocksLost[f] << "}";
    out << "]}";
  } else {
    out << "null";
  }
  out << ",\n  \"output\": {\"measurementSets\": [";
  for (size_t i = 0; i < measurementSets_.size(); ++i)
    out << (i ? ", " : "") << jsonString(measurementSets_[i]);
  out << "], \"measurementSetsClosed\": " << (storage_ ? storage_->measurementSetsClosed : 0)
      << ", \"beamFormedFiles\": [";
  for (size_t i = 0; i < beamFormedFiles_.size(); ++i)
    out << (i ? ", " : "") << jsonString(beamFormedFiles_[i]);
  out << "]}";
  return out.str();
}

std::string ConsoleStatus::historyJson() const {
  std::ostringstream out;
  out << "{\"times\": [";
  for (size_t i = 0; i < historyTimes_.size(); ++i)
    out << (i ? "," : "") << number(historyTimes_[i]);
  out << "], \"stations\": {";
  bool first = true;
  for (const StationSettings& station : settings_.stations) {
    const auto it = historyFlagged_.find(station.name);
    if (it == historyFlagged_.end()) continue;
    out << (first ? "" : ", ") << jsonString(station.name) << ": [";
    first = false;
    for (size_t i = 0; i < it->second.size(); ++i) out << (i ? "," : "") << number(it->second[i]);
    out << "]";
  }
  out << "}}";
  return out.str();
}

std::string ConsoleStatus::json(double now) const {
  const ObservationSettings& s = settings_;
  const double duration = s.stopTime - s.startTime;
  const double observed =
      ion_ && ion_->newestBlock >= 0
          ? std::min(duration, double(ion_->newestBlock + 1) * ion_->blockDuration)
          : 0;
  std::ostringstream out;
  out << "{\n  \"console\": {\"version\": 1, \"time\": " << number(now)
      << ", \"refreshSeconds\": 1},\n"
      << "  \"observation\": {\"id\": " << s.observationId << ", \"phase\": " << jsonString(phase_)
      << ", \"start\": " << jsonString(formatUtc(s.startTime))
      << ", \"stop\": " << jsonString(formatUtc(s.stopTime))
      << ", \"startTime\": " << number(s.startTime) << ", \"stopTime\": " << number(s.stopTime)
      << ", \"durationSeconds\": " << number(duration)
      << ", \"observedSeconds\": " << number(observed)
      << ", \"progress\": " << number(duration > 0 ? observed / duration : 0)
      << ", \"realTime\": " << flag(s.realTime) << ", \"directory\": " << jsonString(directory_)
      << ", \"stations\": " << s.nrStations() << ", \"subbands\": " << s.nrSubbands()
      << ", \"channels\": " << s.channelsPerSubband
      << ", \"beamFormed\": " << flag(s.beamFormed.enabled()) << "},\n"
      << "  \"stations\": " << stationsJson() << ",\n"
      << "  \"ranks\": " << ranksJson() << ",\n  " << queuesJson() << ",\n"
      << "  \"events\": [";
  for (size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    out << (i ? ",\n    " : "\n    ") << "{\"time\": " << number(e.time)
        << ", \"level\": " << jsonString(e.level) << ", \"source\": " << jsonString(e.source)
        << ", \"message\": " << jsonString(e.message) << "}";
  }
  out << "],\n  \"flaggedHistory\": " << historyJson() << ",\n"
      << "  \"quickLook\": " << (quickLook_.empty() ? "null" : quickLook_)
      << ",\n"
      // Each TAB's recent power of a beam-formed observation, as the ranks that formed
      // them report it in their status.
      << "  \"tabs\": " << tabsJson() << ",\n"
      << "  \"summary\": " << (summaryJson_.empty() ? "null" : summaryJson_) << "\n}\n";
  return out.str();
}

ObservationConsole::ObservationConsole(const console::ConsoleAddress& address,
                                       const ObservationSettings& settings, std::string directory,
                                       std::vector<std::string> measurementSets,
                                       std::vector<std::string> beamFormedFiles)
    : directory_(directory),
      status_(settings, std::move(directory), std::move(measurementSets),
              std::move(beamFormedFiles)) {
  document_.set(status_.json(wallClock()));  // "starting", before the first part
  server_ = std::make_unique<console::ConsoleServer>(
      address, [this](const std::string& path) { return respond(path); });
  std::ofstream(directory_ + "/console.url") << server_->url() << "\n";
  RTCP_LOG_INFO("observe", "console at " << server_->url());
}

ObservationConsole::~ObservationConsole() { server_.reset(); }

std::optional<console::ConsoleResponse> ObservationConsole::respond(const std::string& path) const {
  if (path == "/status.json")
    return console::ConsoleResponse{200, "application/json", *document_.get()};
  if (path != "/" && path != "/index.html") return std::nullopt;
  return console::ConsoleResponse{
      200, "text/html; charset=utf-8",
      console::pageWithDocument(console::observationPage(), *document_.get())};
}

void ObservationConsole::scanLogs() {
  std::error_code error;
  for (auto it = fs::directory_iterator(directory_, error);
       !error && it != fs::directory_iterator(); it.increment(error)) {
    const fs::path path = it->path();
    if (path.extension() != ".log") continue;
    uint64_t& offset = logOffsets_[path.string()];
    std::ifstream in(path, std::ios::binary);
    in.seekg(0, std::ios::end);
    const uint64_t size = uint64_t(std::streamoff(in.tellg()));
    if (size < offset) offset = 0;  // a new file of that name
    // At most 1 MB a second of any log: a part that floods its log costs little here.
    const uint64_t begin = std::max(offset, size > (1u << 20) ? size - (1u << 20) : 0);
    in.seekg(std::streamoff(begin));
    std::string text(size - begin, '\0');
    in.read(text.data(), std::streamsize(text.size()));
    const size_t complete = text.rfind('\n');
    if (complete == std::string::npos) continue;
    offset = begin + complete + 1;
    std::istringstream lines(text.substr(0, complete));
    const std::string part = path.stem().string();
    for (std::string line; std::getline(lines, line);)
      if (auto found = warningOrError(line))
        status_.addEvent(wallClock(), found->first, part, found->second);
  }
}

void ObservationConsole::publish(double now, bool force) {
  if (!force && now - published_ < 0.4) return;
  published_ = now;
  scanLogs();
  document_.set(status_.json(now));
}

}  // namespace rtcp::observe
