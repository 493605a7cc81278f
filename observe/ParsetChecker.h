#pragma once
/// \file ParsetChecker.h
/// Checks a whole parset before an observation starts and reports every problem at once:
/// every missing or bad key as ObservationSettings finds them (it collects them all, and
/// gives the settings as far as they could be read: ObservationSettings::readAll), then
/// what those settings ask of this machine: input ports used twice or in use, recordings
/// that are missing, a start in the past, output directories that cannot be written, too
/// many ranks, more memory than this host has (MemoryPlan.h), host names that do not
/// resolve; unknown keys and casacore measures tables that do not cover the observation as
/// warnings. It reads no parset key of its own (parsets beyond sane sizes, ParsetLimits.h,
/// are among the settings' errors).

#include <optional>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"

namespace rtcp::observe {

struct ParsetProblem {
  bool error = true;    ///< false: a warning, the observation may still run
  std::string key;      ///< the parset key, or a command-line option such as --ranks
  int line = 0;         ///< line in the parset, 0 when unknown
  std::string message;  ///< "FILE:LINE: key 'K': problem"
};

struct CheckOptions {
  bool now = false;            ///< --now: the start time will be shifted to now
  int ranks = 1;               ///< --ranks
  int cores = 1;               ///< cores of this machine
  std::string observationDir;  ///< --dir ("" when not given)
  double wallTime = 0;         ///< the current time (Unix seconds)
  bool ranksGiven = true;      ///< --ranks was given (else the parset's Cobalt.Nodes count)
  bool hostsGiven = false;     ///< --mpi-hosts: the ranks' hosts come from the command line
  /// --launcher-exec: a remote shell of its own reaches the hosts (containers, test hosts),
  /// so a host name this machine cannot resolve is a warning, not an error.
  bool launcherGiven = false;
};

struct CheckResult {
  std::vector<ParsetProblem> problems;
  Parset parset;                                ///< as read (empty on a syntax error)
  std::optional<ObservationSettings> settings;  ///< when the parset parsed completely
  bool hasErrors() const;
};

class ParsetChecker {
 public:
  explicit ParsetChecker(CheckOptions options) : options_(std::move(options)) {}
  /// Every problem of the parset in the file at path.
  CheckResult check(const std::string& path) const;

 private:
  /// Warnings, unknown keys and the ephemeris of complete settings (result.settings).
  void checkSettings(CheckResult& result) const;
  // Each on the settings as far as they could be read (p for the keys' lines).
  void checkInputs(const Parset& p, const ObservationSettings& s,
                   std::vector<ParsetProblem>& out) const;
  void checkTimes(const Parset& p, const ObservationSettings& s,
                  std::vector<ParsetProblem>& out) const;
  void checkMeasures(const Parset& p, const ObservationSettings& s,
                     std::vector<ParsetProblem>& out) const;
  void checkOutput(const Parset& p, const ObservationSettings& s,
                   std::vector<ParsetProblem>& out) const;
  void checkRanks(const Parset& p, const ObservationSettings& s,
                  std::vector<ParsetProblem>& out) const;
  /// The hosts the settings name (compute nodes, udp: inputs, output locations) resolve
  /// here.
  void checkHosts(const Parset& p, const ObservationSettings& s,
                  std::vector<ParsetProblem>& out) const;
  /// The memory the parts on this host would hold against what it has (MemoryPlan.h), for
  /// complete settings.
  void checkMemory(CheckResult& result) const;

  CheckOptions options_;
};

/// A recording's path as ObservationSettings::fromFile resolves it: a relative path lies
/// relative to the directory of the parset file.
std::string recordingPath(const std::string& parsetPath, const std::string& path);

/// True when the directory exists and is writable, or can be created (its nearest
/// existing ancestor is a writable directory); otherwise false with the reason.
bool isWritableOrCreatable(const std::string& directory, std::string& reason);

}  // namespace rtcp::observe
