#include "StationSimulator.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "Pulsar.h"
#include "rtcp/Logger.h"
#include "rtcp/Queue.h"
#include "rtcp/SampleTime.h"

namespace rtcp::sim {
namespace {

constexpr int kPoolSize = 3;  ///< chunks in flight between generators and sender

/// The start of the simulated time: startTime, or the next even second from now.
double startTime(const ObservationSettings& settings, bool startNow) {
  if (!startNow) return settings.startTime;
  return 2 * std::ceil((Pacer::now() + 0.5) / 2);
}

/// Chunks hold at most this many samples per FFT (32 MiB per signal buffer).
constexpr int kMaxFftSize = 1 << 22;

/// The chunks' geometry: margins beyond the largest geometric delay plus, for a dispersed
/// pulsar, the largest residual dispersion delay within a subband and its aliased
/// neighbours. Throws when a dispersion sweep would need chunks beyond kMaxFftSize.
ChunkGeometry chunkGeometry(const ObservationSettings& settings, const SkyModel& sky) {
  const double fs = settings.subbandWidth();
  double spread = 0;
  std::string widest;
  for (size_t k = 0; k < settings.sim.sources.size(); ++k) {
    const SimPulsar& pulsar = settings.sim.sources[k].pulsar;
    if (pulsar.period <= 0 || pulsar.dispersionMeasure == 0) continue;
    for (const SubbandSettings& subband : settings.subbands) {
      const double s = dispersionSpread(pulsar.dispersionMeasure, subband.frequency, fs);
      if (s > spread) {
        spread = s;
        widest = "Sim.Source[" + std::to_string(k) +
                 "].pulsar.dispersionMeasure = " + std::to_string(pulsar.dispersionMeasure) +
                 " sweeps " + std::to_string(2 * s) + " s across subband " +
                 std::to_string(subband.number);
      }
    }
  }
  const ChunkGeometry geometry = ChunkGeometry::forMaxDelay((sky.maxDelay() + spread) * fs);
  if (geometry.fftSize > kMaxFftSize)
    throw std::runtime_error(widest + " and its neighbours' aliases: station-sim's chunks of " +
                             std::to_string(kMaxFftSize) + " samples cannot hold it");
  return geometry;
}

}  // namespace

/// One subband's generator, quantiser and scratch signal out[pol][time].
struct StationSimulator::SubbandWork {
  SignalGenerator generator;
  Quantiser quantiser;
  AlignedBuffer<std::complex<float>> signal;
};

StationSimulator::StationSimulator(const ObservationSettings& settings, SimulatorOptions options)
    : settings_(settings),
      options_(std::move(options)),
      sky_(settings_),
      geometry_(chunkGeometry(settings_, sky_)),
      streams_(layoutStreams(settings_)) {
  if (settings_.nrStations() == 0 || settings_.nrSubbands() == 0)
    throw std::runtime_error("the parset has no stations or no subbands to simulate");
  const SampleClock clock(settings_.clockMHz);
  const double start = startTime(settings_, options_.startNow);
  const double duration =
      options_.duration >= 0 ? options_.duration : settings_.stopTime - settings_.startTime;
  if (duration <= 0) throw std::runtime_error("nothing to simulate: the duration is not positive");
  firstSample_ = clock.firstSampleAtOrAfter(start);
  const int64_t nrSamples = clock.firstSampleAtOrAfter(start + duration) - firstSample_;
  nrPackets_ = (nrSamples + kRspSamplesPerPacket - 1) / kRspSamplesPerPacket;

  forward_ = std::make_unique<Fft>(geometry_.fftSize, Fft::Direction::kForward);
  backward_ = std::make_unique<Fft>(geometry_.fftSize, Fft::Direction::kBackward);
  response_ = std::make_unique<SubbandResponse>(geometry_.fftSize);
  // Receiver noise is the antenna field's own: HBA0 and HBA1 of one station (one ID) get
  // streams of their own; LBA and HBA fields keep the station ID as their key.
  std::vector<int> stationIds;
  for (const StationSettings& station : settings_.stations)
    stationIds.push_back(station.id + (station.field == "HBA0"   ? 1 << 20
                                       : station.field == "HBA1" ? 2 << 20
                                                                 : 0));
  for (const SubbandSettings& subband : settings_.subbands) {
    const SignalGenerator::Subband band{subband.number, subband.frequency, settings_.subbandWidth(),
                                        sky_.sourceGains(settings_.beams.at(size_t(subband.beam)))};
    SignalGenerator generator(sky_, geometry_, *forward_, *backward_, *response_, band, stationIds,
                              settings_.sim.seed, firstSample_);
    const Quantiser quantiser(settings_.bitsPerSample, generator.powerPerPolarisation());
    subbands_.push_back(std::make_unique<SubbandWork>(
        SubbandWork{std::move(generator), quantiser,
                    AlignedBuffer<std::complex<float>>(2 * geometry_.nrSamples())}));
  }
  for (const StreamLayout& stream : streams_)
    builders_.emplace_back(stream, settings_.clockMHz, settings_.bitsPerSample);
}

StationSimulator::~StationSimulator() = default;

std::unique_ptr<SampleChunk> StationSimulator::makeChunk() const {
  std::vector<size_t> packetBytes;
  for (const PacketBuilder& builder : builders_) packetBytes.push_back(builder.packetSize());
  return std::make_unique<SampleChunk>(settings_.nrStations(), settings_.nrSubbands(),
                                       geometry_.nrSamples(), packetBytes);
}

void StationSimulator::parallelFor(int count, const std::function<void(int)>& body) {
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex errorMutex;
  auto work = [&] {
    for (int i = next++; i < count; i = next++) {
      try {
        body(i);
      } catch (...) {
        std::lock_guard lock(errorMutex);
        error = std::current_exception();
      }
    }
  };
  std::vector<std::thread> helpers;
  for (int t = 1; t < std::min(options_.threads, count); ++t) helpers.emplace_back(work);
  work();
  for (std::thread& helper : helpers) helper.join();
  if (error) std::rethrow_exception(error);
}

bool StationSimulator::generateNext(SampleChunk& chunk) {
  const int n = geometry_.nrSamples();
  const int64_t firstPacket = nextChunk_ * (n / kRspSamplesPerPacket);
  if (firstPacket >= nrPackets_) return false;
  chunk.index = nextChunk_++;
  chunk.firstSample = firstSample_ + chunk.index * n;
  chunk.nrPackets = int(std::min<int64_t>(n / kRspSamplesPerPacket, nrPackets_ - firstPacket));
  const ChunkDelays delays = sky_.delays(chunk.firstSample, n);
  std::vector<uint64_t> clipped(subbands_.size());
  parallelFor(int(subbands_.size()), [&](int b) {
    SubbandWork& work = *subbands_[b];
    work.generator.prepare(delays);
    for (int s = 0; s < settings_.nrStations(); ++s) {
      work.generator.station(s, delays, work.signal.data());
      clipped[b] += work.quantiser.quantise(work.signal.data(), work.signal.data() + n, n,
                                            chunk.sample(s, b, 0));
    }
  });
  chunk.clipped = 0;
  for (uint64_t c : clipped) chunk.clipped += c;
  parallelFor(int(builders_.size()), [&](int s) { builders_[s].build(chunk, s); });
  return true;
}

std::vector<std::string> StationSimulator::outputDescriptors() const {
  std::vector<std::string> outputs;
  for (const StreamLayout& stream : streams_) {
    if (!options_.recordDirectory.empty()) {
      outputs.push_back("file:" + options_.recordDirectory + "/" + stream.recordingName());
      continue;
    }
    if (stream.descriptor.empty())
      throw std::runtime_error("station " + stream.stationName + " has no RSP.ports to send to");
    if (StreamDescriptor::parse(stream.descriptor).kind == StreamDescriptor::Kind::kFile)
      throw std::runtime_error("station " + stream.stationName + " input " + stream.descriptor +
                               " is a recording: use --record DIR to write recordings, or "
                               "--replay to send recordings");
    outputs.push_back(stream.descriptor);
  }
  return outputs;
}

void StationSimulator::logSetup() const {
  const SampleClock clock(settings_.clockMHz);
  RTCP_LOG_INFO("station-sim", settings_.nrStations()
                                   << " stations x " << settings_.nrSubbands() << " subbands, "
                                   << settings_.bitsPerSample << " bit, " << sky_.nrSources()
                                   << " sources, " << streams_.size() << " streams; from "
                                   << formatUtc(clock.unixTime(firstSample_)) << " for "
                                   << nrPackets_ * kRspSamplesPerPacket / settings_.subbandWidth()
                                   << " s; chunks of " << geometry_.nrSamples() << " samples (FFT "
                                   << geometry_.fftSize << ", margin " << geometry_.margin << "), "
                                   << options_.threads << " threads");
}

SimulationSummary StationSimulator::run() {
  logSetup();
  PacketSender::Options sendOptions;
  sendOptions.paced = options_.recordDirectory.empty();
  sendOptions.lossProbability = settings_.sim.packetLossProbability;
  sendOptions.seed = settings_.sim.seed;
  sendOptions.dropLogPath = options_.dropLogPath;
  if (!options_.recordDirectory.empty()) {
    std::filesystem::create_directories(options_.recordDirectory);
    if (sendOptions.dropLogPath.empty())
      sendOptions.dropLogPath = options_.recordDirectory + "/dropped-packets.txt";
  }
  PacketSender sender(streams_, outputDescriptors(), settings_.clockMHz, sendOptions);
  const double lead = SampleClock(settings_.clockMHz).unixTime(firstSample_) - Pacer::now();
  if (sendOptions.paced && lead > 1)
    RTCP_LOG_INFO("station-sim", "waiting " << lead << " s for the start time");
  if (sendOptions.paced && lead < -1)
    RTCP_LOG_WARN("station-sim",
                  "the start time lies "
                      << -lead
                      << " s in the past: packets "
                         "go out as fast as allowed until they catch up (use --start-now)");

  Pool<SampleChunk> pool("station-sim.chunks");
  for (int i = 0; i < kPoolSize; ++i) pool.add(makeChunk());
  std::exception_ptr generatorError;
  std::thread generator([&] {
    try {
      while (auto chunk = pool.free.pop()) {
        if (!generateNext(**chunk)) break;
        pool.filled.push(std::move(*chunk));
      }
    } catch (...) {
      generatorError = std::current_exception();
    }
    pool.filled.close();
  });

  SimulationSummary summary;
  try {
    while (auto chunk = pool.filled.pop()) {
      sender.send(**chunk);
      summary.clipped += (*chunk)->clipped;
      pool.free.push(std::move(*chunk));
    }
    sender.finish();
  } catch (...) {
    pool.close();
    generator.join();
    throw;
  }
  pool.close();
  generator.join();
  if (generatorError) std::rethrow_exception(generatorError);

  summary.streams = sender.totals();
  for (const auto& stream : summary.streams) {
    summary.packets += stream.packets;
    summary.bytes += stream.bytes;
    summary.dropped += stream.dropped;
  }
  summary.seconds = nrPackets_ * kRspSamplesPerPacket / settings_.subbandWidth();
  summary.maxLateness = sender.maxLateness();
  summary.dropLogPath = sendOptions.dropLogPath;
  return summary;
}

}  // namespace rtcp::sim
