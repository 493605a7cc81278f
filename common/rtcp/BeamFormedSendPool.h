#pragma once
/// \file BeamFormedSendPool.h
/// The beam-formed blocks ionproc holds on their way to storage (output/StorageSender.h),
/// sized once for both sides: ionproc's pool of serialised beam-formed blocks is exactly
/// this, faulted in at its start, and observe's memory plan counts it before the
/// observation starts (observe/MemoryPlan.h), as StationBufferSize.h does for the station
/// buffers.
///
/// Per storage connection that carries beam-formed blocks: a queue of two blocks' worth of
/// every TAB and subband (waiting, or sent and not yet acknowledged by the sink's TCP stack:
/// the ranks send a block's subbands in any order and at once), at least --output-queue; and
/// the blocks acknowledged, kept to send again until the sink says they are on its disk.
/// The sink says so once a file's block holds all its subbands (about one block after the
/// first) and it synced them (at most kBeamFormedSyncSeconds later), so the steady state
/// keeps ⌈kBeamFormedSyncSeconds / block duration⌉ + 2 blocks' worth, never more than
/// --retain-mb. A block to keep beyond that bound makes the connection forget its oldest
/// kept one (counted `unprotected`: a sink that dies then loses it), so the pool does not
/// run over into the heap. A few slots more serve the blocks serialised before they find
/// their queue full and go to the spool.

#include <cstddef>
#include <cstdint>

#include "rtcp/IntegrationSendPool.h"  // ionproc's defaults: kDefaultOutputQueue, kDefaultRetainMb
#include "rtcp/ObservationSettings.h"

namespace rtcp {

struct BeamFormedSendPool {
  size_t blockBytes = 0;   ///< the largest serialised block (header + payload; 0: none)
  size_t queueBlocks = 0;  ///< per connection: waiting or unacknowledged
  size_t keptBlocks = 0;   ///< per connection: acknowledged, kept until on the sink's disk
  size_t connections = 0;  ///< storage connections that carry beam-formed blocks
  static constexpr size_t kSpareSlots = 8;

  /// Slots of the pool: every connection's queue and kept blocks, and the spare ones.
  size_t slots() const {
    return blockBytes == 0 ? 0 : connections * (queueBlocks + keptBlocks) + kSpareSlots;
  }
  double bytes() const { return double(slots()) * double(blockBytes); }
};

/// Bytes of the largest serialised beam-formed block of the observation (0: none).
size_t largestBeamFormedBlock(const ObservationSettings& s);
/// TAB-subband-blocks of one block of the observation.
size_t beamFormedBlocksPerBlock(const ObservationSettings& s);
/// The pool as ionproc makes it with `queuePerConnection` (--output-queue) and
/// `retainBytes` (--retain-mb) per connection.
BeamFormedSendPool beamFormedSendPool(const ObservationSettings& s,
                                      size_t queuePerConnection = kDefaultOutputQueue,
                                      uint64_t retainBytes = uint64_t(kDefaultRetainMb * 1048576));

}  // namespace rtcp
