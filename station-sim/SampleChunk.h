#pragma once
/// \file SampleChunk.h
/// One chunk of simulated time for every station: the quantised samples and the RSP
/// packets made of them. Chunks travel through a Pool from the generators to the sender.

#include <complex>
#include <cstdint>
#include <vector>

#include "rtcp/AlignedBuffer.h"

namespace rtcp::sim {

struct SampleChunk {
  /// packetBytes[stream]: bytes of one packet of each stream.
  SampleChunk(int nrStations, int nrSubbands, int nrSamples,
              const std::vector<size_t>& packetBytes);

  int64_t index = 0;        ///< chunk number since the start
  int64_t firstSample = 0;  ///< absolute sample number of time 0
  int nrPackets = 0;        ///< packets per stream to send from this chunk (<= nrSamples / 16)
  uint64_t clipped = 0;     ///< components the quantiser clipped
  int nrStations, nrSubbands, nrSamples;
  AlignedBuffer<std::complex<int16_t>> samples;  ///< [station][subband][time][pol]
  std::vector<AlignedBuffer<uint8_t>> packets;   ///< [stream][packet][byte]
  std::vector<size_t> packetBytes;               ///< [stream]

  std::complex<int16_t>* sample(int station, int subband, int time) {
    return samples.data() + ((size_t(station) * nrSubbands + subband) * nrSamples + time) * 2;
  }
  const std::complex<int16_t>* sample(int station, int subband, int time) const {
    return samples.data() + ((size_t(station) * nrSubbands + subband) * nrSamples + time) * 2;
  }
  const uint8_t* packet(int stream, int index) const {
    return packets[stream].data() + size_t(index) * packetBytes[stream];
  }
};

}  // namespace rtcp::sim
