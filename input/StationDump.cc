#include "StationDump.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/Integrations.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StationBlock.h"

namespace rtcp::ion {
namespace {

constexpr int64_t kPeekSamples = 64 * kRspSamplesPerPacket;  ///< samples copied per peek()

/// Dumps one stream's samples [first, end) on its packet grid into recording `recording`.
class StreamDumper {
 public:
  StreamDumper(const ObservationSettings& s, const StationSettings& station,
               const CircularSampleBuffer& buffer, int stream, InputRecorder& recorder,
               int recording)
      : buffer_(buffer),
        stream_(stream),
        recorder_(recorder),
        recording_(recording),
        clock_(s.clockMHz),
        beamlets_(buffer.streamSubbands(stream).count),
        bps_(size_t(buffer.bytesPerSample())),
        samples_(size_t(std::max(beamlets_, 1)) * size_t(kPeekSamples) * bps_),
        arrived_(size_t(kPeekSamples / 64)),
        packet_(rspPacketSize(s.bitsPerSample, std::max(beamlets_, 1))) {
    header_.setClockMHz(s.clockMHz);
    header_.setBitsPerSample(s.bitsPerSample);
    header_.setStationId(station.id, stream % 32);
    header_.nrBeamlets = uint8_t(beamlets_);
    gap_.station = station.name;
    gap_.stream = stream;
  }

  /// Starts at the packet of the stream's grid (the head is one past a packet's last
  /// sample) that holds `first`.
  void begin(int64_t first, int64_t end) {
    const int64_t phase = ((buffer_.head(stream_) % 16) + 16) % 16;
    next_ = first - ((((first - phase) % 16) + 16) % 16);
    end_ = end;
  }
  bool done() const { return beamlets_ == 0 || next_ >= end_; }
  /// The samples the next step() reads up to.
  int64_t nextEnd() const { return std::min(next_ + kPeekSamples, end_); }
  /// Dumps the next kPeekSamples samples.
  void step(std::vector<DumpGap>& gaps) {
    if (done()) return;
    const int64_t p = next_;
    const int64_t good = buffer_.peek(stream_, p, kPeekSamples, samples_.data(), arrived_.data());
    if (good > p) note(gaps, p, std::min(good, end_), "gone from the buffer");
    for (int64_t t = 0; t < kPeekSamples && p + t < end_; t += kRspSamplesPerPacket)
      if (p + t + kRspSamplesPerPacket > good) writePacket(gaps, p, t);
    next_ += kPeekSamples;
    if (done()) close(gaps);
  }

 private:
  /// The packet of samples [p + t, +16): written when all arrived, else a gap.
  void writePacket(std::vector<DumpGap>& gaps, int64_t p, int64_t t) {
    const uint64_t bits = (arrived_[size_t(t / 64)] >> (t % 64)) & 0xffff;
    if (bits != 0xffff) {
      note(gaps, p + t, p + t + kRspSamplesPerPacket, "not received");
      return;
    }
    const RspStamp stamp = clock_.stamp(p + t);
    header_.timestamp = stamp.timestamp;
    header_.blockSequenceNumber = stamp.sequence;
    header_.write(packet_.data());
    const size_t piece = size_t(kRspSamplesPerPacket) * bps_;  // payload[beamlet][time]
    for (int b = 0; b < beamlets_; ++b)
      std::memcpy(packet_.data() + kRspHeaderSize + size_t(b) * piece,
                  samples_.data() + (size_t(b) * size_t(kPeekSamples) + size_t(t)) * bps_, piece);
    recorder_.append(recording_, packet_);
  }
  /// Extends the open gap with [from, end) when it continues it for the same reason.
  void note(std::vector<DumpGap>& gaps, int64_t from, int64_t end, const std::string& why) {
    if (open_ && gap_.why == why && gap_.endSample >= from) {
      gap_.endSample = std::max(gap_.endSample, end);
      return;
    }
    close(gaps);
    gap_.firstSample = from;
    gap_.endSample = end;
    gap_.why = why;
    open_ = true;
  }
  void close(std::vector<DumpGap>& gaps) {
    if (open_) gaps.push_back(gap_);
    open_ = false;
  }

  const CircularSampleBuffer& buffer_;
  int stream_;
  InputRecorder& recorder_;
  int recording_;
  SampleClock clock_;
  int beamlets_;
  size_t bps_;
  AlignedBuffer<uint8_t> samples_;  ///< [beamlet][kPeekSamples][bps]
  std::vector<uint64_t> arrived_;   ///< [kPeekSamples / 64]
  std::vector<uint8_t> packet_;
  RspHeader header_;
  DumpGap gap_;
  bool open_ = false;
  int64_t next_ = 0, end_ = 0;  ///< the next step's first sample; the end
};

}  // namespace

bool DumpResult::complete() const {
  if (std::any_of(gaps.begin(), gaps.end(),
                  [](const DumpGap& g) { return g.why == "gone from the buffer"; }))
    return false;
  return std::all_of(recordings.begin(), recordings.end(),
                     [](const RecordingCounts& r) { return r.notRecorded() == 0; });
}

std::pair<int64_t, int64_t> dumpBlocks(const ObservationSettings& s, double from, double to) {
  if (!(from < to)) throw std::invalid_argument("the window's end is not after its start");
  const SampleClock clock(s.clockMHz);
  const double perBlock = double(s.samplesPerBlock());
  const int64_t start = s.startSample();
  const int64_t perIntegration = s.blocksPerIntegration;
  const int64_t nrBlocks = s.nrIntegrations() * perIntegration;
  int64_t first = int64_t(std::floor(double(clock.firstSampleAtOrAfter(from) - start) / perBlock));
  int64_t end = int64_t(std::ceil(double(clock.firstSampleAtOrAfter(to) - start) / perBlock));
  first = std::max<int64_t>(0, first / perIntegration * perIntegration);
  end = std::min(nrBlocks, (end + perIntegration - 1) / perIntegration * perIntegration);
  if (end <= first)
    throw std::invalid_argument("the window " + formatUtc(from) + " .. " + formatUtc(to) +
                                " holds no integration of the observation (" +
                                formatUtc(s.startTime) + " .. " + formatUtc(s.stopTime) + ")");
  return {first, end - first};
}

DumpResult dumpStations(StationInput& input, const DumpRequest& request) {
  const ObservationSettings& s = input.settings();
  DumpResult result;
  std::tie(result.firstBlock, result.nrBlocks) = dumpBlocks(s, request.from, request.to);
  result.leadInBlocks =
      std::min(beamFormerLeadInBlocks(s), result.firstBlock - firstProcessedBlock(s));
  // A block reads its filter history and up to the largest coarse delay on either side.
  const int64_t reach = input.maxDelaySamples() + kRspSamplesPerPacket;
  result.firstSample =
      s.blockStartSample(result.firstBlock - result.leadInBlocks) - nrHistorySamples(s) - reach;
  result.endSample = s.blockStartSample(result.firstBlock + result.nrBlocks) + reach;

  std::vector<int> stations = request.stations.empty() ? input.stations() : request.stations;
  const std::vector<int> served = input.stations();
  std::vector<std::string> names;
  for (int index : stations) {
    if (std::find(served.begin(), served.end(), index) == served.end())
      throw std::invalid_argument("station " + std::to_string(index) + " is not served here");
    for (int k = 0; k < input.buffer(index).nrStreams(); ++k)
      names.push_back(recordingFileName(s.stations[size_t(index)].name, k));
  }
  RecorderOptions options;
  options.directory = request.directory;
  options.bufferBytes = request.bufferBytes;
  options.waitForBuffer = true;
  InputRecorder recorder(options, names);
  std::vector<std::unique_ptr<StreamDumper>> dumpers;
  for (int index : stations)
    for (int k = 0; k < input.buffer(index).nrStreams(); ++k) {
      dumpers.push_back(std::make_unique<StreamDumper>(
          s, s.stations[size_t(index)], input.buffer(index), k, recorder, int(dumpers.size())));
      dumpers.back()->begin(result.firstSample, result.endSample);
    }
  // Every stream a piece at a time, oldest first (the buffers overwrite the oldest); what
  // has not arrived yet is waited for, as the block that ends there would be.
  for (;;) {
    int64_t until = INT64_MIN;
    for (const auto& d : dumpers)
      if (!d->done()) until = std::max(until, d->nextEnd());
    if (until == INT64_MIN) break;
    if (!input.waitUntilServable(until))
      throw std::runtime_error("the observation stopped before the window was complete");
    for (auto& d : dumpers) d->step(result.gaps);
  }
  recorder.finish();
  for (int r = 0; r < recorder.nrStreams(); ++r) result.recordings.push_back(recorder.counts(r));
  return result;
}

}  // namespace rtcp::ion
