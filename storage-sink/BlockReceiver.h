#pragma once
/// \file BlockReceiver.h
/// Reads correlated blocks from one connection through a ReceiveBuffer (one read for many
/// small blocks, headers parsed in place): checks each header before reading its payload,
/// reads the payload into a staging buffer (blocking while staging is full; a large one
/// straight from the socket), verifies its CRC-64 and stages it for its MeasurementSet's
/// writer.

#include <algorithm>
#include <cstddef>
#include <string>

#include "BeamFormedIngest.h"
#include "BlockValidator.h"
#include "DurableReplies.h"
#include "IngestStatistics.h"
#include "ReceiveBuffer.h"
#include "StagingArea.h"
#include "rtcp/Stream.h"

namespace rtcp::storage {

class BlockReceiver {
 public:
  /// receiveCapacity: the ReceiveBuffer's bytes (at least kCorrelatedHeaderSize; smaller is
  /// raised to it), allocated once per connection.
  BlockReceiver(const BlockValidator& validator, StagingArea& staging, IngestStatistics& statistics,
                size_t receiveCapacity = ReceiveBuffer::kDefaultCapacity)
      : validator_(validator),
        staging_(staging),
        statistics_(statistics),
        receiveCapacity_(std::max(receiveCapacity, size_t(kCorrelatedHeaderSize))) {}

  /// Receives until the peer closes, the stream fails or framing is lost; never throws.
  void run(Stream& stream, const std::string& peer);
  /// Tells the peer what is on disk as its blocks are staged (none: no replies).
  void replyWith(DurableReplies* replies) { replies_ = replies; }
  /// Takes beam-formed blocks (magic RTBF, docs/DESIGN.md §2.4b) on the same connection
  /// into `ingest` (none: they are refused as bad magic).
  void receiveBeamFormedWith(BeamFormedIngest* ingest) { beamFormed_ = ingest; }
  /// Marks every block it stages as coming from this source (StagedBlock::source).
  void fromSource(int source) { source_ = source; }

 private:
  /// Handles one block; false when the connection must be closed.
  bool receiveBlock(ReceiveBuffer& input, const std::string& peer);

  const BlockValidator& validator_;
  StagingArea& staging_;
  IngestStatistics& statistics_;
  DurableReplies* replies_ = nullptr;
  BeamFormedIngest* beamFormed_ = nullptr;
  std::vector<uint8_t> beamFormedPayload_;  ///< grown to the largest beam-formed payload
  int source_ = -1;
  size_t receiveCapacity_;
};

}  // namespace rtcp::storage
