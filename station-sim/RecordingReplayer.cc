#include "RecordingReplayer.h"

#include <cmath>
#include <memory>
#include <stdexcept>

#include "Pacer.h"
#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::sim {

/// One recording, read a group of packets ahead: packets of one size that lie one after
/// another in it, as many as one segmented send holds (datagramsPerSegmentedSend, as
/// station-sim sends its own), sent in one Stream::writeEach.
struct RecordingReplayer::Source {
  Input input;
  std::unique_ptr<Stream> file, destination;
  std::vector<uint8_t> group;  ///< the next group's packets; empty at the end
  size_t packetSize = 0, groupPackets = 0;
  int64_t sample = 0;          ///< the group's first sample
  int64_t endSample = 0;       ///< the first sample after its last packet
  std::vector<uint8_t> ahead;  ///< the packet after the group; empty at the end
  int64_t aheadSample = 0, aheadEnd = 0;
  uint64_t index = 0;  ///< packets read so far
  Totals totals;

  /// The next group (empty at the end): the packet read ahead, and those after it of the
  /// same size whose samples start before stopSample.
  void next(int64_t stopSample) {
    group.clear();
    groupPackets = 0;
    if (ahead.empty()) return;
    packetSize = ahead.size();
    sample = aheadSample;
    for (;;) {
      group.insert(group.end(), ahead.begin(), ahead.end());
      endSample = aheadEnd;
      ++groupPackets;
      if (!readAhead() || groupPackets == datagramsPerSegmentedSend(packetSize) ||
          ahead.size() != packetSize || aheadSample >= stopSample)
        return;
    }
  }

  /// Reads the next packet into ahead; false (ahead empty) at the end of the recording.
  bool readAhead() {
    ahead.resize(kRspHeaderSize);
    if (!file->readExact(ahead.data(), kRspHeaderSize)) {
      ahead.clear();
      return false;
    }
    const RspHeader h = RspHeader::read(ahead.data());
    const int bits = h.bitsPerSample();
    if (bits == 0 || h.nrBeamlets == 0 || h.nrBlocks == 0 || (h.version != 3 && h.version != 2))
      throw std::runtime_error(where() + ": not an RSP packet (version " +
                               std::to_string(h.version) + ", bit mode field " +
                               std::to_string(h.sourceInfo2 & 3) + ", " +
                               std::to_string(h.nrBeamlets) + " beamlets)");
    ahead.resize(rspPacketSize(bits, h.nrBeamlets, h.nrBlocks));
    if (!file->readExact(ahead.data() + kRspHeaderSize, ahead.size() - kRspHeaderSize))
      throw std::runtime_error(where() + ": recording ends inside the packet");
    const SampleClock clock(h.clockMHz());
    aheadSample = clock.sampleNumber(h.stamp());
    aheadEnd = aheadSample + h.nrBlocks;
    ++index;
    return true;
  }
  /// Shifts every timestamp of the group by seconds.
  void restamp(int64_t seconds) {
    for (size_t p = 0; p < groupPackets; ++p) {
      uint8_t* packet = group.data() + p * packetSize;
      RspHeader h = RspHeader::read(packet);
      h.timestamp = uint32_t(int64_t(h.timestamp) + seconds);
      h.write(packet);
    }
  }
  std::string where() const { return input.recording + ": packet " + std::to_string(index); }
};

RecordingReplayer::RecordingReplayer(const std::vector<Input>& inputs, Options options)
    : options_(options) {
  if (options_.restampBy && *options_.restampBy % 2 != 0)
    throw std::invalid_argument("--restamp-by " + std::to_string(*options_.restampBy) +
                                ": not an even number of seconds (an odd shift would make every "
                                "packet's sequence number wrong at 200 MHz)");
  if (options_.restampBy && options_.restamp)
    throw std::invalid_argument("--restamp and --restamp-by: give one");
  for (const Input& input : inputs) {
    Source source;
    source.input = input;
    source.file = openStreamForReading(StreamDescriptor::parse("file:" + input.recording));
    source.destination = openStreamForWriting(StreamDescriptor::parse(input.destination));
    try {
      if (!source.readAhead()) RTCP_LOG_WARN("station-sim", input.recording << ": empty recording");
    } catch (const StreamError& e) {
      throw std::runtime_error(source.where() + ": " + e.what());
    }
    sources_.push_back(std::move(source));
  }
}

RecordingReplayer::~RecordingReplayer() = default;

std::vector<RecordingReplayer::Totals> RecordingReplayer::run() {
  // The first packet of all recordings sets the time origin.
  Source* first = nullptr;
  for (Source& s : sources_)
    if (!s.ahead.empty() && (!first || s.aheadSample < first->aheadSample)) first = &s;
  std::vector<Totals> totals(sources_.size() + 1);
  if (!first) return totals;
  const RspHeader firstHeader = RspHeader::read(first->ahead.data());
  const SampleClock clock(firstHeader.clockMHz());
  const int64_t firstSample = first->aheadSample;
  const double now = Pacer::now();
  int64_t shift = 0;
  if (options_.restamp) shift = 2 * int64_t(std::ceil((now - firstHeader.timestamp) / 2));
  if (options_.restampBy) shift = *options_.restampBy;
  const bool restamped = options_.restamp || options_.restampBy;
  Pacer pacer(restamped ? double(shift) : now - clock.unixTime(firstSample));
  const int64_t stopSample =
      options_.duration >= 0
          ? firstSample + int64_t(std::llround(options_.duration * clock.sampleRate()))
          : INT64_MAX;
  RTCP_LOG_INFO("station-sim", "replaying "
                                   << sources_.size() << " recordings from "
                                   << formatUtc(clock.unixTime(firstSample))
                                   << (restamped ? ", re-stamped by " + std::to_string(shift) + " s"
                                                 : std::string()));
  auto readGroup = [&](Source& s) {
    try {
      s.next(stopSample);
    } catch (const StreamError& e) {
      throw std::runtime_error(s.where() + ": " + e.what());
    }
  };
  for (Source& s : sources_) readGroup(s);

  int64_t lastEnd = firstSample;
  for (;;) {
    Source* next = nullptr;
    for (Source& s : sources_)
      if (!s.group.empty() && s.sample < stopSample && (!next || s.sample < next->sample))
        next = &s;
    if (!next) break;
    pacer.waitUntil(clock.unixTime(next->endSample));  // once its last packet is complete
    if (shift != 0) next->restamp(shift);
    next->destination->writeEach(next->group.data(), next->packetSize, next->groupPackets);
    next->totals.packets += next->groupPackets;
    next->totals.bytes += next->group.size();
    lastEnd = std::max(lastEnd, next->endSample);
    readGroup(*next);
  }
  for (size_t i = 0; i < sources_.size(); ++i) {
    totals[i] = sources_[i].totals;
    totals.back().packets += totals[i].packets;
    totals.back().bytes += totals[i].bytes;
  }
  totals.back().timestampShift = shift;
  totals.back().seconds = double(lastEnd - firstSample) / clock.sampleRate();
  totals.back().maxLateness = pacer.maxLateness();
  return totals;
}

}  // namespace rtcp::sim
