#pragma once
/// \file Crc64.h
/// CRC-64/XZ (polynomial 0x42F0E1EBA9EA3693, reflected, init and xor-out all ones),
/// the specification being Boost.CRC (crc64Reference). Check value of "123456789":
/// 0x995DC9BBDF1939FA.

#include <cstddef>
#include <cstdint>

namespace rtcp {

/// Slicing-by-8 (about 4x Boost's byte-wise table), checked against crc64Reference.
uint64_t crc64(const void* data, size_t size);
/// The reference: Boost.CRC's crc_optimal with the CRC-64/XZ parameters.
uint64_t crc64Reference(const void* data, size_t size);

}  // namespace rtcp
