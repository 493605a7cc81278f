#pragma once
/// \file Crc64.h
/// CRC-64/XZ (polynomial 0x42F0E1EBA9EA3693, reflected, init and xor-out all ones),
/// computed with Boost.CRC. Check value of "123456789": 0x995DC9BBDF1939FA.

#include <cstddef>
#include <cstdint>

namespace rtcp {

uint64_t crc64(const void* data, size_t size);

}  // namespace rtcp
