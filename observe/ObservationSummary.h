#pragma once
/// \file ObservationSummary.h
/// The end of an observation as users and the nightly runner see it: printed, and
/// written to DIR/summary.txt and DIR/summary.json (keys as documented in README.md).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rtcp::observe {

struct StationSummary {
  std::string name;
  uint64_t packetsReceived = 0;  ///< valid packets ionproc took in
  uint64_t packetsExpected = 0;  ///< packets covering start..stop on all the station's inputs
  uint64_t packetsLost = 0;      ///< expected - received (never negative)
  double lossFraction = 0;       ///< lost / expected
};

struct ObservationSummary {
  int64_t observationId = 0;
  std::string parset;                 ///< the effective parset
  bool ok = false;                    ///< "status": "ok" | "failed"
  std::string reason;                 ///< why it failed, or what went wrong but did not fail it
  std::string start, stop;            ///< UTC
  double durationSeconds = 0;         ///< stop - start
  double wallSeconds = 0;             ///< from starting the parts to the end
  double realTimeFactor = 0;          ///< observed seconds per wall second (replays: > 1 is faster)
  uint64_t bytesWritten = 0;          ///< bytes of the MeasurementSets on disk
  std::vector<std::string> measurementSets;
  std::vector<StationSummary> stations;
  uint64_t blocksDropped = 0;         ///< blocks served flagged because the ranks fell behind
  uint64_t integrationsDropped = 0;   ///< integrations that never reached storage
  std::map<std::string, int> exitCodes;  ///< per part; -1: not started or killed by observe
  std::map<std::string, double> cpuSeconds;  ///< per part: user + system CPU (mpirun: with its ranks)
  std::vector<std::string> plots;     ///< PNGs made by tools/rtcp-inspect
  std::vector<std::string> warnings;

  std::string toJson() const;
  std::string toText() const;
  /// Writes summary.txt and summary.json into the directory; throws std::runtime_error.
  void write(const std::string& directory) const;
};

/// A string as a JSON string literal.
std::string jsonString(const std::string& text);

}  // namespace rtcp::observe
