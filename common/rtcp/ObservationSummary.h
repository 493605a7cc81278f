#pragma once
/// \file ObservationSummary.h
/// The end of an observation as users and the nightly runner see it: observe prints it and
/// writes DIR/summary.txt and DIR/summary.json (keys as documented in observe/README.md);
/// nightly reads summary.json back. One definition for both sides of the contract.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rtcp {

/// One input stream (RSP.ports entry) of a station.
struct PortSummary {
  uint64_t packetsReceived = 0;  ///< valid packets ionproc took in
  uint64_t packetsExpected = 0;  ///< packets covering start..stop; 0 when it carries no subband
  uint64_t packetsLost = 0;      ///< expected - received (never negative)
};

struct StationSummary {
  std::string name;              ///< the antenna field, e.g. CS001HBA0
  uint64_t packetsReceived = 0;  ///< valid packets ionproc took in
  uint64_t packetsExpected = 0;  ///< packets covering start..stop on the inputs that carry subbands
  uint64_t packetsLost = 0;      ///< expected - received on those (never negative)
  double lossFraction = 0;       ///< lost / expected
  std::vector<PortSummary> ports;  ///< per RSP.ports entry
};

struct ObservationSummary {
  int64_t observationId = 0;
  std::string parset;          ///< the effective parset
  bool ok = false;             ///< "status": "ok" | "failed"
  std::string reason;          ///< why it failed, or what went wrong but did not fail it
  std::string start, stop;     ///< UTC
  double durationSeconds = 0;  ///< stop - start
  double wallSeconds = 0;      ///< from starting the parts to the end
  double realTimeFactor = 0;   ///< observed seconds per wall second (replays: > 1 is faster)
  uint64_t bytesWritten = 0;   ///< bytes of the MeasurementSets on disk
  std::vector<std::string> measurementSets;  ///< written (an observation that failed lists none)
  std::vector<std::string> partialMeasurementSets;  ///< on disk after a failure: incomplete
  std::vector<StationSummary> stations;
  uint64_t blocksDropped = 0;            ///< blocks served flagged because the ranks fell behind
  uint64_t integrationsDropped = 0;      ///< integrations that never reached storage
  std::map<std::string, int> exitCodes;  ///< per part; -1: not started or killed by observe
  std::map<std::string, double>
      cpuSeconds;                  ///< per part: user + system CPU (mpirun: with its ranks)
  std::vector<std::string> plots;  ///< PNGs made by tools/rtcp-inspect
  std::vector<std::string> warnings;

  std::string toJson() const;
  std::string toText() const;
  /// Writes summary.txt and summary.json into the directory; throws std::runtime_error.
  void write(const std::string& directory) const;

  /// Parses toJson()'s text (absent keys keep their defaults; a number may be null).
  /// Throws std::runtime_error naming `name` (and the line of a syntax error), or the
  /// problem, for text that is not such a summary.
  static ObservationSummary fromJson(const std::string& text, const std::string& name);
  /// Reads a summary.json; throws std::runtime_error naming the file.
  static ObservationSummary fromFile(const std::string& path);
};

/// A string as a JSON string literal.
std::string jsonString(const std::string& text);

}  // namespace rtcp
