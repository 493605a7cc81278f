#pragma once
/// \file PacketBuilder.h
/// RSP packets (DESIGN §2.1) of one input stream: 16 samples of the stream's subbands
/// per packet, station field ID * 32 + board, clock and bit-mode bits, timestamp and
/// sequence number from the absolute sample count (rtcp::SampleClock).

#include <complex>
#include <cstdint>
#include <vector>

#include "SampleChunk.h"
#include "StreamLayout.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp::sim {

class PacketBuilder {
 public:
  PacketBuilder(const StreamLayout& stream, int clockMHz, int bitsPerSample);

  size_t packetSize() const { return rspPacketSize(bits_, stream_.nrBeamlets()); }
  /// Encodes packets [0, chunk.nrPackets) of the chunk into chunk.packets[streamIndex].
  void build(SampleChunk& chunk, int streamIndex) const;
  /// The header of the packet whose first sample is `sample`.
  RspHeader header(int64_t sample) const;

 private:
  StreamLayout stream_;
  int bits_;
  SampleClock clock_;
  RspHeader template_;
};

}  // namespace rtcp::sim
