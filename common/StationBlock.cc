#include "rtcp/StationBlock.h"

#include "rtcp/RspPacket.h"

namespace rtcp {

StationBlock::StationBlock(int nrSubbands, int nrSamples, int bitsPerSample)
    : samples(size_t(nrSubbands) * nrSamples * bytesPerDualPolSample(bitsPerSample)) {
  header.nrSubbands = nrSubbands;
  header.nrSamples = nrSamples;
  header.bitsPerSample = bitsPerSample;
  valid = AlignedBuffer<uint64_t>(size_t(nrSubbands) * wordsPerSubband());
  delays = AlignedBuffer<SubbandDelay>(size_t(nrSubbands));
}

void StationBlock::setValid(int subband, int time, bool arrived) {
  uint64_t& word = valid[subband * wordsPerSubband() + time / 64];
  const uint64_t bit = uint64_t(1) << (time % 64);
  word = arrived ? (word | bit) : (word & ~bit);
}

uint8_t* StationBlock::sample(int subband, int time) {
  return samples.data() +
         (size_t(subband) * header.nrSamples + time) * bytesPerDualPolSample(header.bitsPerSample);
}

const uint8_t* StationBlock::sample(int subband, int time) const {
  return samples.data() +
         (size_t(subband) * header.nrSamples + time) * bytesPerDualPolSample(header.bitsPerSample);
}

}  // namespace rtcp
