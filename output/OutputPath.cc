#include "OutputPath.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "rtcp/Crc64.h"

namespace rtcp::ion {
namespace {

/// Time this thread spent in emit(), so that add() can count integration alone (the
/// Integrator emits finished integrations from inside add()).
thread_local StepTimes::Clock::duration tEmitting{};

}  // namespace

OutputPath::OutputPath(const ObservationSettings& settings, OutputPathOptions options)
    : observationId_(settings.observationId), options_(std::move(options)), quickLook_(settings) {
  if (options_.toStorage && settings.correlatedOutput.enabled) {
    StorageSender::Options sender;
    // At least two integrations of every subband: one block per subband and integration,
    // so 16 blocks would hold hundreds of subbands to a few blocks in flight at a time.
    sender.queueCapacity = std::max(options_.queuePerConnection, 2 * size_t(settings.nrSubbands()));
    sender.waitWhenFull = !settings.realTime;
    sender.spoolBytes = options_.spoolBytes;
    sender.spoolDirectory = options_.spoolDirectory;
    sender.retainBytes = options_.retainBytes;
    CorrelatedHeader shape;
    shape.nrStations = uint32_t(settings.nrStations());
    shape.nrChannels = uint32_t(settings.channelsPerSubband);
    sender.integrationBytes = kCorrelatedHeaderSize + shape.expectedPayloadSize();
    const int64_t integrations =  // with a last one cut short
        (settings.nrBlocks() + settings.blocksPerIntegration - 1) / settings.blocksPerIntegration;
    sender.integrationsPerConnection =
        size_t(std::max<int64_t>(0, integrations)) * size_t(settings.nrSubbands());
    if (!options_.secret)
      throw std::runtime_error(
          "no observation secret (--secret-file): storage-sink takes blocks only over "
          "connections that prove they belong to the observation");
    sender.handshake = std::make_shared<const Handshake>(*options_.secret, settings.observationId,
                                                         ConnectionPurpose::kStorage);
    sender.recycle = [this](std::unique_ptr<CorrelatedData> spent) {
      integrator_->recycle(std::move(spent));
    };
    storage_ = std::make_unique<StorageSender>(settings.observationId,
                                               StorageSender::destinations(settings), sender);
  }
  if (!options_.dumpPath.empty()) {
    dump_.open(options_.dumpPath, std::ios::binary | std::ios::trunc);
    if (!dump_) throw std::runtime_error("cannot write the dump file " + options_.dumpPath);
  }
  integrator_ = std::make_unique<Integrator>(
      settings,
      [this](std::unique_ptr<CorrelatedData> integration) { emit(std::move(integration)); });
}

OutputPath::~OutputPath() {
  storage_.reset();  // first: its threads hand integrations back to integrator_
}

void OutputPath::add(int subbandIndex, int64_t block, int nrStations, int nrChannels,
                     std::span<const std::complex<float>> visibilities,
                     std::span<const uint32_t> validSamples) {
  const auto emittingBefore = tEmitting;
  const auto start = StepTimes::Clock::now();
  integrator_->add(subbandIndex, block, nrStations, nrChannels, visibilities, validSamples);
  times_.add(kIntegrate, StepTimes::Clock::now() - start - (tEmitting - emittingBefore));
}

void OutputPath::emit(std::unique_ptr<CorrelatedData> integration) {
  const auto start = StepTimes::Clock::now();
  auto t = start;
  quickLook_.take(*integration);
  if (dump_.is_open()) {
    const std::vector<uint8_t> bytes = integration->serialise(uint64_t(observationId_));
    dump_.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!dump_) throw std::runtime_error("writing the dump file " + options_.dumpPath + " failed");
    ++dumped_;
    t = times_.lap(kDump, t);
  }
  if (storage_) {
    storage_->write(std::move(integration));
    t = times_.lap(kQueueForStorage, t);
  }
  tEmitting += t - start;
}

bool OutputPath::finish() {
  integrator_->flush();
  if (dump_.is_open()) dump_.close();
  return !storage_ || storage_->finish(options_.finishTimeoutSeconds);
}

std::vector<std::string> OutputPath::summary() const {
  std::vector<std::string> lines;
  const auto in = integrator_->statistics();
  std::ostringstream integration;
  integration << "integration: " << in.blocks << " blocks into " << in.integrations
              << " integrations (" << in.incompleteIntegrations << " incomplete), " << in.duplicates
              << " duplicate and " << in.late << " late blocks";
  lines.push_back(integration.str());
  if (storage_) {
    const auto st = storage_->statistics();
    std::ostringstream storage;
    storage << "storage: " << st.sent << " of " << st.queued << " integrations sent, " << st.dropped
            << " dropped, " << st.resent << " resent, " << st.durable << " said on disk, "
            << st.unprotected << " not kept to resend (beyond --retain-mb), " << st.connects
            << " connections, " << st.spooled << " spooled (at most " << st.spoolHighWaterBytes
            << " bytes), " << st.recycledBuffers << " serialised into recycled buffers";
    lines.push_back(storage.str());
  }
  if (!options_.dumpPath.empty())
    lines.push_back("dump: " + std::to_string(dumped_) + " integrations to " + options_.dumpPath);
  lines.push_back("output steps: " + times_.report());
  return lines;
}

std::vector<CorrelatedData> readDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the dump file " + path);
  std::vector<CorrelatedData> integrations;
  uint8_t headerBytes[kCorrelatedHeaderSize];
  while (in.read(reinterpret_cast<char*>(headerBytes), kCorrelatedHeaderSize)) {
    const CorrelatedHeader header = CorrelatedHeader::read(headerBytes);
    if (auto problem = checkCorrelatedHeader(header))
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) + ": " +
                               *problem);
    std::vector<uint8_t> payload(header.payloadSize);
    if (!in.read(reinterpret_cast<char*>(payload.data()), std::streamsize(payload.size())))
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) +
                               " is truncated");
    if (crc64(payload.data(), payload.size()) != header.payloadCrc)
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) +
                               " fails its CRC-64");
    integrations.push_back(CorrelatedData::fromPayload(header, payload.data()));
  }
  return integrations;
}

}  // namespace rtcp::ion
