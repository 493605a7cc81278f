#pragma once
/// \file StationBlock.h
/// What ionproc serves a compute rank: one station's samples of one block for a range of
/// subbands, each subband read n_s samples early (the coarse delay toward its beam), with
/// the filter bank's history in front, the record of which samples arrived, and the
/// residual delays per subband.
///
/// Sample index t of a block runs over [0, nrHistorySamples + samplesPerBlock): index
/// nrHistorySamples is compensated sample blockStartSample(block), i.e. station sample
/// blockStartSample(block) - delays[subband].coarse.

#include <complex>
#include <cstdint>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp {

constexpr int kFilterTaps = 16;  ///< polyphase filter bank taps per channel

/// Samples of filter history that precede each block: (taps - 1) * channels, 0 for C = 1.
inline int nrHistorySamples(const ObservationSettings& settings) {
  return settings.channelsPerSubband > 1 ? (kFilterTaps - 1) * settings.channelsPerSubband : 0;
}

/// Fixed-size description of a StationBlock; travels as the link's inline head.
struct StationBlockHeader {
  int64_t block = 0;         ///< block number since the observation start
  int32_t station = 0;       ///< index in the observation's station list
  int32_t firstSubband = 0;  ///< index in the observation's subband list
  int32_t nrSubbands = 0;
  int32_t nrSamples = 0;  ///< history + samplesPerBlock
  int32_t bitsPerSample = 16;
  int32_t flaggedByIonproc = 0;  ///< 1: served fully flagged because the ranks fell behind
  /// 1: the rows were lent in ionproc's sample ring, at the offsets the block lists
  /// (StationBlock::overRowTable), not laid out in the block.
  int32_t rowsInRing = 0;
  int32_t reserved32 = 0;
  int64_t reserved[3] = {};  ///< pads the header to 64 bytes
};
static_assert(sizeof(StationBlockHeader) == 64);

/// The delays of one subband of a StationBlock, toward its beam (DESIGN §2.3).
struct SubbandDelay {
  int32_t coarse = 0;  ///< n_s = round(tau_s * fs) at the block middle
  int32_t reserved = 0;
  double residualStart = 0;  ///< tau_s - n_s / fs at the block start, seconds
  double residualEnd = 0;    ///< tau_s - n_s / fs at the block end, seconds
};
static_assert(sizeof(SubbandDelay) == 24);

struct StationBlock {
  StationBlock() = default;
  StationBlock(int nrSubbands, int nrSamples, int bitsPerSample);

  /// Bytes a block of this shape takes laid out in one piece of memory (over()).
  static size_t bytesInOnePiece(int nrSubbands, int nrSamples, int bitsPerSample);
  /// A block whose samples, valid bits and delays lie, in that order and each 64-byte
  /// aligned, in `memory` (at least bytesInOnePiece() bytes, 64-byte aligned) owned
  /// elsewhere: a slot of a shared-memory segment (link/SharedBlockSegment.h).
  static StationBlock over(uint8_t* memory, int nrSubbands, int nrSamples, int bitsPerSample);
  /// Bytes a block whose rows lie elsewhere takes in one piece (overRowTable()).
  static size_t bytesOfRowTable(int nrSubbands, int nrSamples);
  /// A block whose valid bits, delays and row offsets lie, in that order and each 64-byte
  /// aligned, in `memory`; its rows lie at rowBase + rowOffsets[subband] (a lent ring),
  /// rowBase set by the caller.
  static StationBlock overRowTable(uint8_t* memory, int nrSubbands, int nrSamples,
                                   int bitsPerSample);

  StationBlockHeader header;
  /// samples[subband][time] of bytesPerDualPolSample(bits) bytes each, in the RSP payload
  /// encoding (X then Y; re, im), so 8- and 4-bit data travel packed; samples that did
  /// not arrive are zero. Empty when the rows lie elsewhere (rowOffsets): use sample().
  AlignedBuffer<uint8_t> samples;
  /// valid[subband][time / 64]: bit (time % 64) is set when the sample arrived.
  AlignedBuffer<uint64_t> valid;
  /// delays[subband]: where the subband's samples were read, and what remains to correct.
  AlignedBuffer<SubbandDelay> delays;
  /// Set when the rows are not in `samples` but lent in place (header.rowsInRing): row
  /// `subband` starts at rowBase + rowOffsets[subband] and holds nrSamples samples. Where
  /// a valid bit is clear, such a row holds whatever the ring held: read the valid bits.
  uint8_t* rowBase = nullptr;
  AlignedBuffer<uint64_t> rowOffsets;

  size_t wordsPerSubband() const { return (size_t(header.nrSamples) + 63) / 64; }
  bool isValid(int subband, int time) const {
    return (valid[subband * wordsPerSubband() + time / 64] >> (time % 64)) & 1;
  }
  void setValid(int subband, int time, bool arrived);
  uint8_t* sample(int subband, int time);
  const uint8_t* sample(int subband, int time) const;
};

}  // namespace rtcp
