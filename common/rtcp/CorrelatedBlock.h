#pragma once
/// \file CorrelatedBlock.h
/// Correlated output from ionproc to storage (DESIGN §2.4): a 64-byte little-endian
/// header, then visibilities[baseline][channel][pol] as complex float32 and
/// nrValidSamples[baseline][channel] as uint32.

#include <complex>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "rtcp/AlignedBuffer.h"

namespace rtcp {

constexpr uint32_t kCorrelatedMagic = 0x50435452;  ///< the bytes "RTCP"
constexpr uint16_t kCorrelatedVersion = 1;
constexpr uint16_t kCorrelatedHeaderSize = 64;

struct CorrelatedHeader {
  uint32_t magic = kCorrelatedMagic;
  uint16_t version = kCorrelatedVersion;
  uint16_t headerSize = kCorrelatedHeaderSize;
  uint64_t observationId = 0;
  uint32_t subband = 0;  ///< subband index in the observation's list (two beams may share a number)
  uint32_t nrStations = 0;  ///< after superstation merging
  uint32_t nrChannels = 0;
  uint32_t nrPolarisations = 4;
  uint64_t integration = 0;  ///< 0 = the integration starting at the observation start
  uint64_t payloadSize = 0;
  uint64_t payloadCrc = 0;  ///< CRC-64/XZ of the payload
  uint64_t reserved = 0;

  void write(uint8_t* bytes) const;  ///< 64 bytes
  static CorrelatedHeader read(const uint8_t* bytes);
  /// Payload bytes implied by nrStations, nrChannels, nrPolarisations.
  uint64_t expectedPayloadSize() const;
};

/// Checks a received header (magic, version, sizes, shape limits); the reason when bad,
/// nullopt when good. The payload's CRC is checked separately.
std::optional<std::string> checkCorrelatedHeader(const CorrelatedHeader& header,
                                                 uint32_t maxStations = 4096,
                                                 uint32_t maxChannels = 1u << 16);

/// A stream of blocks a sender sends and storage-sink writes in order: one subband's
/// integrations (DESIGN §2.4), or one TAB's beam-formed blocks of one subband (§2.4b).
struct DurableStream {
  enum class Kind : uint16_t { kIntegrations = 0, kBeamFormed = 1 };
  Kind kind = Kind::kIntegrations;
  uint16_t sap = 0;      ///< beam-formed: the SAP (Observation.Beam index); else 0
  uint16_t tab = 0;      ///< beam-formed: the TAB within its SAP; else 0
  uint32_t subband = 0;  ///< subband index in the observation's list
  auto operator<=>(const DurableStream&) const = default;
};

/// storage-sink's reply on the same connection (DESIGN §2.4, the other way): every block of
/// `stream` up to and including `sequence` (an integration, or a beam-formed block number)
/// is on its disk (integrations: in the MS, flushed, or final as a flagged gap; beam-formed
/// blocks: written into their files), so the sender need not keep it to send again should
/// storage-sink die. 24 bytes, little-endian: magic "RTCD", size (uint16, 24), kind
/// (uint16: 0 integrations, 1 beam-formed), subband (uint32), SAP (uint16), TAB (uint16),
/// sequence (uint64). Kind 0 has SAP and TAB 0.
struct DurableReply {
  static constexpr uint32_t kMagic = 0x44435452;  ///< the bytes "RTCD"
  static constexpr size_t kSize = 24;
  DurableStream stream;
  uint64_t sequence = 0;

  void write(uint8_t* bytes) const;
  /// The reply in bytes (kSize of them); nullopt when its magic, size or kind is wrong.
  static std::optional<DurableReply> read(const uint8_t* bytes);
};

/// One subband's visibilities for one integration.
struct CorrelatedData {
  CorrelatedData() = default;
  CorrelatedData(int nrStations, int nrChannels);
  int nrStations = 0;
  int nrChannels = 0;
  int subband = 0;  ///< subband index in the observation's subband list
  int64_t integration = 0;
  AlignedBuffer<std::complex<float>> visibilities;  ///< [baseline][channel][pol]
  AlignedBuffer<uint32_t> validSamples;             ///< [baseline][channel]

  std::complex<float>& visibility(int baseline, int channel, int pol) {
    return visibilities[(size_t(baseline) * nrChannels + channel) * 4 + pol];
  }
  uint32_t& valid(int baseline, int channel) {
    return validSamples[size_t(baseline) * nrChannels + channel];
  }
  /// Adds another integration's sums and counts (same shape).
  void add(const CorrelatedData& other);
  void zero();
  /// Serialises header + payload (with CRC) for the storage stream.
  std::vector<uint8_t> serialise(uint64_t observationId) const;
  /// The same into `out`, replacing its contents.
  void serialise(uint64_t observationId, std::vector<uint8_t>& out) const;
  /// Bytes serialise() writes: the header and the payload.
  size_t serialisedSize() const;
  /// The same into `out` (serialisedSize() bytes, not zeroed first: the zeroing was 4 % of
  /// ionproc's CPU).
  void serialise(uint64_t observationId, std::span<uint8_t> out) const;
  /// Rebuilds the data from a (checked) header and its payload of header.payloadSize bytes.
  static CorrelatedData fromPayload(const CorrelatedHeader& header, const uint8_t* payload);
};

}  // namespace rtcp
