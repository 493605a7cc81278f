#pragma once
/// \file CircularSampleBuffer.h
/// One station's recent samples, indexed by absolute sample number modulo the capacity,
/// with a per-stream bitmap of the samples that arrived (COBALT's sample ring buffer).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "SubbandLevelFlagger.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {

/// The subbands of a station (indices in its subband list) that one input stream carries.
struct StreamSubbands {
  int first = 0;
  int count = 0;
};

/// One validated packet to store: 16 samples of every beamlet, payload[beamlet][time].
struct PacketRef {
  int64_t firstSample = 0;  ///< absolute sample number of time 0
  const uint8_t* payload = nullptr;
  int nrBeamlets = 0;  ///< beamlets in the packet (>= the stream's count)
};

/// What a write() did with its packets.
struct WriteCounts {
  uint64_t written = 0;     ///< packets stored (fully or partly)
  uint64_t late = 0;        ///< packets with samples older than served or than the buffer holds
  uint64_t duplicated = 0;  ///< packets with samples that had arrived already (those kept)
};

/// What a read() found.
struct ReadResult {
  bool gone = false;    ///< part of the range had already left the buffer
  int64_t flagged = 0;  ///< samples (per subband) that did not arrive
};

/// Where a buffer's samples live when ranks read them in place (lend()): memory owned
/// elsewhere (a shared-memory segment, CircularSampleBuffer::bytesFor bytes), the slots
/// shifted and the first `mirror` slots mirrored after the last, so that every block
/// read lies in one piece of its row.
struct RingPlacement {
  uint8_t* memory = nullptr;  ///< null: the buffer allocates its own (and lends nothing)
  int64_t shift = 0;          ///< sample s lies in slot (s + shift) mod capacity
  int64_t mirror = 0;         ///< slots [0, mirror) are also written at capacity + slot
};

/// Samples of one station: samples[subband][slot] in the RSP payload encoding
/// (bytesPerDualPolSample bytes each) and arrived[stream][slot] bits, slot = sample mod
/// capacity. Each stream has one writer (its receiver); any thread may read.
///
/// Writing beyond the window moves it and invalidates the samples it overwrites. A write
/// never overwrites samples that a read is copying, nor, when blockWhenFull, samples at or
/// after the retention floor: the writer waits instead (non-real-time replays).
class CircularSampleBuffer {
 public:
  /// capacity: samples per subband, rounded up to a multiple of 64 (roundedCapacity).
  CircularSampleBuffer(int nrSubbands, int bitsPerSample, int64_t capacity,
                       std::vector<StreamSubbands> streams, bool blockWhenFull,
                       RingPlacement placement = {});
  ~CircularSampleBuffer();
  CircularSampleBuffer(const CircularSampleBuffer&) = delete;
  CircularSampleBuffer& operator=(const CircularSampleBuffer&) = delete;

  /// The samples' memory is mapped at construction but faulted in only here (one call;
  /// with huge pages the kernel may have to compact memory first: seconds per GB on a
  /// busy machine). Until then writes fault page by page; contents are the same.
  void populate() { samples_.populate(); }
  /// Bytes of sample memory.
  size_t bytes() const { return samples_.size(); }
  /// The capacity a buffer asked for `capacity` has.
  static int64_t roundedCapacity(int64_t capacity);
  /// Bytes of sample memory (RingPlacement::memory) a buffer of this shape needs.
  static size_t bytesFor(int nrSubbands, int bitsPerSample, int64_t capacity, int64_t mirror);

  /// Stores packets of one stream (16 samples each). Late, partly late and duplicated
  /// packets are counted; late samples are dropped. A packet never replaces samples that
  /// have arrived already: of a packet overlapping them only the missing samples are stored.
  WriteCounts write(int stream, std::span<const PacketRef> packets);

  /// Copies samples [firstSample, firstSample + count) of the stream's subbands
  /// [firstSubband, firstSubband + nrSubbands) (station subband indices) into rows
  /// [outSubband, ...) of `out` from time index 0, with their valid bits; flagged
  /// samples are zeroed. Marks the range served: later packets for it are late.
  ReadResult read(int stream, int64_t firstSample, int64_t count, int firstSubband, int nrSubbands,
                  StationBlock& out, int outSubband);

  /// As read(), but lends the samples in place instead of copying them (RingPlacement
  /// memory only): out.rowOffsets[outSubband + j] becomes the byte offset, from the
  /// placement's memory, of subband firstSubband + j's row at firstSample, which holds
  /// `count` samples in one piece. Samples that did not arrive are not zeroed (their
  /// valid bits are clear). Unless result.gone, the samples stay pinned (writers wait
  /// rather than overwrite them) until unpin(stream, firstSample).
  /// std::logic_error when the range does not lie in one piece (a delay beyond the one
  /// the placement was made for).
  ReadResult lend(int stream, int64_t firstSample, int64_t count, int firstSubband, int nrSubbands,
                  StationBlock& out, int outSubband);
  /// Ends one lend() of `firstSample` (not gone).
  void unpin(int stream, int64_t firstSample);

  /// Copies samples [firstSample, firstSample + count) of the stream's subbands (its
  /// rows, samples[row][time], bytesPerDualPolSample each) and their arrival bits
  /// (arrived[(t) / 64] bit t % 64) without touching the stream: nothing is marked served
  /// or pinned, so the writer never waits for it (a triggered dump beside the running
  /// observation). Samples the writer overwrote meanwhile, or that had left the window,
  /// are reported gone: the result is the first sample whose copy is good (their bits are
  /// clear).
  int64_t peek(int stream, int64_t firstSample, int64_t count, uint8_t* samples,
               uint64_t* arrived) const;
  int bytesPerSample() const { return bytesPerSample_; }
  /// The power of samples [firstSample, firstSample + count) of buffer row `row` (one of
  /// the stream's), over the samples that arrived in every wordStride-th run of 64 from
  /// firstSample (rowPower), read in place: like peek, nothing is marked served or pinned.
  /// No samples (RowPower{}) when part of the range had left the window, or the writer
  /// overwrote it meanwhile.
  RowPower power(int stream, int row, int64_t firstSample, int64_t count,
                 int64_t wordStride = 1) const;

  /// Waits until the stream has stored samples up to `sample` (exclusive) or holds a
  /// packet from `sample` on that waits for room (a gap in a recording), has ended,
  /// or has made no progress for stallSeconds (< 0: never stalls), or until deadline /
  /// close(). True unless the deadline or close() ended the wait.
  bool waitUntilPassed(int stream, int64_t sample, double stallSeconds,
                       std::chrono::steady_clock::time_point deadline);
  /// Marks a stream as ended (end of file, receiver stopped).
  void markEnded(int stream);
  /// Samples before this stay until read (blockWhenFull only); monotonic.
  void setRetentionFloor(int64_t sample);
  /// Wakes and releases waiting writers and readers for good.
  void close();

  /// One past the newest sample stored for a stream (hugely negative before the first).
  int64_t head(int stream) const;
  bool ended(int stream) const;
  int64_t capacity() const { return capacity_; }
  int nrStreams() const { return int(streams_.size()); }
  int nrSubbands() const { return nrSubbands_; }
  const StreamSubbands& streamSubbands(int stream) const { return streams_[stream]; }
  /// The stream carrying a station subband index, -1 if none.
  int streamOf(int subband) const;

 private:
  struct StreamState;
  size_t slot(int64_t sample) const;
  uint8_t* row(int subband) { return samples_.data() + size_t(subband) * rowBytes_; }
  const uint8_t* row(int subband) const { return samples_.data() + size_t(subband) * rowBytes_; }
  void moveWindow(StreamState& s, int64_t newHead);
  /// Checks that `count` fits the buffer and `out`, marks [firstSample, +count) served and
  /// pins it unless gone; the head and whether gone.
  std::pair<int64_t, bool> startRead(StreamState& s, int64_t firstSample, int64_t count,
                                     const StationBlock& out);
  /// The stream's valid bits of the range into row outSubband of out.valid, copied to
  /// its next nrSubbands - 1 rows; the samples flagged per subband.
  int64_t copyValidBits(StreamState& s, int64_t firstSample, int64_t count, int64_t head, bool gone,
                        int nrSubbands, StationBlock& out, int outSubband) const;
  /// Copies `n` samples' bytes to slot `first` of `rowStart` and to its mirror.
  void storeRun(uint8_t* rowStart, const uint8_t* src, size_t first, size_t n);
  void copyRows(int64_t firstSample, int64_t count, int firstSubband, int nrSubbands,
                StationBlock& out, int outSubband) const;
  void storePacket(const StreamSubbands& subbands, const PacketRef& packet, int64_t from,
                   int64_t to);
  /// Stores the samples of [from, to) whose bit in `arrived` (bit t: sample from + t) is
  /// clear.
  void storeMissing(const StreamSubbands& subbands, const PacketRef& packet, int64_t from,
                    int64_t to, uint32_t arrived);

  int nrSubbands_;
  int bytesPerSample_;
  int64_t capacity_;
  int64_t shift_;
  int64_t mirror_;
  size_t rowBytes_;  ///< (capacity + mirror) samples
  bool blockWhenFull_;
  std::vector<StreamSubbands> streams_;
  std::vector<std::unique_ptr<StreamState>> state_;
  /// samples[subband][slot][bytesPerSample], slots [0, capacity + mirror)
  AlignedBuffer<uint8_t> samples_;
};

}  // namespace rtcp::ion
