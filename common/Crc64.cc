#include "rtcp/Crc64.h"

#include <boost/crc.hpp>
#include <cstring>

#include "Crc64Tables.h"

namespace rtcp {

uint64_t crc64SlicingBy8(uint64_t previous, const void* data, size_t size) {
  return ~crc64internal::sliceBy8(~previous, static_cast<const uint8_t*>(data), size);
}

uint64_t crc64Update(uint64_t previous, const void* data, size_t size) {
  static const bool clmul = crc64HasClmul();
  return clmul ? crc64Clmul(previous, data, size) : crc64SlicingBy8(previous, data, size);
}

uint64_t crc64(const void* data, size_t size) { return crc64Update(0, data, size); }

uint64_t crc64Reference(const void* data, size_t size) {
  // CRC-64/XZ: reflected in and out, init and final xor all ones.
  boost::crc_optimal<64, 0x42F0E1EBA9EA3693ULL, ~0ULL, ~0ULL, true, true> crc;
  crc.process_bytes(data, size);
  return crc.checksum();
}

}  // namespace rtcp
