#pragma once
/// \file Crc64Tables.h
/// CRC-64/XZ internals shared by the slicing-by-8 and the carry-less implementations:
/// the tables, the register update without init and xor-out, and x^n mod P. A register
/// holds the polynomial reflected: bit i is the coefficient of x^(63 - i).

#include <array>
#include <cstdint>
#include <cstring>

namespace rtcp::crc64internal {

constexpr uint64_t kReflectedPolynomial = 0xC96C5795D7870F42ULL;  // 0x42F0E1EBA9EA3693 reversed

/// tables[k][b]: the CRC of byte b followed by k zero bytes (slicing-by-8).
using Tables = std::array<std::array<uint64_t, 256>, 8>;

constexpr Tables makeTables() {
  Tables t{};
  for (int b = 0; b < 256; ++b) {
    uint64_t c = uint64_t(b);
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
    t[0][b] = c;
  }
  for (int k = 1; k < 8; ++k)
    for (int b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xff];
  return t;
}

inline constexpr Tables kTables = makeTables();

/// The register after size more bytes (no init, no xor-out).
inline uint64_t sliceBy8(uint64_t crc, const uint8_t* p, size_t size) {
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // little-endian host: byte 0 in the low bits
    word ^= crc;
    crc = kTables[7][word & 0xff] ^ kTables[6][(word >> 8) & 0xff] ^
          kTables[5][(word >> 16) & 0xff] ^ kTables[4][(word >> 24) & 0xff] ^
          kTables[3][(word >> 32) & 0xff] ^ kTables[2][(word >> 40) & 0xff] ^
          kTables[1][(word >> 48) & 0xff] ^ kTables[0][word >> 56];
  }
  for (; size > 0; ++p, --size) crc = kTables[0][(crc ^ *p) & 0xff] ^ (crc >> 8);
  return crc;
}

/// x^n mod P, reflected (multiplying by x shifts a reflected register right).
constexpr uint64_t xPowerModP(int n) {
  uint64_t r = 1ULL << 63;  // x^0
  for (int i = 0; i < n; ++i) r = (r & 1) ? (r >> 1) ^ kReflectedPolynomial : r >> 1;
  return r;
}

}  // namespace rtcp::crc64internal
