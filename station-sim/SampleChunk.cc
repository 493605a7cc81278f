#include "SampleChunk.h"

#include "rtcp/RspPacket.h"

namespace rtcp::sim {

SampleChunk::SampleChunk(int stations, int subbands, int samplesPerChunk,
                         const std::vector<size_t>& bytes)
    : nrStations(stations),
      nrSubbands(subbands),
      nrSamples(samplesPerChunk),
      samples(size_t(stations) * subbands * samplesPerChunk * 2),
      packetBytes(bytes) {
  for (size_t size : bytes) packets.emplace_back(size * (samplesPerChunk / kRspSamplesPerPacket));
}

}  // namespace rtcp::sim
