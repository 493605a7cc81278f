#include "OutputPath.h"

#include <algorithm>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "rtcp/BeamFormedSendPool.h"
#include "rtcp/IntegrationSendPool.h"

namespace rtcp::ion {
namespace {

/// Time this thread spent in emit(), so that add() can count integration alone (the
/// Integrator emits finished integrations from inside add()).
thread_local StepTimes::Clock::duration tEmitting{};

}  // namespace

OutputPath::OutputPath(const ObservationSettings& settings, OutputPathOptions options)
    : settings_(settings),
      observationId_(settings.observationId),
      options_(std::move(options)),
      quickLook_(settings) {
  if (options_.toStorage && (settings.correlatedOutput.enabled || settings.beamFormed.enabled())) {
    StorageSender::Options sender;
    // Each connection's queue of integrations (at least two of each subband it carries)
    // and their pool of slots: IntegrationSendPool.h, which observe's memory plan counts.
    // Without correlated output no integration is sent: no pool for them.
    const IntegrationSendPool integrations =
        integrationSendPool(settings, options_.queuePerConnection, options_.retainBytes);
    sender.queueCapacity = options_.queuePerConnection;
    sender.integrationConnections = integrations.connections;
    sender.waitWhenFull = !settings.realTime;
    sender.spoolBytes = options_.spoolBytes;
    sender.spoolDirectory = options_.spoolDirectory;
    sender.retainBytes = options_.retainBytes;
    sender.integrationBytes = integrations.integrationBytes;
    if (!options_.secret)
      throw std::runtime_error(
          "no observation secret (--secret-file): storage-sink takes blocks only over "
          "connections that prove they belong to the observation");
    sender.handshake = std::make_shared<const Handshake>(*options_.secret, settings.observationId,
                                                         ConnectionPurpose::kStorage);
    sender.recycle = [this](std::unique_ptr<CorrelatedData> spent) {
      integrator_->recycle(std::move(spent));
    };
    // Two blocks' worth of every TAB and subband may wait (the ranks send a block's
    // subbands in any order and at once), and what the sinks take a sync to confirm is
    // kept: BeamFormedSendPool.h, which observe's memory plan counts.
    const BeamFormedSendPool pool =
        beamFormedSendPool(settings, options_.queuePerConnection, options_.retainBytes);
    sender.beamFormedQueueCapacity = pool.queueBlocks;
    sender.beamFormedKeptCapacity = pool.keptBlocks;
    sender.beamFormedBytes = pool.blockBytes;
    storage_ = std::make_unique<StorageSender>(
        settings.observationId,
        settings.correlatedOutput.enabled ? StorageSender::destinations(settings)
                                          : std::map<int, StorageDestination>{},
        sender,
        settings.beamFormed.enabled() ? StorageSender::beamFormedDestinations(settings)
                                      : std::vector<StorageDestination>{});
  }
  if (settings.flagging.postCorrelation || settings.flagging.detectBrokenStations)
    postFlagger_ = std::make_unique<PostCorrelationFlagger>(
        settings.flagging,
        [this](std::unique_ptr<CorrelatedData> integration) { deliver(std::move(integration)); });
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
  if (!postFlagger_) return deliver(std::move(integration));
  // The flagger delivers (afterFlagging, storage) from inside add(): that time is theirs.
  const auto start = StepTimes::Clock::now();
  const auto deliveringBefore = tEmitting;
  postFlagger_->add(std::move(integration));
  times_.add(kFlag, StepTimes::Clock::now() - start - (tEmitting - deliveringBefore));
  tEmitting = deliveringBefore + (StepTimes::Clock::now() - start);
}

void OutputPath::deliver(std::unique_ptr<CorrelatedData> integration) {
  const auto start = StepTimes::Clock::now();
  auto t = start;
  quickLook_.take(*integration);
  if (options_.afterFlagging) options_.afterFlagging(*integration);
  if (storage_ && settings_.correlatedOutput.enabled) {
    storage_->write(std::move(integration));
    t = times_.lap(kQueueForStorage, t);
  }
  tEmitting += t - start;
}

void OutputPath::addBeamFormed(int subbandIndex, int64_t block, int tab,
                               std::span<const float> samples,
                               std::span<const float> validFraction) {
  const BeamFormedSettings& bf = settings_.beamFormed;
  if (subbandIndex < 0 || subbandIndex >= settings_.nrSubbands() || block < 0 ||
      block >= settings_.nrBlocks())
    throw std::invalid_argument("beam-formed data of subband index " +
                                std::to_string(subbandIndex) + " block " + std::to_string(block) +
                                ": not the observation's");
  const int sap = settings_.subbands[size_t(subbandIndex)].beam;
  if (size_t(sap) >= bf.saps.size() || tab < 0 || size_t(tab) >= bf.saps[size_t(sap)].tabs.size())
    throw std::invalid_argument("beam-formed data of TAB " + std::to_string(tab) + " of SAP " +
                                std::to_string(sap) + ": the parset has no such TAB");
  const StokesSettings& st = bf.stokes(bf.saps[size_t(sap)].tabs[size_t(tab)]);
  BeamFormedHeader header;
  header.observationId = uint64_t(observationId_);
  header.sap = uint16_t(sap);
  header.tab = uint16_t(tab);
  header.subband = uint32_t(subbandIndex);
  header.stokes = uint8_t(st.kind);
  header.nrChannels = uint16_t(st.nrChannels);
  header.nrSamples = uint32_t(st.outputSamplesPerBlock(settings_.samplesPerBlock()));
  header.block = uint64_t(block);
  const size_t cells = size_t(header.nrSamples) * size_t(header.nrChannels);
  if (samples.size() != size_t(st.nrComponents()) * cells || validFraction.size() != cells)
    throw std::invalid_argument("beam-formed data of SAP " + std::to_string(sap) + " TAB " +
                                std::to_string(tab) + ": " + std::to_string(samples.size()) +
                                " samples and " + std::to_string(validFraction.size()) +
                                " valid fractions, not the parset's " + stokesName(st.kind) +
                                " x " + std::to_string(header.nrSamples) + " samples x " +
                                std::to_string(header.nrChannels) + " channels");
  ++beamFormedReceived_;
  if (!storage_) {
    ++beamFormedNotStored_;
    return;
  }
  std::vector<int> files;
  for (int component = 0; component < st.nrComponents(); ++component)
    files.push_back(bf.fileOf(sap, tab, component, subbandIndex));
  const auto start = StepTimes::Clock::now();
  storage_->writeBeamFormed(files, header, samples, validFraction);
  times_.lap(kQueueBeamFormed, start);
}

bool OutputPath::finish() {
  integrator_->flush();
  if (postFlagger_) postFlagger_->flush();
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
  if (beamFormedReceived_ > 0) {
    std::ostringstream beamFormed;
    beamFormed << "beam-formed: " << beamFormedReceived_ << " TAB-subband-blocks received";
    if (storage_) {
      const auto st = storage_->statistics();
      const StorageSender::Counters& bf = st.beamFormed;
      beamFormed << ", " << bf.queued << " blocks queued for storage, " << bf.sent << " sent, "
                 << bf.dropped << " dropped, " << bf.resent << " resent, " << bf.durable
                 << " said on disk, " << bf.unprotected
                 << " not kept to resend (beyond --retain-mb or the pool's share), " << bf.spooled
                 << " spooled; a pool of " << st.beamFormedPoolSlots << " blocks, "
                 << st.beamFormedPoolOverflowed << " serialised beyond it (heap)";
    } else {
      beamFormed << ", " << beamFormedNotStored_ << " not stored (no storage output)";
    }
    lines.push_back(beamFormed.str());
  }
  if (postFlagger_)
    for (std::string& line : postFlaggingReport()) lines.push_back(std::move(line));
  lines.push_back("output steps: " + times_.report());
  return lines;
}

std::vector<std::string> OutputPath::postFlaggingReport() const {
  std::vector<std::string> lines;
  const auto f = postFlagger_->statistics();
  auto name = [&](size_t s) {
    return s < settings_.stations.size() ? settings_.stations[s].name
                                         : "station " + std::to_string(s);
  };
  auto percent = [](uint64_t part, uint64_t whole) {
    std::ostringstream text;
    text << std::fixed << std::setprecision(2)
         << (whole ? 100.0 * double(part) / double(whole) : 0.0) << " %";
    return text.str();
  };
  if (!postFlagger_->strategyFile().empty()) {
    std::ostringstream flags;
    flags << "post-correlation flagging (AOFlagger, " << postFlagger_->strategyFile()
          << "): " << f.flagged << " of " << f.visibilities << " cross-correlation visibilities ("
          << percent(f.flagged, f.visibilities) << ") in " << f.integrations << " integrations, "
          << f.windows << " baseline windows, " << f.seconds << " s";
    lines.push_back(flags.str());
    std::ostringstream stations;
    stations << "post-correlation flagging per station, of its cross-correlation visibilities:";
    for (size_t s = 0; s < f.stationVisibilities.size(); ++s)
      stations << (s ? ", " : " ") << name(s) << " "
               << percent(f.stationFlagged[s], f.stationVisibilities[s]) << " ("
               << f.stationFlagged[s] << " of " << f.stationVisibilities[s] << ")";
    lines.push_back(stations.str());
  }
  std::ostringstream broken;
  for (size_t s = 0; s < f.incoherent.size(); ++s)
    if (f.incoherent[s] > 0)
      broken << (broken.tellp() > 0 ? "; " : "") << name(s) << " in " << f.incoherent[s] << " of "
             << f.integrations << " subband-integrations";
  lines.push_back(
      "post-correlation broken stations (no sky in their cross-correlations), "
      "flagged whole: " +
      (broken.tellp() > 0 ? broken.str() : std::string("none")));
  return lines;
}

}  // namespace rtcp::ion
