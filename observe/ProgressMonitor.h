#pragma once
/// \file ProgressMonitor.h
/// The live progress line on standard error, from the ionprocs' and storage-sinks'
/// --status files: time
/// observed / total, data rate in, loss per station (samples that did not arrive, of
/// those served), blocks dropped because the ranks fell behind, and the real-time margin
/// (buffer left behind the newest block served) or, for replays, the real-time factor;
/// storage-sink's MSs made ready while it starts, then integrations stored and its backlog.
/// Rewritten in place (\r) on a terminal, a log line every few seconds otherwise.

#include <optional>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/StatusFile.h"
#include "rtcp/StorageStatus.h"

namespace rtcp::observe {

/// One status of several ionprocs (one per input host): stations in station-list order,
/// counters summed, the newest block of the slowest, finished when all are.
ion::IonStatus mergeStatuses(const ObservationSettings& settings,
                             const std::vector<ion::IonStatus>& statuses);
/// The merged status of the ionprocs' status files; none while one of them is missing
/// (an ionproc not up yet). Throws std::runtime_error when a file cannot be parsed.
std::optional<ion::IonStatus> readStatuses(const ObservationSettings& settings,
                                           const std::vector<std::string>& paths);
/// The storage-sinks' statuses summed (listening and finished when all are); none while
/// one of the files is missing. Throws std::runtime_error when a file cannot be parsed.
std::optional<storage::StorageStatus> readStorageStatuses(const std::vector<std::string>& paths);

class ProgressMonitor {
 public:
  ProgressMonitor(const ObservationSettings& settings, std::vector<std::string> statusPaths,
                  bool terminal, double plainIntervalSeconds = 5,
                  std::vector<std::string> storageStatusPaths = {});
  /// Reads the status files when they changed and shows the line when due.
  void update(double wallTime);
  /// Ends the line on a terminal.
  void finish();
  /// The newest status read, if any.
  const std::optional<ion::IonStatus>& latest() const { return latest_; }
  /// The newest storage-sink status read, if any.
  const std::optional<storage::StorageStatus>& latestStorage() const { return latestStorage_; }
  /// The progress line for a status (previous: the one before, for rates; may be null).
  std::string line(const ion::IonStatus& status, const ion::IonStatus* previous) const;
  /// Mean size of one station packet in bytes (header + payload, over its streams).
  double packetBytes(int station) const;

 private:
  const ObservationSettings& settings_;
  std::vector<std::string> statusPaths_;
  bool terminal_;
  double plainInterval_;
  double lastShown_ = -1e300;
  std::optional<ion::IonStatus> latest_, previous_;
  std::vector<std::string> storageStatusPaths_;
  std::optional<storage::StorageStatus> latestStorage_;
  size_t shownWidth_ = 0;
};

}  // namespace rtcp::observe
