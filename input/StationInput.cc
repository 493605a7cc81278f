#include "StationInput.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>

#include "rtcp/DelayModel.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StationBufferSize.h"
#include "rtcp/WallClock.h"

namespace rtcp::ion {
namespace {

std::chrono::system_clock::time_point wallTimePoint(double unixTime) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(unixTime)));
}

/// Where a station's subbands lie in its buffer. The buffer holds, per stream, rows for
/// the beamlets 0 .. (highest the observation uses) of that stream's packets, streams one
/// after the other; subband i is row rowOf[i] of stream streamOf[i] (-1: no stream).
struct BeamletRows {
  std::vector<StreamSubbands> streams;  ///< [stream]: first row, rows (= beamlets stored)
  std::vector<int> streamOf, rowOf;     ///< [subband index]
  int nrRows = 0;
};

BeamletRows beamletRows(const ObservationSettings& settings, const StationSettings& station,
                        int nrStreams) {
  BeamletRows rows;
  const int n = settings.nrSubbands(), perPacket = settings.beamletsPerPacket();
  std::vector<BeamletSlot> slots = station.beamlets;
  if (int(slots.size()) != n)  // no map: in order across the streams (DESIGN §2.1)
    for (int i = int(slots.size()); i < n; ++i) slots.push_back({i / perPacket, i % perPacket});
  std::vector<int> needed(size_t(nrStreams), 0);
  for (const BeamletSlot& slot : slots)
    if (slot.stream >= 0 && slot.stream < nrStreams)
      needed[size_t(slot.stream)] = std::max(needed[size_t(slot.stream)], slot.beamlet + 1);
  for (int k = 0; k < nrStreams; ++k) {
    rows.streams.push_back({rows.nrRows, needed[size_t(k)]});
    rows.nrRows += needed[size_t(k)];
  }
  for (const BeamletSlot& slot : slots) {
    const bool carried = slot.stream >= 0 && slot.stream < nrStreams;
    rows.streamOf.push_back(carried ? slot.stream : -1);
    rows.rowOf.push_back(carried ? rows.streams[size_t(slot.stream)].first + slot.beamlet : -1);
  }
  return rows;
}

}  // namespace

struct StationInput::Station {
  int index = 0;
  std::string name;
  std::vector<StreamDescriptor> inputs;
  BeamletRows rows;        ///< where its subbands lie in the buffer
  size_t ringOffset = 0;   ///< of its buffer in the shared ring's payload
  int firstRecording = 0;  ///< InputRecorder stream of its input 0
  std::unique_ptr<CircularSampleBuffer> buffer;
  std::vector<std::unique_ptr<StreamCounters>> counters;   ///< per stream
  std::vector<std::unique_ptr<PacketReceiver>> receivers;  ///< per stream
  std::atomic<uint64_t> blocksServed{0}, samplesServed{0}, samplesFlagged{0}, blocksGone{0};
  std::atomic<int64_t> lastBlock{-1};
  std::atomic<double> lastFlaggedFraction{0};
  /// The view across subbands: per recent block, the subbands it flags ([subband]), and
  /// the valid samples and subband-blocks it flagged.
  std::mutex levelMutex;
  std::map<int64_t, std::vector<uint8_t>> levelFlags;
  std::atomic<uint64_t> samplesLevelFlagged{0}, subbandBlocksLevelFlagged{0};
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
  maxDelaySamples_ = options_.maxDelaySeconds >= 0
                         ? int64_t(std::ceil(options_.maxDelaySeconds * fs)) + 1
                         : maxDelaySamplesOf(settings);
  // The one size observe's memory plan counts too (StationBufferSize.h).
  int64_t capacity =
      stationBufferCapacity(settings, maxDelaySamples_, options_.releaseLag, maxLatency());
  RingPlacement placement;
  const bool shared = options_.sharedRing && planSharedRing(capacity, placement);
  for (int index : stations) {
    if (index < 0 || index >= settings.nrStations())
      throw std::invalid_argument("station input: no station " + std::to_string(index));
    const StationSettings& st = settings.stations[size_t(index)];
    auto s = std::make_unique<Station>();
    s->index = index;
    s->name = st.name;
    for (const std::string& input : st.inputs) s->inputs.push_back(StreamDescriptor::parse(input));
    s->rows = beamletRows(settings, st, int(s->inputs.size()));
    stations_.push_back(std::move(s));
  }
  if (shared) {  // one segment, each station's buffer 2 MB aligned in it
    size_t bytes = 0;
    for (auto& s : stations_) {
      s->ringOffset = bytes;
      bytes += SharedMemory::roundUpToPages(CircularSampleBuffer::bytesFor(
          std::max(s->rows.nrRows, 1), settings.bitsPerSample, capacity, placement.mirror));
    }
    ring_ = SharedMemory::create("rtcp-ring", bytes, false);  // populated behind the start-up
  }
  if (options_.record) {
    std::vector<std::string> names;
    for (auto& s : stations_)
      for (size_t k = 0; k < s->inputs.size(); ++k)
        names.push_back(recordingFileName(s->name, int(k)));
    recorder_ = std::make_unique<InputRecorder>(*options_.record, names);
  }
  int recordStream = 0;
  for (auto& s : stations_) {
    const int index = s->index;
    const StationSettings& st = settings.stations[size_t(index)];
    const auto carried = std::count_if(s->rows.streamOf.begin(), s->rows.streamOf.end(),
                                       [](int k) { return k >= 0; });
    if (carried < settings.nrSubbands())
      RTCP_LOG_WARN("ionproc", st.name << ": its " << s->inputs.size()
                                       << " input streams carry only " << carried << " of the "
                                       << settings.nrSubbands()
                                       << " subbands; the rest stays flagged");
    s->firstRecording = recordStream;
    RingPlacement place = placement;
    place.memory = shared ? ring_.payload() + s->ringOffset : nullptr;
    s->buffer = std::make_unique<CircularSampleBuffer>(std::max(s->rows.nrRows, 1),
                                                       settings.bitsPerSample, capacity,
                                                       s->rows.streams, !settings.realTime, place);
    for (size_t k = 0; k < s->inputs.size(); ++k) {
      s->counters.push_back(std::make_unique<StreamCounters>());
      ReceiverOptions ro;
      ro.expect = {settings.clockMHz, settings.bitsPerSample, 0, st.id};
      ro.neededBeamlets = s->buffer->streamSubbands(int(k)).count;
      ro.paced = settings.realTime;
      // Margins of a whole buffer: a station may start sending before the start (its
      // early samples are history) and go on after the stop. A beam former's lead-in
      // (firstProcessedBlock) is served before the start.
      const int64_t margin = s->buffer->capacity() + maxDelaySamples_ + nrHistorySamples(settings);
      ro.firstPlausible = settings.blockStartSample(firstProcessedBlock(settings)) - margin;
      ro.endPlausible = settings.blockStartSample(settings.nrBlocks()) + margin;
      ro.windowStart = settings.startSample();
      ro.windowEnd = SampleClock(settings.clockMHz).firstSampleAtOrAfter(settings.stopTime);
      ro.maxAheadOfClock = settings.realTime ? kMaxAheadOfClock : -1;
      ro.recorder = recorder_.get();
      ro.recordStream = recordStream++;
      s->receivers.push_back(
          std::make_unique<PacketReceiver>(st.name + " " + s->inputs[k].toString(), s->inputs[k],
                                           int(k), *s->buffer, *s->counters.back(), ro));
    }
    stationSlot_[size_t(index)] = int(&s - stations_.data());
  }
  RTCP_LOG_INFO("ionproc", "station input: "
                               << stations_.size() << " stations, buffer of "
                               << stations_.front()->buffer->capacity() << " samples per subband ("
                               << stations_.front()->buffer->capacity() / fs << " s), "
                               << (settings.realTime ? "real time" : "not real time")
                               << (shared ? ", lent in place from shared memory " : "")
                               << (shared ? ring_.name().name : ""));
  // Faulting the buffers in may take seconds per GB (huge pages the kernel must first
  // compact): done behind the rest of the start-up; the receivers start after it.
  populateThread_ = std::thread([this] { populateBuffers(); });
}

StationInput::~StationInput() {
  stop();
  if (populateThread_.joinable()) populateThread_.join();
}

void StationInput::populateBuffers() {
  const auto start = std::chrono::steady_clock::now();
  double bytes = 0;
  if (ring_.payload()) {
    ring_.populate();
    bytes = double(ring_.payloadBytes());
  }
  for (auto& s : stations_) {
    if (stopped_) break;
    s->buffer->populate();  // nothing for a buffer in the shared ring
    if (!ring_.payload()) bytes += double(s->buffer->bytes());
  }
  {
    std::lock_guard lock(stopMutex_);
    populated_ = true;
  }
  stopCv_.notify_all();
  RTCP_LOG_INFO(
      "ionproc",
      "station input: "
          << bytes / 1e9 << " GB of buffers faulted in in "
          << std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()
          << " s");
}

bool StationInput::waitUntilPopulated() {
  std::unique_lock lock(stopMutex_);
  stopCv_.wait(lock, [&] { return populated_ || stopped_; });
  return !stopped_;
}

bool StationInput::planSharedRing(int64_t& capacity, RingPlacement& placement) const {
  const int64_t block = settings_.samplesPerBlock();
  const int64_t unit = std::lcm(block, int64_t(64));  // slots come in words of 64
  // A block read starts at blockStart - history - coarse delay, |coarse| <= reach.
  const int64_t reach = maxDelaySamples_ + kRspSamplesPerPacket;
  const int64_t history = nrHistorySamples(settings_);
  const int64_t mirror = (history + 2 * reach + 64 + 63) / 64 * 64;
  // A rank holds a lent block until it asks for the one its block sets in flight (up to
  // 4) later: 2 blocks more than the buffer's minimum, which counts 2 in flight.
  const int64_t wanted = (capacity + 2 * block + unit - 1) / unit * unit;
  if (unit > 8 * block || mirror > wanted) {
    RTCP_LOG_WARN("ionproc", "station input: blocks of " << block
                                                         << " samples cannot be lent in place "
                                                            "from a ring; they are copied");
    return false;
  }
  capacity = wanted;
  // Block b's read then starts at slot (b * block + reach - coarse) mod capacity: a whole
  // block and its history from the start of a block's slots, past the end by at most
  // the mirror.
  const int64_t shift = (history + reach - settings_.startSample()) % capacity;
  placement.shift = shift < 0 ? shift + capacity : shift;
  placement.mirror = mirror;
  return true;
}

const SharedMemoryName* StationInput::sampleRing() const {
  return ring_.payload() ? &ring_.name() : nullptr;
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
  // Live packets or a replay's clock start only once the buffers take them at full speed.
  if (!waitUntilPopulated()) return;
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
  if (recorder_) recorder_->finish();  // every receiver has stopped appending
}

std::vector<RecordingCounts> StationInput::recordings() const {
  std::vector<RecordingCounts> result;
  for (int k = 0; recorder_ && k < recorder_->nrStreams(); ++k)
    result.push_back(recorder_->counts(k));
  return result;
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
    const double due = SampleClock(settings_.clockMHz).unixTime(end) + clockShift_ + maxLatency();
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

bool StationInput::waitUntilServable(int64_t end) {
  for (auto& s : stations_)
    if (!waitForData(*s, 0, int(s->inputs.size()) - 1, end)) return false;
  return !stopped_;
}

void StationInput::flagRows(const Station& s, StationBlock& out, int firstRow, int nrRows) const {
  const size_t words = out.wordsPerSubband();
  std::memset(out.valid.data() + size_t(firstRow) * words, 0,
              size_t(nrRows) * words * sizeof(uint64_t));
  if (out.header.rowsInRing) {  // any samples: none is valid
    for (int j = firstRow; j < firstRow + nrRows; ++j) out.rowOffsets[size_t(j)] = s.ringOffset;
    return;
  }
  const size_t rowBytes = out.samples.size() / size_t(out.header.nrSubbands);
  std::memset(out.samples.data() + size_t(firstRow) * rowBytes, 0, size_t(nrRows) * rowBytes);
}

std::vector<int> StationInput::stations() const {
  std::vector<int> indices;
  for (size_t i = 0; i < stationSlot_.size(); ++i)
    if (stationSlot_[i] >= 0) indices.push_back(int(i));
  return indices;
}

void StationInput::serveInto(StationBlock& out, int64_t block, int stationIndex, int firstSubband,
                             int nrSubbands) {
  fill(out, block, stationIndex, firstSubband, nrSubbands, nullptr);
}

void StationInput::lendInto(StationBlock& out, int64_t block, int stationIndex, int firstSubband,
                            int nrSubbands, uint64_t lease) {
  if (!ring_.payload()) throw std::logic_error("station input: no shared ring to lend from");
  endLease(lease);
  std::vector<Pin> pins;
  try {
    fill(out, block, stationIndex, firstSubband, nrSubbands, &pins);
  } catch (...) {
    for (const Pin& pin : pins) pin.station->buffer->unpin(pin.stream, pin.firstSample);
    throw;
  }
  std::lock_guard lock(leaseMutex_);
  leases_[lease] = std::move(pins);
}

void StationInput::endLease(uint64_t lease) {
  std::vector<Pin> pins;
  {
    std::lock_guard lock(leaseMutex_);
    const auto it = leases_.find(lease);
    if (it == leases_.end()) return;
    pins = std::move(it->second);
    leases_.erase(it);
  }
  for (const Pin& pin : pins) pin.station->buffer->unpin(pin.stream, pin.firstSample);
}

void StationInput::fill(StationBlock& out, int64_t block, int stationIndex, int firstSubband,
                        int nrSubbands, std::vector<Pin>* pins) {
  if (!started_) std::call_once(startOnce_, [this] { startReceivers(); });
  Station& s = station(stationIndex);
  if (nrSubbands < 1 || firstSubband < 0 || firstSubband + nrSubbands > settings_.nrSubbands())
    throw std::invalid_argument("station input: subbands [" + std::to_string(firstSubband) + ", +" +
                                std::to_string(nrSubbands) + ") outside the " +
                                std::to_string(settings_.nrSubbands()) + " subbands");
  const auto delays = delays_.get(block);
  const int history = nrHistorySamples(settings_);
  const int nrSamples = history + int(settings_.samplesPerBlock());

  if (bool(pins) != bool(out.header.rowsInRing))  // rows copied into a row table, or lent
    throw std::logic_error(
        "station input: rows lent into a block with rows, or copied into one "
        "without");
  if (out.header.nrSubbands != nrSubbands || out.header.nrSamples != nrSamples ||
      out.header.bitsPerSample != settings_.bitsPerSample) {
    if (!out.samples.owned() || pins)  // a shared-memory slot cannot grow
      throw std::logic_error("station input: a borrowed block of the wrong shape");
    out = StationBlock(nrSubbands, nrSamples, settings_.bitsPerSample);
  }
  out.header.block = block;
  out.header.station = stationIndex;
  out.header.firstSubband = firstSubband;
  out.header.nrSubbands = nrSubbands;
  out.header.nrSamples = nrSamples;
  out.header.bitsPerSample = settings_.bitsPerSample;
  out.header.flaggedByIonproc = 0;
  for (int i = firstSubband; i < firstSubband + nrSubbands; ++i) {  // toward the subband's beam
    const size_t d = delays->index(stationIndex, settings_.subbands[size_t(i)].beam);
    out.delays[size_t(i - firstSubband)] = {delays->coarse[d], 0, delays->residualStart[d],
                                            delays->residualEnd[d]};
  }

  bool gone = false;
  // Runs of subbands with one stream, one coarse delay and consecutive rows: one read each.
  for (int i = firstSubband; i < firstSubband + nrSubbands;) {
    const int k = s.rows.streamOf[size_t(i)];
    if (k < 0) {  // no stream carries it
      flagRows(s, out, i - firstSubband, 1);
      ++i;
      continue;
    }
    const int32_t coarse = out.delays[size_t(i - firstSubband)].coarse;
    int n = 1;
    while (i + n < firstSubband + nrSubbands && s.rows.streamOf[size_t(i + n)] == k &&
           s.rows.rowOf[size_t(i + n)] == s.rows.rowOf[size_t(i)] + n &&
           out.delays[size_t(i + n - firstSubband)].coarse == coarse)
      ++n;
    // Block sample h holds station sample blockStart - history + h - n_s.
    const int64_t first = settings_.blockStartSample(block) - history - coarse;
    if (!waitForData(s, k, k, first + nrSamples))
      throw std::runtime_error("station input stopped while waiting for block " +
                               std::to_string(block));
    const int row = s.rows.rowOf[size_t(i)], outRow = i - firstSubband;
    if (pins) {
      const ReadResult lent = s.buffer->lend(k, first, nrSamples, row, n, out, outRow);
      if (!lent.gone) pins->push_back({&s, k, first});
      for (int j = outRow; j < outRow + n; ++j) out.rowOffsets[size_t(j)] += s.ringOffset;
      gone |= lent.gone;
    } else {
      gone |= s.buffer->read(k, first, nrSamples, row, n, out, outRow).gone;
    }
    i += n;
  }
  if (gone) {  // the ranks fell behind: its samples have been overwritten
    flagRows(s, out, 0, nrSubbands);
    out.header.flaggedByIonproc = 1;
    ++s.blocksGone;
    RTCP_LOG_WARN("ionproc", s.name << ": block " << block
                                    << " left the buffer before it was asked for; served flagged");
  }
  // Whole subbands far above the bandpass: flagged as lost data are, counted apart.
  const int64_t levelFlagged =
      settings_.flagging.subbandLevel.on && !gone ? flagBrightSubbands(s, out, *delays) : 0;
  int64_t flagged = 0;
  for (size_t w = 0; w < out.valid.size(); ++w) flagged += std::popcount(out.valid[w]);
  flagged = int64_t(nrSubbands) * nrSamples - flagged - levelFlagged;
  ++s.blocksServed;
  s.samplesServed += uint64_t(nrSubbands) * uint64_t(nrSamples);
  s.samplesFlagged += uint64_t(flagged);
  s.lastBlock = std::max(s.lastBlock.load(), block);
  s.lastFlaggedFraction = double(flagged) / (double(nrSubbands) * nrSamples);
  if (options_.releaseLag >= 0 && block - options_.releaseLag > released_.load())
    release(block - options_.releaseLag);
}

std::vector<uint8_t> StationInput::subbandLevelFlags(Station& s, int64_t block,
                                                     const BlockDelays& delays) {
  std::lock_guard lock(s.levelMutex);
  if (const auto it = s.levelFlags.find(block); it != s.levelFlags.end()) return it->second;
  const int n = settings_.nrSubbands();
  const int64_t count = settings_.samplesPerBlock();
  std::vector<double> frequencies(static_cast<size_t>(n)), powers(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const SubbandSettings& subband = settings_.subbands[size_t(i)];
    frequencies[size_t(i)] = subband.frequency;
    const int k = s.rows.streamOf[size_t(i)];
    if (k < 0) continue;
    // The block's samples of the subband, without the filter's history, as served.
    const int64_t first =
        settings_.blockStartSample(block) - delays.coarse[delays.index(s.index, subband.beam)];
    if (!waitForData(s, k, k, first + count)) return std::vector<uint8_t>(size_t(n), 0);
    const RowPower p =
        s.buffer->power(k, s.rows.rowOf[size_t(i)], first, count, levelWordStride(count));
    if (p.samples > 0) powers[size_t(i)] = p.sum / double(p.samples);
  }
  std::vector<uint8_t> flags =
      judgeSubbandLevels(frequencies, powers, settings_.flagging.subbandLevel).flagged;
  s.levelFlags.emplace(block, flags);
  while (s.levelFlags.size() > 16) s.levelFlags.erase(s.levelFlags.begin());
  return flags;
}

int64_t StationInput::flagBrightSubbands(Station& s, StationBlock& out, const BlockDelays& delays) {
  const std::vector<uint8_t> flags = subbandLevelFlags(s, out.header.block, delays);
  const size_t words = out.wordsPerSubband();
  int64_t removed = 0;
  for (int j = 0; j < out.header.nrSubbands; ++j) {
    if (!flags[size_t(out.header.firstSubband + j)]) continue;
    for (size_t w = 0; w < words; ++w) removed += std::popcount(out.valid[size_t(j) * words + w]);
    flagRows(s, out, j, 1);
    ++s.subbandBlocksLevelFlagged;
  }
  s.samplesLevelFlagged += uint64_t(removed);
  return removed;
}

std::vector<StationStatistics> StationInput::statistics() const {
  std::vector<StationStatistics> result;
  for (const auto& s : stations_) {
    StationStatistics st;
    st.station = s->name;
    for (const auto& c : s->counters) {
      st.packetsReceived += c->received;
      st.packetsAccepted += c->accepted;
      st.acceptedPerStream.push_back(c->accepted);
      st.acceptedInWindowPerStream.push_back(c->accepted - c->acceptedBeforeStart -
                                             c->acceptedAfterStop);
      st.acceptedBeforeStart += c->acceptedBeforeStart;
      st.acceptedAfterStop += c->acceptedAfterStop;
      st.late += c->late;
      st.duplicated += c->duplicated;
      for (int r = 0; r < kNrRspRejects; ++r) st.rejected[size_t(r)] += c->rejected[size_t(r)];
    }
    st.blocksServed = s->blocksServed;
    st.samplesServed = s->samplesServed;
    st.samplesFlagged = s->samplesFlagged;
    st.samplesLevelFlagged = s->samplesLevelFlagged;
    st.subbandBlocksLevelFlagged = s->subbandBlocksLevelFlagged;
    st.blocksGone = s->blocksGone;
    st.lastBlock = s->lastBlock;
    st.lastBlockFlaggedFraction = s->lastFlaggedFraction;
    for (size_t k = 0; recorder_ && k < s->inputs.size(); ++k) {
      const RecordingCounts c = recorder_->counts(s->firstRecording + int(k));
      st.packetsRecorded += c.packets;
      st.packetsNotRecorded += c.notRecorded();
    }
    result.push_back(st);
  }
  return result;
}

}  // namespace rtcp::ion

namespace rtcp::ion {

void BlockSource::lendInto(StationBlock&, int64_t, int, int, int, uint64_t) {
  throw std::logic_error("this block source lends nothing in place");
}

}  // namespace rtcp::ion
