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

namespace {
size_t aligned64(size_t bytes) { return (bytes + 63) / 64 * 64; }
}  // namespace

size_t StationBlock::bytesInOnePiece(int nrSubbands, int nrSamples, int bitsPerSample) {
  const size_t words = (size_t(nrSamples) + 63) / 64;
  return aligned64(size_t(nrSubbands) * size_t(nrSamples) * bytesPerDualPolSample(bitsPerSample)) +
         aligned64(size_t(nrSubbands) * words * sizeof(uint64_t)) +
         aligned64(size_t(nrSubbands) * sizeof(SubbandDelay));
}

StationBlock StationBlock::over(uint8_t* memory, int nrSubbands, int nrSamples, int bitsPerSample) {
  StationBlock block;
  block.header.nrSubbands = nrSubbands;
  block.header.nrSamples = nrSamples;
  block.header.bitsPerSample = bitsPerSample;
  const size_t sampleBytes =
      size_t(nrSubbands) * size_t(nrSamples) * bytesPerDualPolSample(bitsPerSample);
  const size_t words = size_t(nrSubbands) * block.wordsPerSubband();
  block.samples = AlignedBuffer<uint8_t>::borrowed(memory, sampleBytes);
  memory += aligned64(sampleBytes);
  block.valid = AlignedBuffer<uint64_t>::borrowed(reinterpret_cast<uint64_t*>(memory), words);
  memory += aligned64(words * sizeof(uint64_t));
  block.delays = AlignedBuffer<SubbandDelay>::borrowed(reinterpret_cast<SubbandDelay*>(memory),
                                                       size_t(nrSubbands));
  return block;
}

size_t StationBlock::bytesOfRowTable(int nrSubbands, int nrSamples) {
  const size_t words = (size_t(nrSamples) + 63) / 64;
  return aligned64(size_t(nrSubbands) * words * sizeof(uint64_t)) +
         aligned64(size_t(nrSubbands) * sizeof(SubbandDelay)) +
         aligned64(size_t(nrSubbands) * sizeof(uint64_t));
}

StationBlock StationBlock::overRowTable(uint8_t* memory, int nrSubbands, int nrSamples,
                                        int bitsPerSample) {
  StationBlock block;
  block.header.nrSubbands = nrSubbands;
  block.header.nrSamples = nrSamples;
  block.header.bitsPerSample = bitsPerSample;
  block.header.rowsInRing = 1;
  const size_t words = size_t(nrSubbands) * block.wordsPerSubband();
  block.valid = AlignedBuffer<uint64_t>::borrowed(reinterpret_cast<uint64_t*>(memory), words);
  memory += aligned64(words * sizeof(uint64_t));
  block.delays = AlignedBuffer<SubbandDelay>::borrowed(reinterpret_cast<SubbandDelay*>(memory),
                                                       size_t(nrSubbands));
  memory += aligned64(size_t(nrSubbands) * sizeof(SubbandDelay));
  block.rowOffsets =
      AlignedBuffer<uint64_t>::borrowed(reinterpret_cast<uint64_t*>(memory), size_t(nrSubbands));
  return block;
}

void StationBlock::setValid(int subband, int time, bool arrived) {
  uint64_t& word = valid[subband * wordsPerSubband() + time / 64];
  const uint64_t bit = uint64_t(1) << (time % 64);
  word = arrived ? (word | bit) : (word & ~bit);
}

uint8_t* StationBlock::sample(int subband, int time) {
  const size_t bytes = bytesPerDualPolSample(header.bitsPerSample);
  if (rowBase) return rowBase + rowOffsets[size_t(subband)] + size_t(time) * bytes;
  return samples.data() + (size_t(subband) * size_t(header.nrSamples) + size_t(time)) * bytes;
}

const uint8_t* StationBlock::sample(int subband, int time) const {
  return const_cast<StationBlock*>(this)->sample(subband, time);
}

}  // namespace rtcp
