#pragma once
/// \file LittleEndian.h
/// Integers at byte offsets of little-endian wire headers (CorrelatedBlock.h,
/// BeamFormedWire.h), whatever the host's order.

#include <cstddef>
#include <cstdint>

namespace rtcp::wire {

template <typename T>
void put(uint8_t* bytes, size_t offset, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) bytes[offset + i] = uint8_t(uint64_t(value) >> (8 * i));
}

template <typename T>
T get(const uint8_t* bytes, size_t offset) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= uint64_t(bytes[offset + i]) << (8 * i);
  return T(value);
}

}  // namespace rtcp::wire
