#pragma once
/// \file RspPacket.h
/// RSP station packets (DESIGN §2.1): a 16-byte little-endian header and a payload of
/// samples[beamlet][time][pol X,Y] of complex integers in the bit mode (16, 8 or 4 bits).

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "rtcp/SampleTime.h"

namespace rtcp {

constexpr size_t kRspHeaderSize = 16;
constexpr int kRspSamplesPerPacket = 16;  ///< nrBlocks: time samples per beamlet
constexpr int kNrPolarisations = 2;

struct RspHeader {
  uint8_t version = 3;
  uint8_t sourceInfo1 = 0x80;  ///< bits 0-4 board, bit 6 payload error, bit 7 200 MHz clock
  uint8_t sourceInfo2 = 0;     ///< bits 0-1 bit mode: 0 = 16, 1 = 8, 2 = 4 bit
  uint8_t configuration = 0;   ///< not validated (real stations send e.g. 0xAA)
  uint16_t station = 0;        ///< station ID * 32 + board number
  uint8_t nrBeamlets = 0;
  uint8_t nrBlocks = kRspSamplesPerPacket;
  uint32_t timestamp = 0;            ///< Unix seconds
  uint32_t blockSequenceNumber = 0;  ///< sample offset within the second

  int rspBoard() const { return sourceInfo1 & 0x1f; }
  bool payloadError() const { return (sourceInfo1 & 0x40) != 0; }
  int clockMHz() const { return (sourceInfo1 & 0x80) ? 200 : 160; }
  int bitsPerSample() const;  ///< 16, 8, 4, or 0 for an invalid mode
  int stationId() const { return station / 32; }
  RspStamp stamp() const { return {timestamp, blockSequenceNumber}; }

  void setClockMHz(int mhz);
  void setBitsPerSample(int bits);
  void setStationId(int id, int board = 0);

  /// Reads a header from at least 16 bytes (no validation).
  static RspHeader read(const uint8_t* bytes);
  void write(uint8_t* bytes) const;
};

/// Why a packet was rejected; each fault has its own reason.
enum class RspReject {
  kNone = 0,
  kTruncated,     ///< shorter than a header
  kVersion,       ///< version not 3 (or 2 with 16-bit samples)
  kClock,         ///< clock bit differs from the observation's clock
  kBitMode,       ///< bit mode invalid or differs from the observation's
  kBeamletCount,  ///< 0, above the maximum for the bit mode, or not what is expected
  kBlockCount,    ///< nrBlocks not 16
  kSize,          ///< datagram size differs from header + payload
  kPayloadError,  ///< the station flagged the payload as bad
  kTimestamp,     ///< timestamp 0xFFFFFFFF (no time yet) or sequence beyond the second
  kStation,       ///< station ID differs from the expected one
  // Implausible times: decided by the receiver (it knows the observation and the clock),
  // never by validateRspPacket().
  kBeforeObservation,  ///< samples long before the observation's start
  kAfterObservation,   ///< samples long after the observation's stop
  kAheadOfClock,       ///< real time: stamped ahead of the wall clock
};
constexpr int kNrRspRejects = 14;
const char* toString(RspReject reason);

/// What a receiver expects of its packets; zero fields are not checked.
struct RspExpectation {
  int clockMHz = 0;
  int bitsPerSample = 0;
  int nrBeamlets = 0;
  int stationId = 0;
};

/// Checks a datagram; on kNone, header holds its decoded header.
RspReject validateRspPacket(std::span<const uint8_t> datagram, const RspExpectation& expect,
                            RspHeader& header);

/// Maximum beamlets per packet: 61, 122, 244 for 16, 8, 4 bit.
int maxBeamlets(int bitsPerSample);
/// Bytes of one complex dual-polarisation sample (X and Y): 8, 4, 2.
int bytesPerDualPolSample(int bitsPerSample);
size_t rspPayloadSize(int bitsPerSample, int nrBeamlets, int nrBlocks = kRspSamplesPerPacket);
size_t rspPacketSize(int bitsPerSample, int nrBeamlets, int nrBlocks = kRspSamplesPerPacket);
/// Largest integer a component can hold in the bit mode (32767, 127, 7).
int maxSampleValue(int bitsPerSample);

/// Writes header and payload. samples: [beamlet][time][pol] complex integers that must
/// already fit the bit mode. out must hold rspPacketSize() bytes.
void encodeRspPacket(const RspHeader& header, const std::complex<int16_t>* samples, uint8_t* out);
/// Decodes a payload into samples[beamlet][time][pol].
void decodeRspPayload(const uint8_t* payload, int bitsPerSample, int nrBeamlets, int nrBlocks,
                      std::complex<int16_t>* samples);
/// Decodes one dual-polarisation sample (bytesPerDualPolSample bytes) into X and Y.
void decodeRspSample(const uint8_t* bytes, int bitsPerSample, std::complex<int16_t>& x,
                     std::complex<int16_t>& y);

}  // namespace rtcp
