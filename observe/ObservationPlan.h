#pragma once
/// \file ObservationPlan.h
/// What observe will run: the effective parset (start and stop shifted by --now, the
/// storage port chosen, recordings and output directories made absolute), the
/// observation directory, the ports of the link and storage, and which stations this
/// host simulates.

#include <cstdint>
#include <string>
#include <vector>

#include "rtcp/ObservationSecret.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"

namespace rtcp::observe {

struct PlanOptions {
  bool now = false;          ///< shift the observation to start soon
  std::string directory;     ///< --dir ("": the output directory of subband 0)
  double wallTime = 0;       ///< the current time, Unix seconds
  double setupMargin = 4;    ///< seconds between now and a --now start, at least
  uint16_t linkPort = 4200;  ///< where an ionproc on another host listens for the ranks
  std::string computeHosts;  ///< --mpi-hosts ("": the parset's Cobalt.Nodes, else this host)
};

/// One ionproc: the stations whose inputs reach one input host (DESIGN: one ionproc per
/// input host). The first also integrates and sends to storage-sink.
struct IonprocPlan {
  std::string name;                   ///< part name: ionproc, ionproc-2, ...
  std::string inputHost;              ///< the inputs' host ("" for recordings)
  std::vector<std::string> stations;  ///< its stations, in station-list order
  uint16_t linkPort = 0;              ///< where the correlator ranks reach it
  bool remote = false;                ///< on another host: started through mpiexec
};

/// A part that observe starts on another host through mpiexec (HydraLaunch.h).
struct RemotePartPlan {
  std::string name;        ///< storage-sink-2, station-sim-in1, ...
  std::string host;        ///< where it runs
  std::string parsetPath;  ///< the parset file (here) that mpiexec feeds to its standard input
};

struct ObservationPlan {
  Parset parset;                 ///< the effective parset
  ObservationSettings settings;  ///< read back from it
  std::string directory;         ///< the observation directory (absolute)
  std::string parsetPath;        ///< DIR/observation.parset, the effective parset
  /// DIR/observation.secret (mode 0600): the observation's secret, which the parts on this
  /// host read (--secret-file) and prove they know on every connection (Handshake.h).
  std::string secretPath;
  /// DIR/observation.remote-input (mode 0600): what mpiexec forwards to the standard input
  /// of a storage-sink, ionproc or the ranks on another host: the secret line, then the
  /// effective parset (`--secret-file - -`).
  std::string remoteInputPath;
  std::string stationSimParsetPath;   ///< the parset station-sim gets; "" when nothing to simulate
  double timeShift = 0;               ///< seconds added to start and stop (an even number)
  uint16_t storagePort = 0;           ///< OLAP.Storage.port as chosen
  std::vector<IonprocPlan> ionprocs;  ///< by input host, in order of first appearance
  bool liveInput = false;             ///< some input is udp:
  /// Where every ionproc records its input (Rtcp.recordInput.directory, absolute; --record-input);
  /// "": not recorded.
  std::string recordingDirectory;
  std::vector<std::string> measurementSets;  ///< the MSs this host writes (absolute paths)
  /// The MSs written on other hosts, "HOST:PATH"; their storage-sinks and station-sims.
  std::vector<std::string> remoteMeasurementSets;
  std::vector<RemotePartPlan> remoteStorageSinks, remoteStationSims;
  /// The beam-formed files (.h5) this host writes (absolute paths), and those written on
  /// other hosts, "HOST:PATH" (their storage-sinks among remoteStorageSinks).
  std::vector<std::string> beamFormedFiles, remoteBeamFormedFiles;
  /// This host runs a storage-sink: it writes an MS or a beam-formed file.
  bool localStorageSink() const { return !measurementSets.empty() || !beamFormedFiles.empty(); }
  /// Hydra's -hosts list for the ranks (from --mpi-hosts or Cobalt.Nodes, one rank per
  /// node); "": every rank on this host.
  std::string computeHosts;
  int computeNodes = 0;  ///< ranks the parset's Cobalt.Nodes asks for (0: not given)
  /// Some part runs on another host.
  bool acrossHosts() const;
  std::vector<std::string> notes;  ///< what the plan changed, for the log

  /// Records the input into `directory` (absolute, made relative to the current directory):
  /// Rtcp.recordInput.directory in the effective parset. std::runtime_error when it holds
  /// recordings already (a recording is never overwritten).
  void recordInput(const std::string& directory);
  /// The plan for a parset that passed ParsetChecker.
  static ObservationPlan make(const Parset& parset, const PlanOptions& options);
  /// Creates the observation directory (earlierRunProblems() first, then a DirectoryLock:
  /// RunDirectory.h); throws std::runtime_error naming it.
  void createDirectory() const;
  /// Writes the parsets, the secret and the remote parts' input into the directory;
  /// throws std::runtime_error naming the file.
  void write(const ObservationSecret& secret) const;
  /// The even shift (seconds) that starts an observation at startTime at or after
  /// wallTime + margin, its start's fraction and parity of second kept.
  static double evenShift(double startTime, double wallTime, double margin);
  /// Seconds the ionprocs may take to fault their station buffers in (the buffer and a
  /// block of every station-subband) before a live observation starts: --now adds them to
  /// the set-up margin.
  static double bufferFaultSeconds(const ObservationSettings& settings);
  /// A TCP port that was free a moment ago on 127.0.0.1.
  static uint16_t freePort();

 private:
  Parset stationSimParset;  ///< written when it differs from the effective parset
  std::vector<std::pair<std::string, Parset>> remoteStationSimParsets;  ///< path, parset
};

}  // namespace rtcp::observe
