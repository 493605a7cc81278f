#include "BlockValidator.h"

#include <cstdio>

#include "OutputLayout.h"
#include "rtcp/Baselines.h"

namespace rtcp::storage {

const char* toString(BlockReject reason) {
  switch (reason) {
    case BlockReject::kNone:
      return "none";
    case BlockReject::kMagic:
      return "bad magic";
    case BlockReject::kVersion:
      return "bad version";
    case BlockReject::kHeaderSize:
      return "bad header size";
    case BlockReject::kObservationId:
      return "wrong observation id";
    case BlockReject::kSubband:
      return "unknown subband";
    case BlockReject::kShape:
      return "wrong shape";
    case BlockReject::kPayloadSize:
      return "wrong payload size";
    case BlockReject::kIntegration:
      return "integration out of range";
    case BlockReject::kChecksum:
      return "bad checksum";
    case BlockReject::kTruncated:
      return "truncated";
    case BlockReject::kDuplicate:
      return "duplicate";
  }
  return "?";
}

BlockValidator::BlockValidator(const ObservationSettings& settings,
                               std::map<uint32_t, int> subbandToOutput)
    : observationId_(uint64_t(settings.observationId)),
      nrStations_(uint32_t(nrOutputStations(settings))),
      nrChannels_(uint32_t(settings.channelsPerSubband)),
      nrIntegrations_(settings.nrIntegrations()),
      subbandToOutput_(std::move(subbandToOutput)) {
  CorrelatedHeader shape;
  shape.nrStations = nrStations_;
  shape.nrChannels = nrChannels_;
  shape.nrPolarisations = kNrPolarisationProducts;
  payloadSize_ = shape.expectedPayloadSize();
  for (const SubbandSettings& subband : settings.subbands)
    parsetSubbands_[uint32_t(subband.index)] = true;
}

HeaderCheck BlockValidator::check(const CorrelatedHeader& h) const {
  auto reject = [](BlockReject reason, std::string detail, bool skippable) {
    return HeaderCheck{reason, std::move(detail), skippable, -1};
  };
  // Framing first: without it neither the length nor anything else can be trusted.
  if (h.magic != kCorrelatedMagic) {
    char magic[32];
    std::snprintf(magic, sizeof magic, "magic 0x%08x", unsigned(h.magic));
    return reject(BlockReject::kMagic, magic, false);
  }
  if (h.version != kCorrelatedVersion)
    return reject(BlockReject::kVersion, "version " + std::to_string(h.version), false);
  if (h.headerSize != kCorrelatedHeaderSize)
    return reject(BlockReject::kHeaderSize, "header size " + std::to_string(h.headerSize), false);
  // The length is trusted only when it is exactly what this observation's blocks carry.
  const bool lengthOk = h.payloadSize == payloadSize_;
  if (h.nrStations != nrStations_ || h.nrChannels != nrChannels_ ||
      h.nrPolarisations != kNrPolarisationProducts)
    return reject(BlockReject::kShape,
                  "nrStations " + std::to_string(h.nrStations) + " nrChannels " +
                      std::to_string(h.nrChannels) + " nrPolarisations " +
                      std::to_string(h.nrPolarisations) + ", expected " +
                      std::to_string(nrStations_) + " " + std::to_string(nrChannels_) + " 4",
                  lengthOk);
  if (!lengthOk)
    return reject(BlockReject::kPayloadSize,
                  "payload length " + std::to_string(h.payloadSize) + ", expected " +
                      std::to_string(payloadSize_),
                  false);
  if (h.observationId != observationId_)
    return reject(BlockReject::kObservationId, "observation id " + std::to_string(h.observationId),
                  true);
  const auto output = subbandToOutput_.find(h.subband);
  if (output == subbandToOutput_.end())
    return reject(BlockReject::kSubband,
                  "subband index " + std::to_string(h.subband) +
                      (parsetSubbands_.count(h.subband) ? " (not stored on this host)"
                                                        : " (not in the parset)"),
                  true);
  if (int64_t(h.integration) < 0 || int64_t(h.integration) >= nrIntegrations_)
    return reject(
        BlockReject::kIntegration,
        "integration " + std::to_string(h.integration) + " of " + std::to_string(nrIntegrations_),
        true);
  return HeaderCheck{BlockReject::kNone, {}, true, output->second};
}

}  // namespace rtcp::storage
