#pragma once
/// \file BlockReceiver.h
/// Reads correlated blocks from one connection: checks each header before reading its
/// payload, reads the payload straight into a staging buffer (blocking while staging is
/// full), verifies its CRC-64 and stages it for its MeasurementSet's writer.

#include <string>

#include "BlockValidator.h"
#include "DurableReplies.h"
#include "IngestStatistics.h"
#include "StagingArea.h"
#include "rtcp/Stream.h"

namespace rtcp::storage {

class BlockReceiver {
 public:
  BlockReceiver(const BlockValidator& validator, StagingArea& staging, IngestStatistics& statistics)
      : validator_(validator), staging_(staging), statistics_(statistics) {}

  /// Receives until the peer closes, the stream fails or framing is lost; never throws.
  void run(Stream& stream, const std::string& peer);
  /// Tells the peer what is on disk as its blocks are staged (none: no replies).
  void replyWith(DurableReplies* replies) { replies_ = replies; }

 private:
  /// Handles one block; false when the connection must be closed.
  bool receiveBlock(Stream& stream, const std::string& peer);
  /// Reads and drops size bytes; false when the stream ended first.
  bool skip(Stream& stream, uint64_t size);

  const BlockValidator& validator_;
  StagingArea& staging_;
  IngestStatistics& statistics_;
  DurableReplies* replies_ = nullptr;
};

}  // namespace rtcp::storage
