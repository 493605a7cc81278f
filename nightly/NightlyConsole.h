#pragma once
/// \file NightlyConsole.h
/// `nightly --console [HOST:]PORT`: the night's schedule live in a web page (console/
/// ConsoleServer.h): each observation's state (waiting, running with a link to its own
/// console, done, failed and why, not run), as JSON at `/schedule.json`, and the report
/// pages nightly writes (report.html, report.txt, the observations' plots and summaries)
/// under `/report/`. Each observe then runs with its own console on the same host, on a
/// port of its choosing (observe --console HOST:0, which it writes into DIR/console.url).

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ConsoleServer.h"
#include "ObservationRunner.h"
#include "Schedule.h"

namespace rtcp::nightly {

class NightlyConsole {
 public:
  /// Listens at once; throws std::runtime_error naming the address when it cannot.
  NightlyConsole(const console::ConsoleAddress& address, const Schedule& schedule,
                 std::string reportDirectory);
  ~NightlyConsole();

  /// observe's --console for the observations: this console's host, any free port.
  std::string observeConsole() const { return host_ + ":0"; }
  /// The observation (1-based index) has started: its directory holds its console.url.
  void running(int index, const std::string& directory);
  /// The observation's outcome.
  void finished(const ObservationResult& result);
  /// The whole night is done (the report written for the last time).
  void nightFinished();

  /// The schedule as JSON (at wall-clock time now).
  std::string json(double now) const;
  /// GET of a path below /report/: a file of the report directory with an extension the
  /// report uses (.html .txt .json .png .log), never outside it (nor through a symbolic
  /// link), at most 64 MB; nullopt otherwise.
  std::optional<console::ConsoleResponse> reportFile(const std::string& path) const;
  std::string url() const { return server_->url(); }

 private:
  std::optional<console::ConsoleResponse> respond(const std::string& path) const;

  struct Observation {
    ScheduleEntry entry;
    std::string state = "waiting";  ///< waiting, running, done, failed, not run
    std::string directory;
    std::string reason, outcome;
  };
  std::string host_;
  std::string scheduleName_;
  std::string reportDirectory_;
  mutable std::mutex mutex_;
  std::vector<Observation> observations_;
  bool finished_ = false;
  std::unique_ptr<console::ConsoleServer> server_;  ///< last: stops first
};

}  // namespace rtcp::nightly
