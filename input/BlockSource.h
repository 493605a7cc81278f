#pragma once
/// \file BlockSource.h
/// What ionproc's correlator plug-in asks of the station input (implemented by
/// StationInput): one station's delayed samples of one block.

#include <cstdint>
#include <vector>

#include "rtcp/SharedMemory.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {

class BlockSource {
 public:
  virtual ~BlockSource() = default;

  /// The stations (indices in the station list) this source serves.
  virtual std::vector<int> stations() const = 0;

  /// Fills `out` with the StationBlock of block `block` (0 = the block at the observation
  /// start) of station `station` (index in the station list) for the subbands
  /// [firstSubband, firstSubband + nrSubbands) (indices in the observation's subband
  /// list), with valid bits, coarse and residual delays (see rtcp/StationBlock.h). The
  /// buffers of `out` are reused when their sizes fit: a caller that keeps its blocks
  /// allocates (and page-faults) nothing per block.
  ///
  /// Waits until the block can be served: real time (OLAP.realTime = T), until the wall
  /// clock has passed the block's end plus the input's latency margin, then serves what
  /// arrived; otherwise until every input stream has passed the block's end.
  ///
  /// Never stalls the input for a slow caller: when the block's samples have already left
  /// the circular buffer (the compute ranks fell behind), returns at once a block with no
  /// valid samples and header.flaggedByIonproc = 1.
  ///
  /// Thread-safe: the link calls it from one thread per compute core, for any station.
  virtual void serveInto(StationBlock& out, int64_t block, int station, int firstSubband,
                         int nrSubbands) = 0;

  /// The shared-memory segment of the sample ring that lendInto() lends from; null when
  /// this source lends nothing.
  virtual const SharedMemoryName* sampleRing() const { return nullptr; }
  /// As serveInto, but the samples stay where they are, in the sample ring: `out`
  /// (StationBlock::overRowTable, of the block's shape) gets the header, valid bits,
  /// delays and each row's offset in the ring's payload. The rows stay pinned (the input
  /// waits rather than overwrite them) until endLease(lease): unlike serveInto, a holder
  /// that keeps leases longer than the ring's slack (two blocks beyond its minimum) stalls
  /// the input, and in real time the packets that arrive meanwhile are lost (flagged as
  /// samples that did not arrive). std::logic_error when this source lends nothing.
  virtual void lendInto(StationBlock& out, int64_t block, int station, int firstSubband,
                        int nrSubbands, uint64_t lease);
  /// Ends a lease of lendInto (nothing if it holds none).
  virtual void endLease(uint64_t /*lease*/) {}
};

}  // namespace rtcp::ion
