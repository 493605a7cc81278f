#include "PacketBuilder.h"

#include <cstring>

namespace rtcp::sim {

PacketBuilder::PacketBuilder(const StreamLayout& stream, int clockMHz, int bitsPerSample)
    : stream_(stream), bits_(bitsPerSample), clock_(clockMHz) {
  template_.setClockMHz(clockMHz);
  template_.setBitsPerSample(bitsPerSample);
  template_.setStationId(stream.stationId, stream.port);  // station field: ID * 32 + board
  template_.sourceInfo1 = uint8_t((template_.sourceInfo1 & ~0x1f) | (stream.port & 0x1f));
  template_.nrBeamlets = uint8_t(stream.nrBeamlets());
  template_.nrBlocks = kRspSamplesPerPacket;
}

RspHeader PacketBuilder::header(int64_t sample) const {
  RspHeader h = template_;
  const RspStamp stamp = clock_.stamp(sample);
  h.timestamp = stamp.timestamp;
  h.blockSequenceNumber = stamp.sequence;
  return h;
}

void PacketBuilder::build(SampleChunk& chunk, int streamIndex) const {
  // samples[beamlet][time][pol] of one packet
  std::vector<std::complex<int16_t>> samples(size_t(stream_.nrBeamlets()) * kRspSamplesPerPacket *
                                             2);
  const size_t beamletBytes = kRspSamplesPerPacket * 2 * sizeof(std::complex<int16_t>);
  uint8_t* out = chunk.packets[streamIndex].data();
  for (int p = 0; p < chunk.nrPackets; ++p, out += packetSize()) {
    const int time = p * kRspSamplesPerPacket;
    for (int b = 0; b < stream_.nrBeamlets(); ++b) {  // a beamlet the observation does not use: 0
      const int subband = stream_.beamletSubbands[size_t(b)];
      if (subband >= 0)
        std::memcpy(&samples[size_t(b) * kRspSamplesPerPacket * 2],
                    chunk.sample(stream_.station, subband, time), beamletBytes);
    }
    encodeRspPacket(header(chunk.firstSample + time), samples.data(), out);
  }
}

}  // namespace rtcp::sim
