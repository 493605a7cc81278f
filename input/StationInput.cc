#include "StationInput.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "rtcp/DelayModel.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"

namespace rtcp::ion {
namespace {

double wallClock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::chrono::system_clock::time_point wallTimePoint(double unixTime) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(unixTime)));
}

/// Stream k carries subbands [k * perPacket, ...) of the subband list (DESIGN §2.1).
std::vector<StreamSubbands> streamLayout(int nrStreams, int nrSubbands, int perPacket) {
  std::vector<StreamSubbands> layout;
  for (int k = 0; k < nrStreams; ++k) {
    const int first = std::min(k * perPacket, nrSubbands);
    layout.push_back({first, std::min(perPacket, nrSubbands - first)});
  }
  return layout;
}

}  // namespace

struct StationInput::Station {
  int index = 0;
  std::string name;
  std::vector<StreamDescriptor> inputs;
  std::unique_ptr<CircularSampleBuffer> buffer;
  std::vector<std::unique_ptr<StreamCounters>> counters;   ///< per stream
  std::vector<std::unique_ptr<PacketReceiver>> receivers;  ///< per stream
  std::atomic<uint64_t> blocksServed{0}, samplesServed{0}, samplesFlagged{0}, blocksGone{0};
  std::atomic<int64_t> lastBlock{-1};
  std::atomic<double> lastFlaggedFraction{0};
};

StationInput::StationInput(const ObservationSettings& settings, std::vector<int> stations,
                           StationInputOptions options)
    : settings_(settings),
      options_(std::move(options)),
      stationSlot_(size_t(settings.nrStations()), -1),
      delays_(settings_, options_.delays, options_.delayLookahead) {
  if (stations.empty())
    for (int s = 0; s < settings.nrStations(); ++s) stations.push_back(s);
  const double fs = settings.subbandWidth();
  if (options_.maxDelaySeconds >= 0) {
    maxDelaySamples_ = int64_t(std::ceil(options_.maxDelaySeconds * fs)) + 1;
  } else if (settings.delayCompensation) {
    for (const StationSettings& st : settings.stations) {
      double d2 = 0;
      for (int i = 0; i < 3; ++i)
        d2 += std::pow(st.position[i] - settings.referencePhaseCenter[i], 2);
      const double tau = std::sqrt(d2) / kSpeedOfLight + std::abs(st.clockCorrection);
      maxDelaySamples_ = std::max(maxDelaySamples_, int64_t(std::ceil(tau * fs)) + 1);
    }
  }
  const int64_t capacity =
      std::max(int64_t(std::ceil(settings.secondsOfBuffer * fs)), minimumCapacity());
  const int perPacket = settings.beamletsPerPacket();
  for (int index : stations) {
    if (index < 0 || index >= settings.nrStations())
      throw std::invalid_argument("station input: no station " + std::to_string(index));
    const StationSettings& st = settings.stations[size_t(index)];
    auto s = std::make_unique<Station>();
    s->index = index;
    s->name = st.name;
    for (const std::string& input : st.inputs) s->inputs.push_back(StreamDescriptor::parse(input));
    if (int64_t(s->inputs.size()) * perPacket < settings.nrSubbands())
      RTCP_LOG_WARN("ionproc", st.name << ": " << s->inputs.size() << " input streams carry only "
                                       << s->inputs.size() * perPacket << " of the "
                                       << settings.nrSubbands()
                                       << " subbands; the rest stays flagged");
    s->buffer = std::make_unique<CircularSampleBuffer>(
        settings.nrSubbands(), settings.bitsPerSample, capacity,
        streamLayout(int(s->inputs.size()), settings.nrSubbands(), perPacket), !settings.realTime);
    for (size_t k = 0; k < s->inputs.size(); ++k) {
      s->counters.push_back(std::make_unique<StreamCounters>());
      ReceiverOptions ro;
      ro.expect = {settings.clockMHz, settings.bitsPerSample, 0, st.id};
      ro.neededBeamlets = s->buffer->streamSubbands(int(k)).count;
      ro.paced = settings.realTime;
      s->receivers.push_back(
          std::make_unique<PacketReceiver>(st.name + " " + s->inputs[k].toString(), s->inputs[k],
                                           int(k), *s->buffer, *s->counters.back(), ro));
    }
    stationSlot_[size_t(index)] = int(stations_.size());
    stations_.push_back(std::move(s));
  }
  RTCP_LOG_INFO("ionproc", "station input: "
                               << stations_.size() << " stations, buffer of "
                               << stations_.front()->buffer->capacity() << " samples per subband ("
                               << stations_.front()->buffer->capacity() / fs << " s), "
                               << (settings.realTime ? "real time" : "not real time"));
}

StationInput::~StationInput() { stop(); }

int64_t StationInput::minimumCapacity() const {
  // The blocks that may be in flight, their filter history, delay changes, a margin, and
  // in real time what arrives while a block waits out the latency margin.
  const int64_t lag = std::max(options_.releaseLag, 0);
  const int64_t latency =
      settings_.realTime ? int64_t(std::ceil(options_.maxLatency * settings_.subbandWidth())) : 0;
  return (lag + 2) * settings_.samplesPerBlock() + nrHistorySamples(settings_) +
         2 * maxDelaySamples_ + latency + 1024;
}

double StationInput::deriveClockShift() const {
  if (options_.clockShift) return *options_.clockShift;
  if (!settings_.realTime || !isReplay()) return 0;  // live input: wall clock as is
  double first = std::numeric_limits<double>::infinity();
  for (const auto& s : stations_)
    for (const StreamDescriptor& d : s->inputs) {
      try {
        first = std::min(first, PacketReceiver::firstPacketTime(d.path));
      } catch (const StreamError& e) {
        RTCP_LOG_WARN("ionproc", e.what());
      }
    }
  if (!std::isfinite(first)) first = settings_.startTime;
  return wallClock() - std::max(first, settings_.startTime);
}

bool StationInput::isReplay() const {
  for (const auto& s : stations_)
    for (const StreamDescriptor& d : s->inputs)
      if (d.kind != StreamDescriptor::Kind::kFile) return false;
  return true;
}

void StationInput::start() {
  if (options_.replayFromFirstRequest && settings_.realTime && isReplay()) {
    RTCP_LOG_INFO("ionproc",
                  "real-time replay: plays from the first block the compute ranks ask for");
    return;
  }
  std::call_once(startOnce_, [this] { startReceivers(); });
}

void StationInput::startReceivers() {
  clockShift_ = deriveClockShift();
  if (clockShift_ != 0)
    RTCP_LOG_INFO("ionproc", "replaying recordings in real time: recording time "
                                 << formatUtc(wallClock() - clockShift_) << " plays now");
  release(0);
  for (auto& s : stations_)
    for (auto& r : s->receivers) r->start(clockShift_);
  started_ = true;
}

void StationInput::stop() {
  {
    std::lock_guard lock(stopMutex_);
    stopped_ = true;
    stopCv_.notify_all();
  }
  for (auto& s : stations_) {
    s->buffer->close();
    for (auto& r : s->receivers) r->stop();
  }
}

StationInput::Station& StationInput::station(int index) const {
  if (index < 0 || index >= int(stationSlot_.size()) || stationSlot_[size_t(index)] < 0)
    throw std::invalid_argument("station input: station " + std::to_string(index) +
                                " is not served here");
  return *stations_[size_t(stationSlot_[size_t(index)])];
}

const CircularSampleBuffer& StationInput::buffer(int index) const { return *station(index).buffer; }

uint16_t StationInput::udpPort(int index, int stream) const {
  return station(index).receivers.at(size_t(stream))->localPort();
}

void StationInput::release(int64_t block) {
  int64_t previous = released_.load();
  do {
    if (block <= previous) return;
  } while (!released_.compare_exchange_weak(previous, block));
  const int64_t floor = settings_.blockStartSample(block) - nrHistorySamples(settings_) -
                        maxDelaySamples_ - kRspSamplesPerPacket;
  for (auto& s : stations_) s->buffer->setRetentionFloor(floor);
  delays_.release(block);
}

bool StationInput::waitForData(Station& s, int firstStream, int lastStream, int64_t end) {
  if (settings_.realTime) {
    const double due =
        SampleClock(settings_.clockMHz).unixTime(end) + clockShift_ + options_.maxLatency;
    std::unique_lock lock(stopMutex_);
    stopCv_.wait_until(lock, wallTimePoint(due), [&] { return stopped_.load(); });
    return !stopped_;
  }
  for (int k = firstStream; k <= lastStream; ++k) {  // none for k0 > k1
    const bool live = s.inputs[size_t(k)].kind != StreamDescriptor::Kind::kFile;
    s.buffer->waitUntilPassed(k, end, live ? options_.stallTimeout : -1,
                              std::chrono::steady_clock::time_point::max());
    if (stopped_) return false;
  }
  return true;
}

void StationInput::flagRows(StationBlock& out, int firstRow, int nrRows) const {
  const size_t rowBytes = out.samples.size() / size_t(out.header.nrSubbands);
  const size_t words = out.wordsPerSubband();
  std::memset(out.samples.data() + size_t(firstRow) * rowBytes, 0, size_t(nrRows) * rowBytes);
  std::memset(out.valid.data() + size_t(firstRow) * words, 0,
              size_t(nrRows) * words * sizeof(uint64_t));
}

std::vector<int> StationInput::stations() const {
  std::vector<int> indices;
  for (size_t i = 0; i < stationSlot_.size(); ++i)
    if (stationSlot_[i] >= 0) indices.push_back(int(i));
  return indices;
}

void StationInput::serveInto(StationBlock& out, int64_t block, int stationIndex, int firstSubband,
                             int nrSubbands) {
  if (!started_) std::call_once(startOnce_, [this] { startReceivers(); });
  Station& s = station(stationIndex);
  if (nrSubbands < 1 || firstSubband < 0 || firstSubband + nrSubbands > settings_.nrSubbands())
    throw std::invalid_argument("station input: subbands [" + std::to_string(firstSubband) + ", +" +
                                std::to_string(nrSubbands) + ") outside the " +
                                std::to_string(settings_.nrSubbands()) + " subbands");
  const int beam = settings_.subbands[size_t(firstSubband)].beam;
  for (int i = firstSubband; i < firstSubband + nrSubbands; ++i)
    if (settings_.subbands[size_t(i)].beam != beam)
      throw std::invalid_argument("station input: subbands [" + std::to_string(firstSubband) +
                                  ", +" + std::to_string(nrSubbands) +
                                  ") span beams with different delays; ask per beam");
  const auto delays = delays_.get(block);
  const size_t d = delays->index(stationIndex, beam);
  const int32_t coarse = delays->coarse[d];
  const int history = nrHistorySamples(settings_);
  const int nrSamples = history + int(settings_.samplesPerBlock());
  // Block sample h holds station sample blockStart - history + h - n_s.
  const int64_t first = settings_.blockStartSample(block) - history - coarse;

  if (out.header.nrSubbands != nrSubbands || out.header.nrSamples != nrSamples ||
      out.header.bitsPerSample != settings_.bitsPerSample)
    out = StationBlock(nrSubbands, nrSamples, settings_.bitsPerSample);
  out.header.block = block;
  out.header.station = stationIndex;
  out.header.firstSubband = firstSubband;
  out.header.nrSubbands = nrSubbands;
  out.header.nrSamples = nrSamples;
  out.header.bitsPerSample = settings_.bitsPerSample;
  out.header.coarseDelay = coarse;
  out.header.residualDelayStart = delays->residualStart[d];
  out.header.residualDelayEnd = delays->residualEnd[d];
  out.header.flaggedByIonproc = 0;

  CircularSampleBuffer& buffer = *s.buffer;
  const int lastSubband = firstSubband + nrSubbands - 1;
  // Streams carry consecutive subbands from the first on; the range's streams are k0..k1.
  int k0 = buffer.nrStreams(), k1 = -1;
  for (int i = firstSubband; i <= lastSubband; ++i) {
    const int k = buffer.streamOf(i);
    if (k >= 0) k0 = std::min(k0, k), k1 = std::max(k1, k);
  }
  if (!waitForData(s, k0, k1, first + nrSamples))
    throw std::runtime_error("station input stopped while waiting for block " +
                             std::to_string(block));
  bool gone = false;
  for (int k = k0; k <= k1; ++k) {
    const StreamSubbands& sub = buffer.streamSubbands(k);
    const int lo = std::max(firstSubband, sub.first);
    const int hi = std::min(lastSubband + 1, sub.first + sub.count);
    if (lo < hi) gone |= buffer.read(k, first, nrSamples, lo, hi - lo, out, lo - firstSubband).gone;
  }
  if (gone) {  // the ranks fell behind: its samples have been overwritten
    flagRows(out, 0, nrSubbands);
    out.header.flaggedByIonproc = 1;
    ++s.blocksGone;
    RTCP_LOG_WARN("ionproc", s.name << ": block " << block
                                    << " left the buffer before it was asked for; served flagged");
  }
  for (int i = firstSubband; i <= lastSubband; ++i)  // subbands no stream carries
    if (buffer.streamOf(i) < 0) flagRows(out, i - firstSubband, 1);
  int64_t flagged = 0;
  for (size_t w = 0; w < out.valid.size(); ++w) flagged += std::popcount(out.valid[w]);
  flagged = int64_t(nrSubbands) * nrSamples - flagged;
  ++s.blocksServed;
  s.samplesServed += uint64_t(nrSubbands) * uint64_t(nrSamples);
  s.samplesFlagged += uint64_t(flagged);
  s.lastBlock = std::max(s.lastBlock.load(), block);
  s.lastFlaggedFraction = double(flagged) / (double(nrSubbands) * nrSamples);
  if (options_.releaseLag >= 0 && block - options_.releaseLag > released_.load())
    release(block - options_.releaseLag);
}

std::vector<StationStatistics> StationInput::statistics() const {
  std::vector<StationStatistics> result;
  for (const auto& s : stations_) {
    StationStatistics st;
    st.station = s->name;
    for (const auto& c : s->counters) {
      st.packetsReceived += c->received;
      st.packetsAccepted += c->accepted;
      st.late += c->late;
      st.duplicated += c->duplicated;
      for (int r = 0; r < kNrRspRejects; ++r) st.rejected[size_t(r)] += c->rejected[size_t(r)];
    }
    st.blocksServed = s->blocksServed;
    st.samplesServed = s->samplesServed;
    st.samplesFlagged = s->samplesFlagged;
    st.blocksGone = s->blocksGone;
    st.lastBlock = s->lastBlock;
    st.lastBlockFlaggedFraction = s->lastFlaggedFraction;
    result.push_back(st);
  }
  return result;
}

}  // namespace rtcp::ion
