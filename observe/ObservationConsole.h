#pragma once
/// \file ObservationConsole.h
/// `observe --console [HOST:]PORT`: the observation live in a web page (observe/README.md,
/// "The console"). observe's follow loop hands it the parts' status as it reads it (the
/// ionprocs' and storage-sinks' status files, the ranks' `--status` files, ionproc's quick
/// look: the same files, and for parts on other hosts the same lines forwarded by
/// mpiexec, as the progress line); the console turns them into one JSON document at most
/// once a second, which its server (console/ConsoleServer.h, a thread of its own) serves
/// at `/status.json` and embedded in the page at `/`. At the end the document carries the
/// summary (the figures of summary.json) and the page says the observation has ended.

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ConsoleServer.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/RankStatus.h"
#include "rtcp/StatusFile.h"
#include "rtcp/StorageStatus.h"

namespace rtcp::observe {

/// What the console shows, built into the JSON of /status.json (every key documented in
/// observe/README.md). Plain data in, text out: the unit tests build it without a server.
class ConsoleStatus {
 public:
  ConsoleStatus(const ObservationSettings& settings, std::string directory,
                std::vector<std::string> measurementSets,
                std::vector<std::string> beamFormedFiles = {});

  /// starting, observing, stopping, ended.
  void setPhase(std::string phase) { phase_ = std::move(phase); }
  /// A new merged status of the ionprocs (kept with the one before it, for the rates).
  void noteIonStatus(const ion::IonStatus& status);
  void noteStorageStatus(const storage::StorageStatus& status) { storage_ = status; }
  /// The ranks' newest statuses; of a beam-formed observation, each TAB's power of a newer
  /// block than the last joins its history (the mean over the ranks at that block).
  void noteRankStatuses(std::vector<correlator::RankStatus> ranks);
  /// ionproc's quick look (one JSON object, output/QuickLook.h); "" for none.
  void noteQuickLook(std::string json) { quickLook_ = std::move(json); }
  /// A warning or error as it happens (WARN, ERROR), from a part's log or observe itself.
  void addEvent(double time, std::string level, std::string source, std::string message);
  /// The end: the summary's figures (summary.json's text) go into the document.
  void setSummary(const ObservationSummary& summary);

  /// The document at wall-clock time now.
  std::string json(double now) const;

  static constexpr size_t kMaxEvents = 200;
  static constexpr size_t kMaxHistory = 600;  ///< points of the flagged fraction over time

 private:
  std::string stationsJson() const;
  std::string ranksJson() const;
  std::string queuesJson() const;
  std::string historyJson() const;
  std::string tabsJson() const;

  const ObservationSettings& settings_;
  std::string directory_;
  std::vector<std::string> measurementSets_, beamFormedFiles_;
  std::string phase_ = "starting";
  std::optional<ion::IonStatus> ion_, previousIon_;
  std::optional<storage::StorageStatus> storage_;
  std::vector<correlator::RankStatus> ranks_;
  std::string quickLook_;
  struct Event {
    double time;
    std::string level, source, message;
  };
  std::deque<Event> events_;
  /// Flagged fraction of the samples served in each interval between two ion statuses.
  std::deque<double> historyTimes_;
  std::map<std::string, std::deque<double>> historyFlagged_;  ///< by station
  std::string summaryJson_;
  /// Each TAB's power over time (by name), at the blocks tabTimes_ start.
  int64_t tabBlock_ = -1;
  std::deque<double> tabTimes_;
  std::map<std::string, std::deque<double>> tabPower_;
};

/// The server, the document and where the parts' logs are read up to.
class ObservationConsole {
 public:
  /// Listens at once (throws std::runtime_error naming the address when it cannot) and
  /// writes its address into DIR/console.url.
  ObservationConsole(const console::ConsoleAddress& address, const ObservationSettings& settings,
                     std::string directory, std::vector<std::string> measurementSets,
                     std::vector<std::string> beamFormedFiles = {});
  ~ObservationConsole();

  ConsoleStatus& status() { return status_; }
  /// Reads the parts' new log lines (WARN, ERROR become events) and publishes the document
  /// (at most about twice a second unless forced).
  void publish(double now, bool force = false);
  std::string url() const { return server_->url(); }
  const console::ConsoleServer& server() const { return *server_; }

 private:
  std::optional<console::ConsoleResponse> respond(const std::string& path) const;
  void scanLogs();

  std::string directory_;
  ConsoleStatus status_;
  console::ConsoleDocument document_;
  std::map<std::string, uint64_t> logOffsets_;  ///< by log file: read up to
  double published_ = -1e300;
  std::unique_ptr<console::ConsoleServer> server_;  ///< last: stops first
};

}  // namespace rtcp::observe
