#pragma once
/// \file BlockValidator.h
/// Checks a correlated block's header (DESIGN §2.4) against the observation before
/// anything is allocated or read for its payload, and its payload's CRC-64.

#include <cstdint>
#include <map>
#include <string>

#include "rtcp/CorrelatedBlock.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::storage {

/// Why a block was rejected; each fault has its own reason.
enum class BlockReject {
  kNone = 0,
  kMagic,          ///< not "RTCP"
  kVersion,        ///< format version not 1
  kHeaderSize,     ///< header size not 64
  kObservationId,  ///< another observation's block
  kSubband,        ///< subband not in the parset, or not stored on this host
  kShape,          ///< nrStations / nrChannels / nrPolarisations differ from the observation
  kPayloadSize,    ///< payload length differs from what the shape implies
  kIntegration,    ///< integration number beyond the observation
  kChecksum,       ///< CRC-64 of the payload differs from the header's
  kTruncated,      ///< the connection ended inside a block
  kDuplicate,      ///< an integration already written (not a gap)
};
constexpr int kNrBlockRejects = 12;
const char* toString(BlockReject reason);

/// The verdict on a header.
struct HeaderCheck {
  BlockReject reason = BlockReject::kNone;
  std::string detail;             ///< the offending field and value
  bool payloadSkippable = false;  ///< the length can be trusted: skip the payload, keep going
  int output = -1;                ///< index of the local output (MS) the block belongs to
};

class BlockValidator {
 public:
  /// subbandToOutput: subband index -> index of the local output that stores it.
  BlockValidator(const ObservationSettings& settings, std::map<uint32_t, int> subbandToOutput);

  HeaderCheck check(const CorrelatedHeader& header) const;
  /// The payload size every good block has.
  uint64_t payloadSize() const { return payloadSize_; }
  uint32_t nrStations() const { return nrStations_; }
  uint32_t nrChannels() const { return nrChannels_; }
  int64_t nrIntegrations() const { return nrIntegrations_; }

 private:
  uint64_t observationId_;
  uint32_t nrStations_;
  uint32_t nrChannels_;
  int64_t nrIntegrations_;
  uint64_t payloadSize_;
  std::map<uint32_t, int> subbandToOutput_;
  std::map<uint32_t, bool> parsetSubbands_;
};

}  // namespace rtcp::storage
