#include "PacketSender.h"

#include <algorithm>
#include <stdexcept>

#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"

namespace rtcp::sim {
namespace {
constexpr uint64_t kLossSeed = 3;
}

PacketSender::PacketSender(std::vector<StreamLayout> streams,
                           const std::vector<std::string>& outputs, int clockMHz, Options options)
    : streams_(std::move(streams)), clock_(clockMHz), options_(std::move(options)) {
  if (outputs.size() != streams_.size())
    throw std::invalid_argument("PacketSender: one output per stream expected");
  for (size_t i = 0; i < streams_.size(); ++i) {
    outputs_.push_back(openStreamForWriting(StreamDescriptor::parse(outputs[i])));
    totals_.push_back({outputs[i]});
    lossRandom_.emplace_back(deriveSeed(
        options_.seed, {kLossSeed, uint64_t(streams_[i].stationId), uint64_t(streams_[i].port)}));
  }
  if (!options_.dropLogPath.empty()) {
    dropLog_.open(options_.dropLogPath);
    if (!dropLog_) throw StreamError(options_.dropLogPath + ": cannot create the drop log");
    dropLog_ << "# packets dropped by station-sim: station port timestamp sequence\n";
  }
}

PacketSender::~PacketSender() = default;

void PacketSender::send(const SampleChunk& chunk) {
  // One pace for all streams: the group that suits the largest packets.
  size_t perGroup = datagramsPerSegmentedSend(0);
  for (size_t s = 0; s < streams_.size(); ++s)
    perGroup = std::min(perGroup, datagramsPerSegmentedSend(chunk.packetBytes[s]));
  for (int first = 0; first < chunk.nrPackets; first += int(perGroup)) {
    const int end = std::min(chunk.nrPackets, first + int(perGroup));
    if (options_.paced)  // once the group's last packet is complete
      pacer_.waitUntil(clock_.unixTime(chunk.firstSample + int64_t(end) * kRspSamplesPerPacket));
    for (size_t s = 0; s < streams_.size(); ++s) sendGroup(chunk, int(s), first, end);
  }
}

void PacketSender::sendGroup(const SampleChunk& chunk, int stream, int first, int end) {
  const size_t size = chunk.packetBytes[stream];
  // Runs of packets not dropped, each in one writeEach.
  int runStart = first;
  auto sendRun = [&](int runEnd) {
    if (runEnd > runStart)
      outputs_[stream]->writeEach(chunk.packet(stream, runStart), size, size_t(runEnd - runStart));
    totals_[stream].packets += uint64_t(runEnd - runStart);
    totals_[stream].bytes += uint64_t(runEnd - runStart) * size;
  };
  for (int p = first; p < end; ++p)
    if (options_.lossProbability > 0 && lossRandom_[stream].uniform() < options_.lossProbability) {
      sendRun(p);
      drop(stream, chunk.packet(stream, p));
      runStart = p + 1;
    }
  sendRun(end);
}

void PacketSender::drop(int stream, const uint8_t* packet) {
  ++totals_[stream].dropped;
  if (!dropLog_.is_open()) return;
  const RspHeader h = RspHeader::read(packet);
  dropLog_ << streams_[stream].stationName << ' ' << streams_[stream].port << ' ' << h.timestamp
           << ' ' << h.blockSequenceNumber << '\n';
}

void PacketSender::finish() {
  outputs_.clear();  // closes (and flushes) every output
  if (dropLog_.is_open()) {
    dropLog_.close();
    if (dropLog_.fail()) throw StreamError(options_.dropLogPath + ": writing the drop log failed");
  }
}

}  // namespace rtcp::sim
