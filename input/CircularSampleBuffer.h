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
#include <vector>

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

/// Samples of one station: samples[subband][slot] in the RSP payload encoding
/// (bytesPerDualPolSample bytes each) and arrived[stream][slot] bits, slot = sample mod
/// capacity. Each stream has one writer (its receiver); any thread may read.
///
/// Writing beyond the window moves it and invalidates the samples it overwrites. A write
/// never overwrites samples that a read is copying, nor, when blockWhenFull, samples at or
/// after the retention floor: the writer waits instead (non-real-time replays).
class CircularSampleBuffer {
 public:
  /// capacity: samples per subband, rounded up to a multiple of 64.
  CircularSampleBuffer(int nrSubbands, int bitsPerSample, int64_t capacity,
                       std::vector<StreamSubbands> streams, bool blockWhenFull);
  ~CircularSampleBuffer();
  CircularSampleBuffer(const CircularSampleBuffer&) = delete;
  CircularSampleBuffer& operator=(const CircularSampleBuffer&) = delete;

  /// The samples' memory is mapped at construction but faulted in only here (one call;
  /// with huge pages the kernel may have to compact memory first: seconds per GB on a
  /// busy machine). Until then writes fault page by page; contents are the same.
  void populate() { samples_.populate(); }
  /// Bytes of sample memory.
  size_t bytes() const { return samples_.size(); }

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
  void moveWindow(StreamState& s, int64_t newHead);
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
  bool blockWhenFull_;
  std::vector<StreamSubbands> streams_;
  std::vector<std::unique_ptr<StreamState>> state_;
  AlignedBuffer<uint8_t> samples_;  ///< samples[subband][slot][bytesPerSample]
};

}  // namespace rtcp::ion
