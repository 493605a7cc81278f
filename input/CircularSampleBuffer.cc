#include "CircularSampleBuffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "NonTemporalCopy.h"
#include "rtcp/RspPacket.h"

namespace rtcp::ion {
namespace {

constexpr int64_t kNoLimit = INT64_MAX / 4;
constexpr int64_t kNothing = INT64_MIN / 4;  ///< head and served boundary before any sample
constexpr int kBits = 64;

using Bitmap = std::atomic<uint64_t>;

uint64_t lowBits(int64_t n) { return n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1; }

/// The slot of sample `sample` in a ring of `capacity` slots shifted by `shift`.
size_t ringSlot(int64_t sample, int64_t shift, int64_t capacity) {
  const int64_t s = (sample + shift) % capacity;
  return size_t(s < 0 ? s + capacity : s);
}

/// memcpy for a packet's piece of one beamlet: a whole packet's 16 samples (128, 64 or 32
/// bytes at 16, 8 and 4 bits) copied inline. Through libc's memcpy, one call per beamlet
/// and packet took 11 % of ionproc's CPU (rtcp-bench capacity --subbands 40, perf).
inline void copyPiece(uint8_t* dst, const uint8_t* src, size_t bytes) {
  switch (bytes) {
    case 128:
      std::memcpy(dst, src, 128);
      break;
    case 64:
      std::memcpy(dst, src, 64);
      break;
    case 32:
      std::memcpy(dst, src, 32);
      break;
    default:
      std::memcpy(dst, src, bytes);
  }
}

}  // namespace

/// Per-stream state: the arrival bitmap and the window, guarded by `mutex`.
struct CircularSampleBuffer::StreamState {
  StreamState(int64_t capacity, int64_t shift)
      : arrived(new Bitmap[size_t(capacity / kBits)]),
        nrWords(size_t(capacity / kBits)),
        capacity(capacity),
        shift(shift) {
    for (size_t i = 0; i < nrWords; ++i) arrived[i].store(0, std::memory_order_relaxed);
  }

  size_t slot(int64_t sample) const { return ringSlot(sample, shift, capacity); }
  /// Applies op(word, mask) to the bits of slots holding samples [from, to).
  template <typename Op>
  void forBits(int64_t from, int64_t to, Op op) {
    while (from < to) {
      const size_t first = slot(from);
      const int bit = int(first % kBits);
      const int64_t n = std::min<int64_t>(to - from, kBits - bit);
      op(arrived[first / kBits], lowBits(n) << bit);
      from += n;
    }
  }
  /// Bit t: sample from + t has arrived, for samples [from, to), to - from <= 32.
  uint32_t arrivedBits(int64_t from, int64_t to) {
    uint32_t bits = 0;
    int shiftBy = 0;
    forBits(from, to, [&](Bitmap& word, uint64_t mask) {
      const int bit = std::countr_zero(mask);
      bits |= uint32_t((word.load(std::memory_order_relaxed) & mask) >> bit) << shiftBy;
      shiftBy += std::popcount(mask);
    });
    return bits;
  }
  /// Bits of the 64 slots starting at `slot`, wrapping at the end of the ring.
  uint64_t bitsAt(size_t slot) const {
    const size_t w = slot / kBits;
    const int b = int(slot % kBits);
    const uint64_t low = arrived[w].load(std::memory_order_relaxed) >> b;
    if (b == 0) return low;
    return low | (arrived[(w + 1) % nrWords].load(std::memory_order_relaxed) << (kBits - b));
  }
  int64_t roomLimit(bool blockWhenFull) const {
    const int64_t pin = pins.empty() ? kNoLimit : *pins.begin();
    return std::min(pin, blockWhenFull ? retention : kNoLimit);
  }

  std::mutex mutex;
  std::condition_variable progress;   ///< readers waiting for the head
  std::condition_variable space;      ///< writers waiting for room
  std::unique_ptr<Bitmap[]> arrived;  ///< arrived[slot / 64], bit slot % 64
  size_t nrWords;
  int64_t capacity;
  int64_t shift;
  std::atomic<int64_t> head{kNothing};  ///< one past the newest sample stored
  int64_t servedUntil = kNothing;       ///< samples before it are late
  int64_t announced = kNothing;         ///< first sample of a packet waiting for room
  int64_t retention = kNoLimit;         ///< blockWhenFull: keep samples from here on
  std::multiset<int64_t> pins;          ///< first samples of reads in progress and of lends
  bool ended = false;
  bool closed = false;
  int waiters = 0;
  std::chrono::steady_clock::time_point lastProgress = std::chrono::steady_clock::now();
};

int64_t CircularSampleBuffer::roundedCapacity(int64_t capacity) {
  return (std::max<int64_t>(capacity, kBits) + kBits - 1) / kBits * kBits;
}

size_t CircularSampleBuffer::bytesFor(int nrSubbands, int bitsPerSample, int64_t capacity,
                                      int64_t mirror) {
  return size_t(nrSubbands) * size_t(roundedCapacity(capacity) + mirror) *
         size_t(bytesPerDualPolSample(bitsPerSample));
}

CircularSampleBuffer::CircularSampleBuffer(int nrSubbands, int bitsPerSample, int64_t capacity,
                                           std::vector<StreamSubbands> streams, bool blockWhenFull,
                                           RingPlacement placement)
    : nrSubbands_(nrSubbands),
      bytesPerSample_(bytesPerDualPolSample(bitsPerSample)),
      capacity_(roundedCapacity(capacity)),
      shift_(placement.memory ? placement.shift : 0),
      mirror_(placement.memory ? placement.mirror : 0),
      rowBytes_(size_t(capacity_ + mirror_) * size_t(bytesPerSample_)),
      blockWhenFull_(blockWhenFull),
      streams_(std::move(streams)) {
  if (mirror_ < 0 || mirror_ > capacity_)
    throw std::invalid_argument("circular buffer: a mirror of " + std::to_string(mirror_) +
                                " slots in a ring of " + std::to_string(capacity_));
  const size_t bytes = size_t(nrSubbands) * rowBytes_;
  if (placement.memory) {
    samples_ = AlignedBuffer<uint8_t>::borrowed(placement.memory, bytes);
  } else {
    samples_ = AlignedBuffer<uint8_t>::unpopulated(bytes);
    // Rows are written 16 samples at a time across many pages: huge pages spare the TLB.
    if (samples_.size() > (2u << 20)) madvise(samples_.data(), samples_.size(), MADV_HUGEPAGE);
  }
  for (const StreamSubbands& s : streams_) {
    if (s.first < 0 || s.count < 0 || s.first + s.count > nrSubbands)
      throw std::invalid_argument("circular buffer: stream subbands [" + std::to_string(s.first) +
                                  ", +" + std::to_string(s.count) + ") outside the " +
                                  std::to_string(nrSubbands) + " subbands");
    state_.push_back(std::make_unique<StreamState>(capacity_, shift_));
  }
}

CircularSampleBuffer::~CircularSampleBuffer() = default;

size_t CircularSampleBuffer::slot(int64_t sample) const {
  return ringSlot(sample, shift_, capacity_);
}

int CircularSampleBuffer::streamOf(int subband) const {
  for (size_t k = 0; k < streams_.size(); ++k)
    if (subband >= streams_[k].first && subband < streams_[k].first + streams_[k].count)
      return int(k);
  return -1;
}

int64_t CircularSampleBuffer::head(int stream) const {
  return state_[stream]->head.load(std::memory_order_acquire);
}

bool CircularSampleBuffer::ended(int stream) const {
  std::lock_guard lock(state_[stream]->mutex);
  return state_[stream]->ended;
}

void CircularSampleBuffer::moveWindow(StreamState& s, int64_t newHead) {
  // Slots of samples [head, newHead) held samples that now leave the window.
  const int64_t from = std::max(s.head.load(std::memory_order_relaxed), newHead - capacity_);
  s.forBits(from, newHead,
            [](Bitmap& word, uint64_t mask) { word.fetch_and(~mask, std::memory_order_relaxed); });
  s.head.store(newHead, std::memory_order_release);
}

void CircularSampleBuffer::storeRun(uint8_t* rowStart, const uint8_t* src, size_t first, size_t n) {
  const size_t bps = size_t(bytesPerSample_);
  copyPiece(rowStart + first * bps, src, n * bps);
  if (first < size_t(mirror_)) {  // the mirror after the last slot
    const size_t m = std::min(n, size_t(mirror_) - first);
    std::memcpy(rowStart + (size_t(capacity_) + first) * bps, src, m * bps);
  }
}

void CircularSampleBuffer::storePacket(const StreamSubbands& subbands, const PacketRef& packet,
                                       int64_t from, int64_t to) {
  const size_t bps = size_t(bytesPerSample_);
  const size_t first = slot(from);
  const size_t n1 = std::min<size_t>(size_t(to - from), size_t(capacity_) - first);
  const size_t n2 = size_t(to - from) - n1;
  const uint8_t* src = packet.payload + size_t(from - packet.firstSample) * bps;
  const size_t srcStride = size_t(kRspSamplesPerPacket) * bps;  // payload[beamlet][time]
  for (int b = 0; b < subbands.count; ++b, src += srcStride) {
    uint8_t* rowStart = row(subbands.first + b);
    storeRun(rowStart, src, first, n1);
    if (n2) storeRun(rowStart, src + n1 * bps, 0, n2);
  }
}

void CircularSampleBuffer::storeMissing(const StreamSubbands& subbands, const PacketRef& packet,
                                        int64_t from, int64_t to, uint32_t arrived) {
  const int n = int(to - from);
  for (int t = 0; t < n;) {
    if ((arrived >> t) & 1) {
      ++t;
      continue;
    }
    int end = t + 1;
    while (end < n && !((arrived >> end) & 1)) ++end;
    storePacket(subbands, packet, from + t, from + end);
    t = end;
  }
}

WriteCounts CircularSampleBuffer::write(int stream, std::span<const PacketRef> packets) {
  StreamState& s = *state_[stream];
  const StreamSubbands& subbands = streams_[stream];
  WriteCounts counts;
  std::unique_lock lock(s.mutex);
  for (const PacketRef& p : packets) {
    int64_t lo = p.firstSample;
    const int64_t hi = lo + kRspSamplesPerPacket;
    // Moving the window must not overwrite what a read copies or what must be retained.
    const auto room = [&] {
      return s.closed || hi <= s.head.load(std::memory_order_relaxed) ||
             hi - capacity_ <= s.roomLimit(blockWhenFull_);
    };
    if (!room()) {
      // The stream has moved on to `lo`: readers waiting for samples before it need not
      // wait for this packet (a recording with a gap would otherwise deadlock: the reader
      // waits for the head, the writer for the reader to release room).
      s.announced = std::max(s.announced, lo);
      if (s.waiters) s.progress.notify_all();
      s.space.wait(lock, room);
    }
    if (s.closed) break;
    const int64_t head = s.head.load(std::memory_order_relaxed);
    const int64_t lateBefore = std::max(s.servedUntil, head - capacity_);
    if (hi <= lateBefore) {
      ++counts.late;
      continue;
    }
    if (lo < lateBefore) {
      ++counts.late;
      lo = lateBefore;
    }
    if (hi > head) moveWindow(s, hi);  // clears the bits of the slots it takes over
    const uint32_t arrived = s.arrivedBits(lo, hi);
    const uint32_t all = uint32_t(lowBits(hi - lo));
    if (arrived == all) {
      ++counts.duplicated;
      continue;
    }
    if (arrived) {
      ++counts.duplicated;  // what arrived first stays
      storeMissing(subbands, p, lo, hi, arrived);
    } else {
      storePacket(subbands, p, lo, hi);
    }
    s.forBits(lo, hi,
              [](Bitmap& word, uint64_t mask) { word.fetch_or(mask, std::memory_order_relaxed); });
    ++counts.written;
  }
  if (counts.written) s.lastProgress = std::chrono::steady_clock::now();
  if (s.waiters) s.progress.notify_all();
  return counts;
}

void CircularSampleBuffer::copyRows(int64_t firstSample, int64_t count, int firstSubband,
                                    int nrSubbands, StationBlock& out, int outSubband) const {
  const size_t bps = size_t(bytesPerSample_);
  const size_t first = slot(firstSample);
  const size_t n1 = std::min<size_t>(size_t(count), size_t(capacity_) - first);
  const size_t n2 = size_t(count) - n1;
  for (int j = 0; j < nrSubbands; ++j) {
    const uint8_t* from = row(firstSubband + j);
    uint8_t* dst = out.samples.data() + size_t(outSubband + j) * size_t(out.header.nrSamples) * bps;
    // Rows go to memory that the ranks read, not this process. Streaming the 128-byte
    // pieces of each packet into the ring (storePacket) as well doubled ionproc's CPU
    // (rtcp-bench capacity --subbands 48: 0.95-1.09 cores against 0.55-0.59).
    copyNonTemporal(dst, from + first * bps, n1 * bps);
    if (n2) copyNonTemporal(dst + n1 * bps, from, n2 * bps);
  }
  nonTemporalFence();  // the rows are visible before the block is handed over
}

std::pair<int64_t, bool> CircularSampleBuffer::startRead(StreamState& s, int64_t firstSample,
                                                         int64_t count, const StationBlock& out) {
  if (count > capacity_ || count > out.header.nrSamples)
    throw std::invalid_argument("circular buffer: read of " + std::to_string(count) +
                                " samples exceeds the buffer or the block");
  std::lock_guard lock(s.mutex);
  const int64_t head = s.head.load(std::memory_order_relaxed);
  const bool gone = firstSample < head - capacity_;
  s.servedUntil = std::max(s.servedUntil, firstSample + count);
  if (!gone) s.pins.insert(firstSample);
  return {head, gone};
}

int64_t CircularSampleBuffer::copyValidBits(StreamState& s, int64_t firstSample, int64_t count,
                                            int64_t head, bool gone, int nrSubbands,
                                            StationBlock& out, int outSubband) const {
  const size_t words = out.wordsPerSubband();
  // Bits are meaningful for samples in the window [head - capacity, head) only.
  const int64_t validEnd = gone ? firstSample : std::min(firstSample + count, head);
  uint64_t* valid = out.valid.data() + size_t(outSubband) * words;
  int64_t arrived = 0;
  for (size_t i = 0; i < words; ++i) {
    const int64_t start = firstSample + int64_t(i) * kBits;
    const int64_t n = validEnd - start;
    valid[i] = n <= 0 ? 0 : s.bitsAt(slot(start)) & lowBits(n);
    arrived += std::popcount(valid[i]);
  }
  for (int j = 1; j < nrSubbands; ++j)  // every subband row gets the stream's bits
    std::memcpy(valid + size_t(j) * words, valid, words * sizeof(uint64_t));
  return count - arrived;
}

void CircularSampleBuffer::unpin(int stream, int64_t firstSample) {
  StreamState& s = *state_[stream];
  std::lock_guard lock(s.mutex);
  const auto pin = s.pins.find(firstSample);
  if (pin == s.pins.end())
    throw std::logic_error("circular buffer: no pin at sample " + std::to_string(firstSample));
  s.pins.erase(pin);
  s.space.notify_all();
}

ReadResult CircularSampleBuffer::read(int stream, int64_t firstSample, int64_t count,
                                      int firstSubband, int nrSubbands, StationBlock& out,
                                      int outSubband) {
  StreamState& s = *state_[stream];
  const size_t bps = size_t(bytesPerSample_);
  const size_t words = out.wordsPerSubband();
  const auto [head, gone] = startRead(s, firstSample, count, out);
  const int64_t flagged =
      copyValidBits(s, firstSample, count, head, gone, nrSubbands, out, outSubband);
  if (!gone) {
    copyRows(firstSample, count, firstSubband, nrSubbands, out, outSubband);
    unpin(stream, firstSample);
  }
  // Zero what did not arrive.
  const uint64_t* valid = out.valid.data() + size_t(outSubband) * words;
  for (int j = 0; j < nrSubbands; ++j) {
    uint8_t* row = out.samples.data() + size_t(outSubband + j) * size_t(out.header.nrSamples) * bps;
    for (size_t i = 0; i < words; ++i) {
      if (valid[i] == ~uint64_t(0)) continue;
      const int64_t t0 = int64_t(i) * kBits;
      const int64_t n = std::min<int64_t>(kBits, count - t0);
      if (valid[i] == 0) {
        std::memset(row + size_t(t0) * bps, 0, size_t(n) * bps);
        continue;
      }
      for (int64_t t = 0; t < n; ++t)
        if (!((valid[i] >> t) & 1)) std::memset(row + size_t(t0 + t) * bps, 0, bps);
    }
  }
  return {gone, flagged};
}

ReadResult CircularSampleBuffer::lend(int stream, int64_t firstSample, int64_t count,
                                      int firstSubband, int nrSubbands, StationBlock& out,
                                      int outSubband) {
  StreamState& s = *state_[stream];
  const size_t first = slot(firstSample);
  if (first + size_t(count) > size_t(capacity_ + mirror_))
    throw std::logic_error("circular buffer: samples [" + std::to_string(firstSample) + ", +" +
                           std::to_string(count) + ") wrap past the ring's mirror of " +
                           std::to_string(mirror_) + " slots (a delay beyond the ring's bound?)");
  const auto [head, gone] = startRead(s, firstSample, count, out);
  const int64_t flagged =
      copyValidBits(s, firstSample, count, head, gone, nrSubbands, out, outSubband);
  for (int j = 0; j < nrSubbands; ++j)
    out.rowOffsets[size_t(outSubband + j)] =
        size_t(firstSubband + j) * rowBytes_ + first * size_t(bytesPerSample_);
  return {gone, flagged};
}

int64_t CircularSampleBuffer::peek(int stream, int64_t firstSample, int64_t count, uint8_t* samples,
                                   uint64_t* arrived) const {
  StreamState& s = *state_[stream];
  const StreamSubbands& rows = streams_[stream];
  const size_t words = size_t((count + kBits - 1) / kBits);
  {  // the bits of the window as it is now (under the writer's lock: its stores are done)
    std::lock_guard lock(s.mutex);
    const int64_t head = s.head.load(std::memory_order_relaxed);
    const int64_t from = std::max(firstSample, head - capacity_);
    const int64_t end = std::min(firstSample + count, head);
    for (size_t i = 0; i < words; ++i) {
      const int64_t start = firstSample + int64_t(i) * kBits;
      const int64_t lo = std::max(start, from), hi = std::min(start + kBits, end);
      arrived[i] = hi <= lo ? 0 : (s.bitsAt(slot(lo)) & lowBits(hi - lo)) << (lo - start);
    }
  }
  const size_t bps = size_t(bytesPerSample_);
  const size_t first = slot(firstSample);
  const size_t n1 = std::min<size_t>(size_t(count), size_t(capacity_) - first);
  for (int j = 0; j < rows.count; ++j) {
    const uint8_t* from = row(rows.first + j);
    uint8_t* to = samples + size_t(j) * size_t(count) * bps;
    std::memcpy(to, from + first * bps, n1 * bps);
    if (size_t(count) > n1) std::memcpy(to + n1 * bps, from, (size_t(count) - n1) * bps);
  }
  // A writer that took over a slot copied above moved the head first, under the lock.
  int64_t good = firstSample;
  {
    std::lock_guard lock(s.mutex);
    good = std::clamp(s.head.load(std::memory_order_relaxed) - capacity_, firstSample,
                      firstSample + count);
  }
  for (int64_t t = 0; t < good - firstSample; ++t)
    arrived[t / kBits] &= ~(uint64_t(1) << (t % kBits));
  return good;
}

RowPower CircularSampleBuffer::power(int stream, int rowIndex, int64_t firstSample, int64_t count,
                                     int64_t wordStride) const {
  StreamState& s = *state_[stream];
  const int64_t words = (count + kBits - 1) / kBits;
  thread_local std::vector<uint64_t> arrived;  // a serving thread's, reused
  arrived.assign(size_t(words), 0);
  {
    std::lock_guard lock(s.mutex);
    const int64_t head = s.head.load(std::memory_order_relaxed);
    if (firstSample < head - capacity_) return {};  // left the window
    const int64_t end = std::min(firstSample + count, head);
    for (int64_t i = 0; i < words; i += wordStride) {
      const int64_t start = firstSample + i * kBits;
      const int64_t hi = std::min(start + kBits, end);
      arrived[size_t(i)] = hi <= start ? 0 : s.bitsAt(slot(start)) & lowBits(hi - start);
    }
  }
  const int bits = bytesPerSample_ * 2;
  const size_t bps = size_t(bytesPerSample_);
  const int64_t first = int64_t(slot(firstSample));
  const int64_t readable = capacity_ + mirror_;  // slots [0, readable) lie in one piece
  RowPower p;
  // Samples [t, t + n) of the range, their bits in `word` from bit 0.
  auto add = [&](int64_t t, int64_t n, uint64_t word) {
    const int64_t at = first + t < readable ? first + t : first + t - capacity_;
    const RowPower q = rowPower(row(rowIndex) + size_t(at) * bps, &word, n, bits);
    p.sum += q.sum;
    p.samples += q.samples;
  };
  for (int64_t i = 0; i < words; i += wordStride) {
    const int64_t t = i * kBits, n = std::min<int64_t>(kBits, count - t);
    const int64_t before = readable - (first + t);  // samples of the run before the wrap
    if (before <= 0 || before >= n) {
      add(t, n, arrived[size_t(i)]);
    } else {
      add(t, before, arrived[size_t(i)] & lowBits(before));
      add(t + before, n - before, arrived[size_t(i)] >> before);
    }
  }
  std::lock_guard lock(s.mutex);  // a writer that took over a slot moved the head first
  if (s.head.load(std::memory_order_relaxed) - capacity_ > firstSample) return {};
  return p;
}

bool CircularSampleBuffer::waitUntilPassed(int stream, int64_t sample, double stallSeconds,
                                           std::chrono::steady_clock::time_point deadline) {
  using Clock = std::chrono::steady_clock;
  StreamState& s = *state_[stream];
  std::unique_lock lock(s.mutex);
  ++s.waiters;
  const auto stall = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(stallSeconds, 0.0)));
  bool passed = false;
  for (;;) {
    const auto now = Clock::now();
    const bool stalled = stallSeconds >= 0 && now - s.lastProgress >= stall;
    passed = std::max(s.head.load(std::memory_order_relaxed), s.announced) >= sample || s.ended ||
             stalled;
    if (passed || s.closed || now >= deadline) break;
    auto wake = std::min(deadline, now + std::chrono::seconds(1));  // re-checks now and then
    if (stallSeconds >= 0) wake = std::min(wake, s.lastProgress + stall);
    s.progress.wait_until(lock, wake);
  }
  --s.waiters;
  return passed;
}

void CircularSampleBuffer::markEnded(int stream) {
  StreamState& s = *state_[stream];
  std::lock_guard lock(s.mutex);
  s.ended = true;
  s.progress.notify_all();
}

void CircularSampleBuffer::setRetentionFloor(int64_t sample) {
  for (auto& s : state_) {
    std::lock_guard lock(s->mutex);
    s->retention = s->retention == kNoLimit ? sample : std::max(s->retention, sample);
    s->space.notify_all();
  }
}

void CircularSampleBuffer::close() {
  for (auto& s : state_) {
    std::lock_guard lock(s->mutex);
    s->closed = true;
    s->progress.notify_all();
    s->space.notify_all();
  }
}

}  // namespace rtcp::ion
