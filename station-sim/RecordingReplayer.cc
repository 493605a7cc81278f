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

/// One recording, read a packet ahead.
struct RecordingReplayer::Source {
  Input input;
  std::unique_ptr<Stream> file, destination;
  std::vector<uint8_t> packet;  ///< the next packet; empty at the end
  int64_t sample = 0;           ///< its first sample
  int64_t endSample = 0;        ///< its first sample after it
  uint64_t index = 0;           ///< packets read so far
  Totals totals;

  /// Reads the next packet; false at the end of the recording.
  bool next() {
    packet.resize(kRspHeaderSize);
    if (!file->readExact(packet.data(), kRspHeaderSize)) {
      packet.clear();
      return false;
    }
    const RspHeader h = RspHeader::read(packet.data());
    const int bits = h.bitsPerSample();
    if (bits == 0 || h.nrBeamlets == 0 || h.nrBlocks == 0 || (h.version != 3 && h.version != 2))
      throw std::runtime_error(where() + ": not an RSP packet (version " +
                               std::to_string(h.version) + ", bit mode field " +
                               std::to_string(h.sourceInfo2 & 3) + ", " +
                               std::to_string(h.nrBeamlets) + " beamlets)");
    packet.resize(rspPacketSize(bits, h.nrBeamlets, h.nrBlocks));
    if (!file->readExact(packet.data() + kRspHeaderSize, packet.size() - kRspHeaderSize))
      throw std::runtime_error(where() + ": recording ends inside the packet");
    const SampleClock clock(h.clockMHz());
    sample = clock.sampleNumber(h.stamp());
    endSample = sample + h.nrBlocks;
    ++index;
    return true;
  }
  std::string where() const { return input.recording + ": packet " + std::to_string(index); }
};

RecordingReplayer::RecordingReplayer(const std::vector<Input>& inputs, Options options)
    : options_(options) {
  for (const Input& input : inputs) {
    Source source;
    source.input = input;
    source.file = openStreamForReading(StreamDescriptor::parse("file:" + input.recording));
    source.destination = openStreamForWriting(StreamDescriptor::parse(input.destination));
    try {
      if (!source.next()) RTCP_LOG_WARN("station-sim", input.recording << ": empty recording");
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
    if (!s.packet.empty() && (!first || s.sample < first->sample)) first = &s;
  std::vector<Totals> totals(sources_.size() + 1);
  if (!first) return totals;
  const SampleClock clock(RspHeader::read(first->packet.data()).clockMHz());
  const int64_t firstSample = first->sample;
  const uint32_t firstTimestamp = RspHeader::read(first->packet.data()).timestamp;
  const double now = Pacer::now();
  int64_t shift = 0;
  if (options_.restamp) shift = 2 * int64_t(std::ceil((now - firstTimestamp) / 2));
  Pacer pacer(options_.restamp ? double(shift) : now - clock.unixTime(firstSample));
  const int64_t stopSample =
      options_.duration >= 0
          ? firstSample + int64_t(std::llround(options_.duration * clock.sampleRate()))
          : INT64_MAX;
  RTCP_LOG_INFO("station-sim", "replaying " << sources_.size() << " recordings from "
                                            << formatUtc(clock.unixTime(firstSample))
                                            << (options_.restamp ? ", re-stamped by " +
                                                                       std::to_string(shift) + " s"
                                                                 : std::string()));

  int64_t lastEnd = firstSample;
  for (;;) {
    Source* next = nullptr;
    for (Source& s : sources_)
      if (!s.packet.empty() && s.sample < stopSample && (!next || s.sample < next->sample))
        next = &s;
    if (!next) break;
    pacer.waitUntil(clock.unixTime(next->endSample));
    if (shift != 0) {
      RspHeader h = RspHeader::read(next->packet.data());
      h.timestamp = uint32_t(int64_t(h.timestamp) + shift);
      h.write(next->packet.data());
    }
    next->destination->write(next->packet.data(), next->packet.size());
    ++next->totals.packets;
    next->totals.bytes += next->packet.size();
    lastEnd = std::max(lastEnd, next->endSample);
    try {
      next->next();
    } catch (const StreamError& e) {
      throw std::runtime_error(next->where() + ": " + e.what());
    }
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
