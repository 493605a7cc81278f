#pragma once
/// \file RankStatus.h
/// A correlator rank's `--status`: how far it is and how fast it processes, rewritten
/// atomically once a second as `key=value` lines (the codec of StatusText.h), for the
/// operator's console (observe --console). Across hosts the ranks print it as one
/// `rtcp-rank-status` line a second on standard output, which mpiexec forwards.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rtcp::correlator {

struct RankStatus {
  int rank = 0;                  ///< rank: in MPI_COMM_WORLD
  std::string host;              ///< host: where it runs
  double wallTime = 0;           ///< time: Unix seconds when written
  bool finished = false;         ///< finished: 1 once its pipeline ended
  int64_t blocks = 0;            ///< blocks: block sets processed
  int64_t nrBlocks = 0;          ///< nrBlocks: in the observation
  int64_t subbandBlocks = 0;     ///< subbandBlocks: (subband, block) pairs correlated
  double processingSeconds = 0;  ///< processingSeconds: its processing thread busy
  double blockDuration = 0;      ///< blockDuration: seconds of data per block
  /// steps, stepSeconds, stepCalls: the signal chain's steps (StepTimes.h), comma-separated
  std::vector<std::string> steps;
  std::vector<double> stepSeconds;
  std::vector<uint64_t> stepCalls;
  /// tabs, tabPower, tabBlock: beam-formed observations: each TAB's name ("SAP0 TAB1") and
  /// mean power in block tabBlock (rtcp::meanPower, over this rank's subbands)
  std::vector<std::string> tabs;
  std::vector<double> tabPower;
  int64_t tabBlock = -1;

  /// Observed seconds per second of processing (> 1: faster than real time), the figure
  /// the rank logs at its end; 0 before the first block.
  double realTimeFactor() const {
    return processingSeconds > 0 ? double(blocks) * blockDuration / processingSeconds : 0;
  }

  std::string format() const;
  /// Throws std::runtime_error naming the line or key of a malformed entry.
  static RankStatus parse(const std::string& text);
  static RankStatus read(const std::string& path);
  std::string formatLine() const;
  static std::optional<RankStatus> parseLine(const std::string& line);
  static constexpr std::string_view kLinePrefix = "rtcp-rank-status ";
  bool operator==(const RankStatus&) const = default;
};

/// The status file of a rank: `%r` in pattern replaced by the rank.
std::string rankStatusPath(const std::string& pattern, int rank);

}  // namespace rtcp::correlator
