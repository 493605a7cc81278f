#pragma once
/// \file IngestStatistics.h
/// Counters shared by the receiving and writing threads, and rate-limited reports of
/// rejected blocks.

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

#include "BlockValidator.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {

struct IngestStatistics {
  std::atomic<uint64_t> blocksReceived{0};  ///< headers read
  std::atomic<uint64_t> blocksWritten{0};   ///< blocks that reached an MS
  std::atomic<uint64_t> bytesReceived{0};
  std::array<std::atomic<uint64_t>, kNrBlockRejects> rejected{};  ///< [BlockReject]
  /// Connections closed because they did not prove they belong to the observation.
  std::atomic<uint64_t> connectionsRefused{0};
  /// Of rejected[kDuplicate]: blocks for an integration this sink itself had written (an
  /// error); the rest were sent again after a restart and were in the MS when it reopened.
  std::atomic<uint64_t> duplicatesOfThisRun{0};
  RateLimiter rejectLog{1.0};

  /// Counts a rejected block and logs why (at most once a second, with what was held back).
  void reject(BlockReject reason, const std::string& where, const std::string& detail) {
    ++rejected[size_t(reason)];
    if (!rejectLog.allow()) return;
    const uint64_t suppressed = rejectLog.takeSuppressed();
    RTCP_LOG_WARN("storage", where << ": rejected block: " << toString(reason)
                                   << (detail.empty() ? "" : " (" + detail + ")")
                                   << (suppressed ? " [" + std::to_string(suppressed) +
                                                        " more rejects not logged]"
                                                  : ""));
  }
  uint64_t totalRejected() const {
    uint64_t total = 0;
    for (const auto& count : rejected) total += count;
    return total;
  }
};

}  // namespace rtcp::storage
