#include "VisibilityOutput.h"

#include <sstream>
#include <stdexcept>

#include "LinkClient.h"
#include "Integrator.h"
#include "StorageSender.h"
#include "CorrelatorFunctions.h"
#include "rtcp/Crc64.h"

namespace rtcp::correlator {

LinkOutput::LinkOutput(std::shared_ptr<ion::LinkClient> link) : link_(std::move(link)) {}

void LinkOutput::write(int subbandIndex, int64_t block, const CorrelatedData& data) {
  ion::acceptVisibilities.call(*link_, subbandIndex, block, data.nrStations, data.nrChannels,
                               data.visibilities.span(), data.validSamples.span());
  ++blocks_;
}

std::string LinkOutput::summary() const {
  return std::to_string(blocks_) + " correlated blocks sent to ionproc";
}

LocalOutput::LocalOutput(const ObservationSettings& settings, bool toStorage,
                         const std::string& dumpPath)
    : observationId_(settings.observationId), dumpPath_(dumpPath) {
  if (toStorage && settings.correlatedOutput.enabled)
    storage_ = std::make_unique<ion::StorageSender>(
        settings.observationId, ion::StorageSender::destinations(settings),
        ion::StorageSender::Options{.waitWhenFull = !settings.realTime});
  if (!dumpPath.empty()) {
    dump_.open(dumpPath, std::ios::binary | std::ios::trunc);
    if (!dump_) throw std::runtime_error("cannot write the dump file " + dumpPath);
  }
  integrator_ = std::make_unique<ion::Integrator>(
      settings, [this](std::unique_ptr<CorrelatedData> integration) { emit(std::move(integration)); });
}

LocalOutput::~LocalOutput() = default;

void LocalOutput::write(int subbandIndex, int64_t block, const CorrelatedData& data) {
  integrator_->add(subbandIndex, block, data.nrStations, data.nrChannels, data.visibilities.span(),
                   data.validSamples.span());
}

void LocalOutput::emit(std::unique_ptr<CorrelatedData> integration) {
  if (dump_.is_open()) {
    const std::vector<uint8_t> bytes = integration->serialise(uint64_t(observationId_));
    dump_.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    if (!dump_) throw std::runtime_error("writing the dump file " + dumpPath_ + " failed");
    ++dumped_;
  }
  if (storage_) storage_->write(std::move(integration));
}

bool LocalOutput::finish() {
  integrator_->flush();
  if (dump_.is_open()) dump_.close();
  return !storage_ || storage_->finish(10);
}

std::string LocalOutput::summary() const {
  const auto in = integrator_->statistics();
  std::ostringstream s;
  s << in.blocks << " blocks into " << in.integrations << " integrations ("
    << in.incompleteIntegrations << " incomplete)";
  if (dump_.is_open() || dumped_) s << ", " << dumped_ << " dumped to " << dumpPath_;
  if (storage_) {
    const auto st = storage_->statistics();
    s << ", " << st.sent << " of " << st.queued << " sent to storage (" << st.dropped << " dropped)";
  }
  return s.str();
}

std::vector<CorrelatedData> readDump(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the dump file " + path);
  std::vector<CorrelatedData> integrations;
  uint8_t headerBytes[kCorrelatedHeaderSize];
  while (in.read(reinterpret_cast<char*>(headerBytes), kCorrelatedHeaderSize)) {
    const CorrelatedHeader header = CorrelatedHeader::read(headerBytes);
    if (auto problem = checkCorrelatedHeader(header))
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) + ": " + *problem);
    std::vector<uint8_t> payload(header.payloadSize);
    if (!in.read(reinterpret_cast<char*>(payload.data()), std::streamsize(payload.size())))
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) + " is truncated");
    if (crc64(payload.data(), payload.size()) != header.payloadCrc)
      throw std::runtime_error(path + ": block " + std::to_string(integrations.size()) + " fails its CRC-64");
    integrations.push_back(CorrelatedData::fromPayload(header, payload.data()));
  }
  return integrations;
}

}  // namespace rtcp::correlator
