#pragma once
/// \file HydraLaunch.h
/// How observe runs a part on another host: through MPICH's process manager Hydra
/// (`mpiexec -hosts HOST -n 1 PART ...`), which reaches the host with its launcher (ssh
/// by default, or a replacement remote shell given by -launcher-exec), forwards the
/// part's standard input to it (its parset: remote hosts need no shared file system) and
/// its standard output and error back, and passes a Ctrl-C (SIGINT) on to it. No
/// home-made remote daemon.
///
/// Hydra does not pass on a part's exit code once it forwarded a signal (its proxy
/// reports 0 for a process it signalled), so a small sh wrapper around the part prints
/// `rtcp-part-started` when it runs and `rtcp-part-exit CODE` when the part ends; the
/// part's own lines (ionproc's `rtcp-status`, storage-sink's `rtcp-ms`) travel the same
/// way. PartOutput reads them from the file mpiexec's standard output goes to.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "rtcp/RankStatus.h"
#include "rtcp/StatusFile.h"
#include "rtcp/StorageStatus.h"

namespace rtcp::observe {

struct LauncherOptions {
  std::string launcher = "ssh";  ///< Hydra's -launcher
  std::string launcherExec;      ///< Hydra's -launcher-exec ("": the launcher itself)
};

/// The mpiexec command that runs command as `processes` processes on hosts (Hydra's -hosts
/// list, e.g. "in1" or "cn1:1,cn2:1"), each wrapped to report its start and exit code,
/// in the directory "/" (the launching host's working directory need not exist there).
/// stopSignalsBlocked: the part runs with SIGINT, SIGTERM and SIGHUP blocked (ChildStreams::
/// stopSignalsBlocked: a part that takes them itself, so that one forwarded before its
/// main waits for it).
std::vector<std::string> hydraCommand(const LauncherOptions& options, const std::string& hosts,
                                      int processes, const std::vector<std::string>& command,
                                      bool stopSignalsBlocked = false);

/// A storage-sink's report of one MeasurementSet (`storage-sink --report`).
struct WrittenMeasurementSet {
  std::string path;
  int subband = 0;
  int64_t integrations = 0, missing = 0;
  uint64_t bytes = 0;
};

/// A storage-sink's report of one beam-formed file (`storage-sink --report`, `rtcp-bf`).
struct WrittenBeamFormedFile {
  std::string path;  ///< the .h5
  int64_t blocks = 0, expected = 0, lost = 0;
  uint64_t bytes = 0;
};

/// What a part started through hydraCommand() says on its standard output, read from the
/// file that output goes to as it grows.
class PartOutput {
 public:
  /// processes: how many processes report (the ranks of the correlator).
  PartOutput(std::string path, int processes);
  /// Reads the complete lines added since the last call; true when a new status came.
  bool update();
  /// Reads path from now on: the output of the part started again. What the earlier
  /// process reported (MSs it wrote, its last status) stays; its start and exit do not.
  void follow(std::string path);
  /// Every process has started (the launcher reached the host).
  bool started() const { return started_ >= processes_; }
  /// Once every process reported its exit: the first non-zero code, else 0.
  std::optional<int> exitCode() const;
  /// The newest `rtcp-status` line (ionproc --status -).
  const std::optional<ion::IonStatus>& status() const { return status_; }
  /// The newest `rtcp-storage-status` line (storage-sink --status -).
  const std::optional<storage::StorageStatus>& storageStatus() const { return storageStatus_; }
  const std::vector<WrittenMeasurementSet>& measurementSets() const { return written_; }
  /// The newest `rtcp-rank-status` line of each rank (correlator --status -), by rank.
  const std::map<int, correlator::RankStatus>& rankStatuses() const { return rankStatuses_; }
  /// The newest `rtcp-quicklook` line's JSON (ionproc --quicklook -); "" before one came.
  const std::string& quickLook() const { return quickLook_; }
  const std::vector<WrittenBeamFormedFile>& beamFormedFiles() const { return beamFormed_; }
  /// The lines that were absolute paths (the files rtcp-inspect wrote there).
  const std::vector<std::string>& printedPaths() const { return printedPaths_; }

 private:
  void take(const std::string& line);

  std::string path_;
  int processes_;
  uint64_t offset_ = 0;
  std::string partial_;  ///< a line not yet complete
  int started_ = 0;
  std::vector<int> exitCodes_;
  std::optional<ion::IonStatus> status_;
  std::optional<storage::StorageStatus> storageStatus_;
  std::vector<WrittenMeasurementSet> written_;
  std::vector<WrittenBeamFormedFile> beamFormed_;
  std::vector<std::string> printedPaths_;
  std::map<int, correlator::RankStatus> rankStatuses_;
  std::string quickLook_;
};

/// The last line of a part's log that says what went wrong: its last ERROR line (the
/// message after the level), else its last line that is not Hydra's own noise; "" when
/// the log is empty.
std::string lastProblem(const std::string& logPath);

}  // namespace rtcp::observe
