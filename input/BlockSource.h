#pragma once
/// \file BlockSource.h
/// What ionproc's correlator plug-in asks of the station input (implemented by
/// StationInput): one station's delayed samples of one block.

#include <cstdint>
#include <vector>

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
};

}  // namespace rtcp::ion
