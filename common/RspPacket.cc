#include "rtcp/RspPacket.h"

#include <cstring>
#include <stdexcept>

namespace rtcp {
namespace {

uint16_t readLe16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
uint32_t readLe32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
void writeLe16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v);
  p[1] = uint8_t(v >> 8);
}
void writeLe32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = uint8_t(v >> (8 * i));
}

/// Sign-extends a 4-bit two's complement nibble.
int16_t nibble(uint8_t value) { return int16_t(int8_t(uint8_t(value << 4)) >> 4); }

void checkBits(int bits) {
  if (bits != 16 && bits != 8 && bits != 4)
    throw std::invalid_argument("bits per sample must be 16, 8 or 4, not " + std::to_string(bits));
}

}  // namespace

int RspHeader::bitsPerSample() const {
  switch (sourceInfo2 & 0x3) {
    case 0:
      return 16;
    case 1:
      return 8;
    case 2:
      return 4;
    default:
      return 0;
  }
}

void RspHeader::setClockMHz(int mhz) {
  if (mhz != 200 && mhz != 160)
    throw std::invalid_argument("clock must be 200 or 160 MHz, not " + std::to_string(mhz));
  sourceInfo1 = uint8_t((sourceInfo1 & 0x7f) | (mhz == 200 ? 0x80 : 0));
}

void RspHeader::setBitsPerSample(int bits) {
  checkBits(bits);
  const int mode = bits == 16 ? 0 : bits == 8 ? 1 : 2;
  sourceInfo2 = uint8_t((sourceInfo2 & ~0x3) | mode);
}

void RspHeader::setStationId(int id, int board) {
  if (id < 0 || id >= 2048 || board < 0 || board >= 32)
    throw std::invalid_argument("station ID " + std::to_string(id) + " / board " +
                                std::to_string(board) + " does not fit the station field");
  station = uint16_t(id * 32 + board);
}

RspHeader RspHeader::read(const uint8_t* bytes) {
  RspHeader h;
  h.version = bytes[0];
  h.sourceInfo1 = bytes[1];
  h.sourceInfo2 = bytes[2];
  h.configuration = bytes[3];
  h.station = readLe16(bytes + 4);
  h.nrBeamlets = bytes[6];
  h.nrBlocks = bytes[7];
  h.timestamp = readLe32(bytes + 8);
  h.blockSequenceNumber = readLe32(bytes + 12);
  return h;
}

void RspHeader::write(uint8_t* bytes) const {
  bytes[0] = version;
  bytes[1] = sourceInfo1;
  bytes[2] = sourceInfo2;
  bytes[3] = configuration;
  writeLe16(bytes + 4, station);
  bytes[6] = nrBeamlets;
  bytes[7] = nrBlocks;
  writeLe32(bytes + 8, timestamp);
  writeLe32(bytes + 12, blockSequenceNumber);
}

const char* toString(RspReject reason) {
  switch (reason) {
    case RspReject::kNone:
      return "accepted";
    case RspReject::kTruncated:
      return "truncated (shorter than a header)";
    case RspReject::kVersion:
      return "bad version";
    case RspReject::kClock:
      return "wrong clock";
    case RspReject::kBitMode:
      return "bad or unexpected bit mode";
    case RspReject::kBeamletCount:
      return "bad or unexpected number of beamlets";
    case RspReject::kBlockCount:
      return "number of blocks not 16";
    case RspReject::kSize:
      return "datagram size differs from header + payload";
    case RspReject::kPayloadError:
      return "payload error flagged by the station";
    case RspReject::kTimestamp:
      return "bad timestamp or sequence number";
    case RspReject::kStation:
      return "unexpected station ID";
    case RspReject::kBeforeObservation:
      return "timestamp long before the observation";
    case RspReject::kAfterObservation:
      return "timestamp long after the observation";
    case RspReject::kAheadOfClock:
      return "timestamp ahead of the wall clock";
  }
  return "unknown reject reason";
}

RspReject validateRspPacket(std::span<const uint8_t> datagram, const RspExpectation& expect,
                            RspHeader& header) {
  if (datagram.size() < kRspHeaderSize) return RspReject::kTruncated;
  const RspHeader h = RspHeader::read(datagram.data());
  const int bits = h.bitsPerSample();
  if (h.version != 3 && !(h.version == 2 && bits == 16)) return RspReject::kVersion;
  if (bits == 0 || (expect.bitsPerSample != 0 && bits != expect.bitsPerSample))
    return RspReject::kBitMode;
  if (expect.clockMHz != 0 && h.clockMHz() != expect.clockMHz) return RspReject::kClock;
  if (h.nrBlocks != kRspSamplesPerPacket) return RspReject::kBlockCount;
  if (h.nrBeamlets == 0 || h.nrBeamlets > maxBeamlets(bits) ||
      (expect.nrBeamlets != 0 && h.nrBeamlets != expect.nrBeamlets))
    return RspReject::kBeamletCount;
  if (datagram.size() != rspPacketSize(bits, h.nrBeamlets, h.nrBlocks)) return RspReject::kSize;
  if (h.payloadError()) return RspReject::kPayloadError;
  if (h.timestamp == 0xFFFFFFFFu ||
      int64_t(h.blockSequenceNumber) >= SampleClock(h.clockMHz()).samplesInSecond(h.timestamp))
    return RspReject::kTimestamp;
  if (expect.stationId != 0 && h.stationId() != expect.stationId) return RspReject::kStation;
  header = h;
  return RspReject::kNone;
}

int maxBeamlets(int bitsPerSample) {
  switch (bitsPerSample) {
    case 16:
      return 61;
    case 8:
      return 122;
    case 4:
      return 244;
    default:
      return 0;
  }
}

int bytesPerDualPolSample(int bitsPerSample) {
  checkBits(bitsPerSample);
  return bitsPerSample / 2;  // 2 polarisations * 2 components * bits / 8
}

size_t rspPayloadSize(int bitsPerSample, int nrBeamlets, int nrBlocks) {
  return size_t(nrBeamlets) * nrBlocks * bytesPerDualPolSample(bitsPerSample);
}

size_t rspPacketSize(int bitsPerSample, int nrBeamlets, int nrBlocks) {
  return kRspHeaderSize + rspPayloadSize(bitsPerSample, nrBeamlets, nrBlocks);
}

int maxSampleValue(int bitsPerSample) {
  checkBits(bitsPerSample);
  return (1 << (bitsPerSample - 1)) - 1;
}

void encodeRspPacket(const RspHeader& header, const std::complex<int16_t>* samples, uint8_t* out) {
  header.write(out);
  const int bits = header.bitsPerSample();
  checkBits(bits);
  uint8_t* p = out + kRspHeaderSize;
  const size_t count = size_t(header.nrBeamlets) * header.nrBlocks * kNrPolarisations;
  for (size_t i = 0; i < count; ++i) {
    const int16_t re = samples[i].real(), im = samples[i].imag();
    if (bits == 16) {
      writeLe16(p, uint16_t(re));
      writeLe16(p + 2, uint16_t(im));
      p += 4;
    } else if (bits == 8) {
      p[0] = uint8_t(int8_t(re));
      p[1] = uint8_t(int8_t(im));
      p += 2;
    } else {
      *p++ = uint8_t((re & 0xf) | ((im & 0xf) << 4));
    }
  }
}

void decodeRspPayload(const uint8_t* payload, int bitsPerSample, int nrBeamlets, int nrBlocks,
                      std::complex<int16_t>* samples) {
  const int bytes = bytesPerDualPolSample(bitsPerSample);
  const size_t count = size_t(nrBeamlets) * nrBlocks;
  for (size_t i = 0; i < count; ++i)
    decodeRspSample(payload + i * bytes, bitsPerSample, samples[2 * i], samples[2 * i + 1]);
}

void decodeRspSample(const uint8_t* bytes, int bitsPerSample, std::complex<int16_t>& x,
                     std::complex<int16_t>& y) {
  switch (bitsPerSample) {
    case 16:
      x = {int16_t(readLe16(bytes)), int16_t(readLe16(bytes + 2))};
      y = {int16_t(readLe16(bytes + 4)), int16_t(readLe16(bytes + 6))};
      break;
    case 8:
      x = {int8_t(bytes[0]), int8_t(bytes[1])};
      y = {int8_t(bytes[2]), int8_t(bytes[3])};
      break;
    case 4:
      x = {nibble(bytes[0] & 0xf), nibble(bytes[0] >> 4)};
      y = {nibble(bytes[1] & 0xf), nibble(bytes[1] >> 4)};
      break;
    default:
      checkBits(bitsPerSample);
  }
}

}  // namespace rtcp
