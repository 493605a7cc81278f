#pragma once
/// \file Crc64.h
/// CRC-64/XZ (polynomial 0x42F0E1EBA9EA3693, reflected, init and xor-out all ones),
/// the specification being Boost.CRC (crc64Reference). Check value of "123456789":
/// 0x995DC9BBDF1939FA.

#include <cstddef>
#include <cstdint>

namespace rtcp {

/// The fastest this CPU has: carry-less multiplication (crc64Clmul) where the CPU has
/// PCLMULQDQ, else slicing-by-8. Checked against crc64Reference.
uint64_t crc64(const void* data, size_t size);
/// The CRC of the bytes that follow bytes whose CRC is previous (0 for none): crc64 of a
/// message is crc64Update of its parts in order, starting from 0.
uint64_t crc64Update(uint64_t previous, const void* data, size_t size);
/// Slicing-by-8 (about 4x Boost's byte-wise table, ~1 GB/s), on every CPU.
uint64_t crc64SlicingBy8(uint64_t previous, const void* data, size_t size);
/// Folding 64 bytes at a time with PCLMULQDQ (Intel, "Fast CRC computation for generic
/// polynomials using PCLMULQDQ", 2009), ~10x slicing-by-8; only where
/// crc64HasClmul() (falls back to slicing-by-8 elsewhere).
uint64_t crc64Clmul(uint64_t previous, const void* data, size_t size);
bool crc64HasClmul();
/// The reference: Boost.CRC's crc_optimal with the CRC-64/XZ parameters.
uint64_t crc64Reference(const void* data, size_t size);

}  // namespace rtcp
