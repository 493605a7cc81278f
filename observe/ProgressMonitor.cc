#include "ProgressMonitor.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"

namespace rtcp::observe {

ion::IonStatus mergeStatuses(const ObservationSettings& settings,
                             const std::vector<ion::IonStatus>& statuses) {
  ion::IonStatus merged = statuses.at(0);
  for (size_t i = 1; i < statuses.size(); ++i) {
    const ion::IonStatus& s = statuses[i];
    merged.wallTime = std::max(merged.wallTime, s.wallTime);
    merged.finished = merged.finished && s.finished;
    merged.newestBlock = std::min(merged.newestBlock, s.newestBlock);
    merged.newestBlockLag = std::max(merged.newestBlockLag, s.newestBlockLag);
    merged.stations.insert(merged.stations.end(), s.stations.begin(), s.stations.end());
    merged.blocksIntegrated += s.blocksIntegrated;
    merged.integrations += s.integrations;
    merged.incompleteIntegrations += s.incompleteIntegrations;
    merged.storageQueued += s.storageQueued;
    merged.storageSent += s.storageSent;
    merged.storageDropped += s.storageDropped;
    merged.storageConnections += s.storageConnections;
    merged.linkConnectionsRefused += s.linkConnectionsRefused;
  }
  std::stable_sort(merged.stations.begin(), merged.stations.end(),
                   [&](const auto& a, const auto& b) {
                     return settings.stationIndex(a.name) < settings.stationIndex(b.name);
                   });
  return merged;
}

std::optional<ion::IonStatus> readStatuses(const ObservationSettings& settings,
                                           const std::vector<std::string>& paths) {
  std::vector<ion::IonStatus> statuses;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return std::nullopt;
    statuses.push_back(ion::IonStatus::read(path));
  }
  return mergeStatuses(settings, statuses);
}

std::optional<storage::StorageStatus> readStorageStatuses(const std::vector<std::string>& paths) {
  if (paths.empty()) return std::nullopt;
  storage::StorageStatus merged;
  merged.listening = merged.finished = true;
  for (const std::string& path : paths) {
    std::error_code error;
    if (!std::filesystem::exists(path, error)) return std::nullopt;
    const storage::StorageStatus s = storage::StorageStatus::read(path);
    merged.wallTime = std::max(merged.wallTime, s.wallTime);
    merged.listening = merged.listening && s.listening;
    merged.finished = merged.finished && s.finished;
    merged.measurementSets += s.measurementSets;
    merged.measurementSetsCreated += s.measurementSetsCreated;
    merged.measurementSetsReady += s.measurementSetsReady;
    merged.measurementSetsClosed += s.measurementSetsClosed;
    merged.integrationsExpected += s.integrationsExpected;
    merged.blocksReceived += s.blocksReceived;
    merged.blocksRejected += s.blocksRejected;
    merged.integrationsWritten += s.integrationsWritten;
    merged.integrationsFlagged += s.integrationsFlagged;
    merged.backlog += s.backlog;
    merged.backlogBytes += s.backlogBytes;
    merged.bytesReceived += s.bytesReceived;
    merged.bytesWritten += s.bytesWritten;
    merged.failed = merged.failed || s.failed;
    merged.integrationsLost += s.integrationsLost;
    merged.connectionsRefused += s.connectionsRefused;
    merged.blocksDuplicated += s.blocksDuplicated;
    merged.beamFormedFiles += s.beamFormedFiles;
    merged.beamFormedBlocksExpected += s.beamFormedBlocksExpected;
    merged.beamFormedBlocksWritten += s.beamFormedBlocksWritten;
    merged.beamFormedSubbandBlocksLost += s.beamFormedSubbandBlocksLost;
    merged.beamFormedBytesWritten += s.beamFormedBytesWritten;
    merged.beamFormedReceived += s.beamFormedReceived;
    merged.beamFormedRejected += s.beamFormedRejected;
    for (size_t f = 0; f < s.beamFormedFileNames.size(); ++f) {
      merged.beamFormedFileNames.push_back(s.beamFormedFileNames[f]);
      merged.beamFormedFileBlocks.push_back(s.beamFormedFileBlocks.at(f));
      merged.beamFormedFileSubbandBlocksLost.push_back(s.beamFormedFileSubbandBlocksLost.at(f));
    }
    if (merged.error.empty()) merged.error = s.error;
  }
  return merged;
}

ProgressMonitor::ProgressMonitor(const ObservationSettings& settings,
                                 std::vector<std::string> statusPaths, bool terminal,
                                 double plainIntervalSeconds,
                                 std::vector<std::string> storageStatusPaths)
    : settings_(settings),
      statusPaths_(std::move(statusPaths)),
      terminal_(terminal),
      plainInterval_(plainIntervalSeconds),
      storageStatusPaths_(std::move(storageStatusPaths)) {}

double ProgressMonitor::packetBytes(int station) const {
  const size_t streams = std::max<size_t>(1, settings_.stations.at(size_t(station)).inputs.size());
  const double payload =
      double(settings_.nrSubbands()) * kRspSamplesPerPacket * settings_.bitsPerSample / 2;
  return double(kRspHeaderSize) + payload / double(streams);
}

std::string ProgressMonitor::line(const ion::IonStatus& s, const ion::IonStatus* previous) const {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1);
  const double total = double(s.nrBlocks) * s.blockDuration;
  out << double(s.newestBlock + 1) * s.blockDuration << "/" << total << " s observed";
  if (previous && s.wallTime > previous->wallTime &&
      previous->stations.size() == s.stations.size()) {
    double bytes = 0;
    for (size_t i = 0; i < s.stations.size() && int(i) < settings_.nrStations(); ++i)
      bytes += double(s.stations[i].packetsReceived - previous->stations[i].packetsReceived) *
               packetBytes(int(i));
    out << " | in " << std::setprecision(3) << bytes * 8 / 1e9 / (s.wallTime - previous->wallTime)
        << " Gb/s";
  }
  out << std::setprecision(1) << " | loss";
  uint64_t dropped = 0;
  for (const ion::IonStatus::Station& st : s.stations) {
    const double lost =
        st.samplesServed ? 100.0 * double(st.samplesFlagged) / double(st.samplesServed) : 0.0;
    out << " " << st.name << " " << lost << "%";
    dropped = std::max(dropped, st.blocksGone);
  }
  out << " | dropped " << dropped << " blocks";
  if (const auto& st = latestStorage_; st && !st->listening) {
    out << " | waiting for storage-sink: " << st->measurementSetsCreated << " MSs created, "
        << st->measurementSetsReady << "/" << st->measurementSets << " ready";
  } else if (st) {
    out << " | stored " << st->integrationsWritten << "/" << st->integrationsExpected
        << " integrations, " << st->integrationsFlagged << " flagged, backlog " << st->backlog;
  } else if (settings_.correlatedOutput.enabled && s.storageQueued > 0 &&
             s.storageConnections == 0) {
    out << " | waiting for storage-sink";
  }
  if (settings_.realTime) {
    out << " | margin " << std::setprecision(2) << settings_.secondsOfBuffer - s.newestBlockLag
        << " s of " << settings_.secondsOfBuffer << " s buffer";
  } else if (previous && s.wallTime > previous->wallTime) {
    const double observed = double(s.newestBlock - previous->newestBlock) * s.blockDuration;
    out << " | " << std::setprecision(2) << observed / (s.wallTime - previous->wallTime)
        << "x real time";
  }
  return out.str();
}

void ProgressMonitor::update(double wallTime) {
  try {
    if (auto storage = readStorageStatuses(storageStatusPaths_))
      latestStorage_ = std::move(storage);
  } catch (const std::exception& e) {
    RTCP_LOG_DEBUG("observe", e.what());  // being replaced; next time
  }
  try {
    std::optional<ion::IonStatus> status = readStatuses(settings_, statusPaths_);
    if (!status) return;  // an ionproc not up yet
    if (!latest_ || status->wallTime != latest_->wallTime) {
      if (latest_ && status->wallTime - latest_->wallTime >= 0.9) previous_ = latest_;
      latest_ = std::move(status);
    }
  } catch (const std::exception& e) {
    RTCP_LOG_DEBUG("observe", e.what());  // ionproc is replacing it; next time
    return;
  }
  if (!latest_ || (!terminal_ && wallTime - lastShown_ < plainInterval_)) return;
  lastShown_ = wallTime;
  const std::string text = line(*latest_, previous_ ? &*previous_ : nullptr);
  if (terminal_) {
    std::fprintf(stderr, "\r%s%*s", text.c_str(),
                 int(shownWidth_ > text.size() ? shownWidth_ - text.size() : 0), "");
    std::fflush(stderr);
    shownWidth_ = text.size();
  } else {
    RTCP_LOG_INFO("observe", text);
  }
}

void ProgressMonitor::finish() {
  if (terminal_ && shownWidth_ > 0) std::fputc('\n', stderr);
  shownWidth_ = 0;
}

}  // namespace rtcp::observe
