#include "rtcp/CorrelatedBlock.h"

#include <bit>
#include <cstring>
#include <stdexcept>

#include "rtcp/Baselines.h"
#include "rtcp/Crc64.h"
#include "rtcp/LittleEndian.h"

namespace rtcp {
namespace {

using wire::get;
using wire::put;

static_assert(sizeof(std::complex<float>) == 8);
static_assert(std::endian::native == std::endian::little, "payloads are copied as they are");

}  // namespace

void CorrelatedHeader::write(uint8_t* bytes) const {
  put(bytes, 0, magic);
  put(bytes, 4, version);
  put(bytes, 6, headerSize);
  put(bytes, 8, observationId);
  put(bytes, 16, subband);
  put(bytes, 20, nrStations);
  put(bytes, 24, nrChannels);
  put(bytes, 28, nrPolarisations);
  put(bytes, 32, integration);
  put(bytes, 40, payloadSize);
  put(bytes, 48, payloadCrc);
  put(bytes, 56, reserved);
}

CorrelatedHeader CorrelatedHeader::read(const uint8_t* bytes) {
  CorrelatedHeader h;
  h.magic = get<uint32_t>(bytes, 0);
  h.version = get<uint16_t>(bytes, 4);
  h.headerSize = get<uint16_t>(bytes, 6);
  h.observationId = get<uint64_t>(bytes, 8);
  h.subband = get<uint32_t>(bytes, 16);
  h.nrStations = get<uint32_t>(bytes, 20);
  h.nrChannels = get<uint32_t>(bytes, 24);
  h.nrPolarisations = get<uint32_t>(bytes, 28);
  h.integration = get<uint64_t>(bytes, 32);
  h.payloadSize = get<uint64_t>(bytes, 40);
  h.payloadCrc = get<uint64_t>(bytes, 48);
  h.reserved = get<uint64_t>(bytes, 56);
  return h;
}

uint64_t CorrelatedHeader::expectedPayloadSize() const {
  const uint64_t baselines = uint64_t(nrStations) * (uint64_t(nrStations) + 1) / 2;
  const uint64_t cells = baselines * nrChannels;
  return cells * nrPolarisations * sizeof(std::complex<float>) + cells * sizeof(uint32_t);
}

void DurableReply::write(uint8_t* bytes) const {
  put(bytes, 0, kMagic);
  put(bytes, 4, uint16_t(kSize));
  put(bytes, 6, uint16_t(stream.kind));
  put(bytes, 8, stream.subband);
  put(bytes, 12, stream.sap);
  put(bytes, 14, stream.tab);
  put(bytes, 16, sequence);
}

std::optional<DurableReply> DurableReply::read(const uint8_t* bytes) {
  if (get<uint32_t>(bytes, 0) != kMagic || get<uint16_t>(bytes, 4) != kSize) return std::nullopt;
  const uint16_t kind = get<uint16_t>(bytes, 6);
  if (kind > uint16_t(DurableStream::Kind::kBeamFormed)) return std::nullopt;
  DurableReply reply;
  reply.stream = {DurableStream::Kind(kind), get<uint16_t>(bytes, 12), get<uint16_t>(bytes, 14),
                  get<uint32_t>(bytes, 8)};
  reply.sequence = get<uint64_t>(bytes, 16);
  return reply;
}

std::optional<std::string> checkCorrelatedHeader(const CorrelatedHeader& h, uint32_t maxStations,
                                                 uint32_t maxChannels) {
  if (h.magic != kCorrelatedMagic) return "bad magic (not an RTCP block)";
  if (h.version != kCorrelatedVersion) return "unsupported version " + std::to_string(h.version);
  if (h.headerSize != kCorrelatedHeaderSize)
    return "header size " + std::to_string(h.headerSize) + ", not 64";
  if (h.nrPolarisations != kNrPolarisationProducts)
    return "number of polarisation products " + std::to_string(h.nrPolarisations) + ", not 4";
  if (h.nrStations == 0 || h.nrStations > maxStations)
    return "number of stations " + std::to_string(h.nrStations) + " out of range";
  if (h.nrChannels == 0 || h.nrChannels > maxChannels)
    return "number of channels " + std::to_string(h.nrChannels) + " out of range";
  if (h.payloadSize != h.expectedPayloadSize())
    return "payload size " + std::to_string(h.payloadSize) + " differs from the expected " +
           std::to_string(h.expectedPayloadSize());
  if (h.reserved != 0) return "reserved field not 0";
  return std::nullopt;
}

CorrelatedData::CorrelatedData(int nrStations, int nrChannels)
    : nrStations(nrStations),
      nrChannels(nrChannels),
      visibilities(size_t(nrBaselines(nrStations)) * nrChannels * kNrPolarisationProducts),
      validSamples(size_t(nrBaselines(nrStations)) * nrChannels) {}

void CorrelatedData::add(const CorrelatedData& other) {
  if (other.nrStations != nrStations || other.nrChannels != nrChannels)
    throw std::invalid_argument("CorrelatedData::add: shapes differ");
  std::complex<float>* __restrict v = visibilities.data();
  const std::complex<float>* __restrict ov = other.visibilities.data();
  for (size_t i = 0; i < visibilities.size(); ++i) v[i] += ov[i];
  uint32_t* __restrict n = validSamples.data();
  const uint32_t* __restrict on = other.validSamples.data();
  for (size_t i = 0; i < validSamples.size(); ++i) n[i] += on[i];
}

void CorrelatedData::zero() {
  visibilities.zero();
  validSamples.zero();
}

std::vector<uint8_t> CorrelatedData::serialise(uint64_t observationId) const {
  std::vector<uint8_t> out;
  serialise(observationId, out);
  return out;
}

void CorrelatedData::serialise(uint64_t observationId, std::vector<uint8_t>& out) const {
  out.resize(serialisedSize());
  serialise(observationId, std::span<uint8_t>(out));
}

size_t CorrelatedData::serialisedSize() const {
  return kCorrelatedHeaderSize + visibilities.size() * sizeof(std::complex<float>) +
         validSamples.size() * sizeof(uint32_t);
}

void CorrelatedData::serialise(uint64_t observationId, std::span<uint8_t> out) const {
  CorrelatedHeader h;
  h.observationId = observationId;
  h.subband = uint32_t(subband);
  h.nrStations = uint32_t(nrStations);
  h.nrChannels = uint32_t(nrChannels);
  h.integration = uint64_t(integration);
  h.payloadSize = h.expectedPayloadSize();
  const size_t visibilityBytes = visibilities.size() * sizeof(std::complex<float>);
  const size_t validBytes = validSamples.size() * sizeof(uint32_t);
  if (visibilityBytes + validBytes != h.payloadSize)
    throw std::logic_error("CorrelatedData::serialise: buffers do not match the shape");
  if (out.size() != kCorrelatedHeaderSize + h.payloadSize)
    throw std::logic_error("CorrelatedData::serialise: the output is not serialisedSize()");
  // The host is little-endian (x86-64), so float32 and uint32 go out as they are.
  uint8_t* payload = out.data() + kCorrelatedHeaderSize;
  if (visibilityBytes) std::memcpy(payload, visibilities.data(), visibilityBytes);
  if (validBytes) std::memcpy(payload + visibilityBytes, validSamples.data(), validBytes);
  h.payloadCrc = crc64(payload, h.payloadSize);
  h.write(out.data());
}

}  // namespace rtcp

namespace rtcp {

CorrelatedData CorrelatedData::fromPayload(const CorrelatedHeader& header, const uint8_t* payload) {
  if (header.payloadSize != header.expectedPayloadSize())
    throw std::invalid_argument(
        "CorrelatedData::fromPayload: payload size does not match the shape");
  CorrelatedData data(int(header.nrStations), int(header.nrChannels));
  data.subband = int(header.subband);
  data.integration = int64_t(header.integration);
  const size_t visibilityBytes = data.visibilities.size() * sizeof(std::complex<float>);
  if (visibilityBytes) std::memcpy(data.visibilities.data(), payload, visibilityBytes);
  if (!data.validSamples.size()) return data;
  std::memcpy(data.validSamples.data(), payload + visibilityBytes,
              data.validSamples.size() * sizeof(uint32_t));
  return data;
}

}  // namespace rtcp
