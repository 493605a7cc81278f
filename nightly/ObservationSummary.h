#pragma once
/// \file ObservationSummary.h
/// What observe wrote about one observation: its summary.json (see nightly/README.md).

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rtcp::nightly {

struct StationLoss {
  std::string name;
  uint64_t packetsReceived = 0;
  uint64_t packetsExpected = 0;
  uint64_t packetsLost = 0;
  double lossFraction = 0;
};

struct ObservationSummary {
  std::string observationId;
  std::string status;   ///< "ok" or "failed"
  std::string reason;   ///< why it failed
  std::string start, stop;
  double durationSeconds = 0;
  double realTimeFactor = 0;
  uint64_t bytesWritten = 0;
  std::vector<std::string> measurementSets;
  std::vector<StationLoss> stations;
  uint64_t blocksDropped = 0;
  uint64_t integrationsDropped = 0;
  std::map<std::string, int> exitCodes;  ///< per part
  std::vector<std::string> plots;

  /// Reads summary.json; throws std::runtime_error naming the file and the problem.
  static ObservationSummary fromFile(const std::string& path);
  static ObservationSummary fromJson(const std::string& text, const std::string& name);
};

}  // namespace rtcp::nightly
