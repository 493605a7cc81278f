#include "rtcp/BeamFormedWire.h"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "rtcp/Crc64.h"
#include "rtcp/LittleEndian.h"

namespace rtcp {
namespace {

using wire::get;
using wire::put;

static_assert(std::endian::native == std::endian::little, "payloads are copied as they are");

bool isStokesKind(uint8_t kind) { return kind <= uint8_t(StokesKind::kXXYY); }

}  // namespace

void BeamFormedHeader::write(uint8_t* bytes) const {
  put(bytes, 0, magic);
  put(bytes, 4, version);
  put(bytes, 6, headerSize);
  put(bytes, 8, observationId);
  put(bytes, 16, sap);
  put(bytes, 18, tab);
  put(bytes, 20, subband);
  put(bytes, 24, stokes);
  put(bytes, 25, reserved8);
  put(bytes, 26, nrChannels);
  put(bytes, 28, nrSamples);
  put(bytes, 32, block);
  put(bytes, 40, payloadSize);
  put(bytes, 48, payloadCrc);
  put(bytes, 56, reserved);
}

BeamFormedHeader BeamFormedHeader::read(const uint8_t* bytes) {
  BeamFormedHeader h;
  h.magic = get<uint32_t>(bytes, 0);
  h.version = get<uint16_t>(bytes, 4);
  h.headerSize = get<uint16_t>(bytes, 6);
  h.observationId = get<uint64_t>(bytes, 8);
  h.sap = get<uint16_t>(bytes, 16);
  h.tab = get<uint16_t>(bytes, 18);
  h.subband = get<uint32_t>(bytes, 20);
  h.stokes = get<uint8_t>(bytes, 24);
  h.reserved8 = get<uint8_t>(bytes, 25);
  h.nrChannels = get<uint16_t>(bytes, 26);
  h.nrSamples = get<uint32_t>(bytes, 28);
  h.block = get<uint64_t>(bytes, 32);
  h.payloadSize = get<uint64_t>(bytes, 40);
  h.payloadCrc = get<uint64_t>(bytes, 48);
  h.reserved = get<uint64_t>(bytes, 56);
  return h;
}

uint64_t BeamFormedHeader::expectedPayloadSize() const {
  if (!isStokesKind(stokes)) return 0;
  const uint64_t components = uint64_t(nrStokesComponents(StokesKind(stokes)));
  return (components + 1) * uint64_t(nrSamples) * uint64_t(nrChannels) * sizeof(float);
}

std::optional<std::string> checkBeamFormedHeader(const BeamFormedHeader& h, uint32_t maxSamples) {
  if (h.magic != kBeamFormedMagic) return "bad magic (not an RTBF block)";
  if (h.version != kBeamFormedVersion) return "unsupported version " + std::to_string(h.version);
  if (h.headerSize != kBeamFormedHeaderSize)
    return "header size " + std::to_string(h.headerSize) + ", not 64";
  if (!isStokesKind(h.stokes)) return "Stokes kind " + std::to_string(h.stokes) + " unknown";
  if (h.nrChannels == 0) return "number of channels 0";
  if (h.nrSamples == 0 || h.nrSamples > maxSamples)
    return "number of samples " + std::to_string(h.nrSamples) + " out of range";
  if (h.block > uint64_t(INT64_MAX))
    return "block number " + std::to_string(h.block) + " out of range";
  if (h.payloadSize != h.expectedPayloadSize())
    return "payload size " + std::to_string(h.payloadSize) + " differs from the expected " +
           std::to_string(h.expectedPayloadSize());
  if (h.reserved != 0 || h.reserved8 != 0) return "reserved field not 0";
  return std::nullopt;
}

size_t beamFormedSerialisedSize(const BeamFormedData& data) {
  return kBeamFormedHeaderSize + (data.samples.size() + data.validFraction.size()) * sizeof(float);
}

void serialiseBeamFormed(const BeamFormedData& data, uint64_t observationId,
                         std::span<uint8_t> out) {
  if (data.sap < 0 || data.sap > UINT16_MAX || data.tab < 0 || data.tab > UINT16_MAX ||
      data.nrChannels <= 0 || data.nrChannels > UINT16_MAX || data.block < 0)
    throw std::logic_error("serialiseBeamFormed: the data do not fit the wire format");
  BeamFormedHeader h;
  h.observationId = observationId;
  h.sap = uint16_t(data.sap);
  h.tab = uint16_t(data.tab);
  h.subband = uint32_t(data.subband);
  h.stokes = uint8_t(data.kind);
  h.nrChannels = uint16_t(data.nrChannels);
  h.nrSamples = uint32_t(data.nrSamples);
  h.block = uint64_t(data.block);
  serialiseBeamFormed(h, data.samples.span(), data.validFraction.span(), out);
}

void serialiseBeamFormed(BeamFormedHeader h, std::span<const float> samples,
                         std::span<const float> validFraction, std::span<uint8_t> out) {
  h.payloadSize = h.expectedPayloadSize();
  const size_t sampleBytes = samples.size_bytes();
  const size_t fractionBytes = validFraction.size_bytes();
  if (validFraction.size() != size_t(h.nrSamples) * size_t(h.nrChannels) ||
      sampleBytes + fractionBytes != h.payloadSize)
    throw std::logic_error("serialiseBeamFormed: the data do not fit the wire format");
  if (out.size() != kBeamFormedHeaderSize + h.payloadSize)
    throw std::logic_error("serialiseBeamFormed: the output is not the header and payload size");
  uint8_t* payload = out.data() + kBeamFormedHeaderSize;
  if (sampleBytes) std::memcpy(payload, samples.data(), sampleBytes);
  if (fractionBytes) std::memcpy(payload + sampleBytes, validFraction.data(), fractionBytes);
  h.payloadCrc = crc64(payload, h.payloadSize);
  h.write(out.data());
}

BeamFormedData beamFormedFromPayload(const BeamFormedHeader& header, const uint8_t* payload) {
  if (checkBeamFormedHeader(header))
    throw std::invalid_argument("beamFormedFromPayload: the header is not a good one");
  BeamFormedData data(StokesKind(header.stokes), int(header.nrChannels), int(header.nrSamples));
  data.sap = int(header.sap);
  data.tab = int(header.tab);
  data.subband = int(header.subband);
  data.block = int64_t(header.block);
  const size_t sampleBytes = data.samples.size() * sizeof(float);
  std::memcpy(data.samples.data(), payload, sampleBytes);
  std::memcpy(data.validFraction.data(), payload + sampleBytes,
              data.validFraction.size() * sizeof(float));
  return data;
}

}  // namespace rtcp
