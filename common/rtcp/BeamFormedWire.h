#pragma once
/// \file BeamFormedWire.h
/// Beam-formed output from ionproc to storage (docs/DESIGN.md, "Beam-formed output, ION →
/// storage"): one TAB's data of one subband and block (BeamFormedData) on the same TCP
/// stream as the correlated blocks, told apart by its own magic: a 64-byte little-endian
/// header, then samples[component][sample][channel] and validFraction[sample][channel] as
/// float32, the payload's CRC-64/XZ in the header.
///
/// | offset | size | field |
/// |---|---|---|
/// | 0 | 4 | magic 0x46425452 (the bytes `RTBF`) |
/// | 4 | 2 | format version, 1 |
/// | 6 | 2 | header size, 64 |
/// | 8 | 8 | observation id |
/// | 16 | 2 | SAP (Observation.Beam index) |
/// | 18 | 2 | TAB within its SAP |
/// | 20 | 4 | subband index in the observation's subband list |
/// | 24 | 1 | Stokes: 0 = I, 1 = IQUV, 2 = XXYY (StokesKind) |
/// | 25 | 1 | reserved, 0 |
/// | 26 | 2 | channels per subband C |
/// | 28 | 4 | samples per block S (after time integration) |
/// | 32 | 8 | block number (0 = the block starting at the observation start) |
/// | 40 | 8 | payload length: (components + 1) × S × C × 4 bytes |
/// | 48 | 8 | CRC-64/XZ of the payload |
/// | 56 | 8 | reserved, 0 |

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "rtcp/BeamFormedBlock.h"

namespace rtcp {

constexpr uint32_t kBeamFormedMagic = 0x46425452;  ///< the bytes "RTBF"
constexpr uint16_t kBeamFormedVersion = 1;
constexpr uint16_t kBeamFormedHeaderSize = 64;

/// The longest storage-sink lets beam-formed rows it wrote wait before it syncs them to
/// disk (fdatasync of each file written since, batched: not per block); a DurableReply of
/// kind beam-formed covers a block only after that sync. So a sender keeps a TAB's blocks
/// for up to about this long after the sink took them whole (ionproc sizes its pool of
/// beam-formed blocks kept to send again by it: output/StorageSender.h).
constexpr double kBeamFormedSyncSeconds = 1.0;

struct BeamFormedHeader {
  uint32_t magic = kBeamFormedMagic;
  uint16_t version = kBeamFormedVersion;
  uint16_t headerSize = kBeamFormedHeaderSize;
  uint64_t observationId = 0;
  uint16_t sap = 0;
  uint16_t tab = 0;
  uint32_t subband = 0;
  uint8_t stokes = 0;  ///< StokesKind
  uint8_t reserved8 = 0;
  uint16_t nrChannels = 0;
  uint32_t nrSamples = 0;
  uint64_t block = 0;
  uint64_t payloadSize = 0;
  uint64_t payloadCrc = 0;  ///< CRC-64/XZ of the payload
  uint64_t reserved = 0;

  void write(uint8_t* bytes) const;  ///< 64 bytes
  static BeamFormedHeader read(const uint8_t* bytes);
  /// Payload bytes implied by the Stokes kind, channels and samples (0 for a bad kind).
  uint64_t expectedPayloadSize() const;
};

/// Checks a received header (magic, version, sizes, Stokes kind, shape limits); the reason
/// naming the field when bad, nullopt when good. The payload's CRC is checked separately.
std::optional<std::string> checkBeamFormedHeader(const BeamFormedHeader& header,
                                                 uint32_t maxSamples = 1u << 24);

/// Bytes serialiseBeamFormed writes for `data`: the header and the payload.
size_t beamFormedSerialisedSize(const BeamFormedData& data);
/// Header + payload (with CRC) for the storage stream, into `out` of exactly
/// beamFormedSerialisedSize(data) bytes.
void serialiseBeamFormed(const BeamFormedData& data, uint64_t observationId,
                         std::span<uint8_t> out);
/// The same from a header's labels and shape (observation id, SAP, TAB, subband, Stokes,
/// channels, samples, block) and the payload's two arrays, samples[component][sample]
/// [channel] and validFraction[sample][channel] (as ionproc receives them from a rank):
/// fills in the payload size and CRC, into `out` of exactly 64 + payload bytes. Throws
/// std::logic_error when the arrays do not have the header's shape.
void serialiseBeamFormed(BeamFormedHeader header, std::span<const float> samples,
                         std::span<const float> validFraction, std::span<uint8_t> out);
/// Rebuilds the data from a checked header and its payload of header.payloadSize bytes.
BeamFormedData beamFormedFromPayload(const BeamFormedHeader& header, const uint8_t* payload);

}  // namespace rtcp
