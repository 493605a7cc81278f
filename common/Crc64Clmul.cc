// CRC-64/XZ by folding with carry-less multiplication (PCLMULQDQ). A 16-byte lane holds
// its bytes' polynomial reflected: the low 8 bytes the coefficients of x^127 ... x^64
// before the lane's end, the high 8 of x^63 ... x^0. Folding a lane D bits forward
// multiplies its low half by x^(D+64) and its high half by x^D mod P; a carry-less
// product of two reflected 64-bit values reads as the product times x, hence the
// constants x^(D+63) and x^(D-1). Four lanes (64 bytes) are folded at a time, then into
// one lane, which (with the last bytes) goes through the slicing-by-8 tables.
#include "Crc64Tables.h"
#include "rtcp/Crc64.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace rtcp {

#if defined(__x86_64__)
namespace {

using crc64internal::xPowerModP;

/// The constants that fold a lane forward by bits: low half, high half.
struct FoldConstants {
  uint64_t low, high;
};
constexpr FoldConstants foldBy(int bits) { return {xPowerModP(bits + 63), xPowerModP(bits - 1)}; }
constexpr FoldConstants kFold64Bytes = foldBy(512), kFold16Bytes = foldBy(128);

__attribute__((target("sse2,pclmul"))) inline __m128i fold(__m128i lane, __m128i constants,
                                                           __m128i next) {
  const __m128i low = _mm_clmulepi64_si128(lane, constants, 0x00);
  const __m128i high = _mm_clmulepi64_si128(lane, constants, 0x11);
  return _mm_xor_si128(_mm_xor_si128(low, high), next);
}

__attribute__((target("sse2,pclmul"))) inline __m128i load(const uint8_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

/// The register (no init, no xor-out) after size >= 64 more bytes.
__attribute__((target("sse2,pclmul"))) uint64_t foldAll(uint64_t crc, const uint8_t* p,
                                                        size_t size) {
  const __m128i by64 = _mm_set_epi64x(int64_t(kFold64Bytes.high), int64_t(kFold64Bytes.low));
  const __m128i by16 = _mm_set_epi64x(int64_t(kFold16Bytes.high), int64_t(kFold16Bytes.low));
  __m128i x0 = _mm_xor_si128(load(p), _mm_cvtsi64_si128(int64_t(crc)));
  __m128i x1 = load(p + 16), x2 = load(p + 32), x3 = load(p + 48);
  p += 64;
  size -= 64;
  for (; size >= 64; p += 64, size -= 64) {
    x0 = fold(x0, by64, load(p));
    x1 = fold(x1, by64, load(p + 16));
    x2 = fold(x2, by64, load(p + 32));
    x3 = fold(x3, by64, load(p + 48));
  }
  __m128i x = fold(fold(fold(x0, by16, x1), by16, x2), by16, x3);
  for (; size >= 16; p += 16, size -= 16) x = fold(x, by16, load(p));
  alignas(16) uint8_t lane[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(lane), x);
  return crc64internal::sliceBy8(crc64internal::sliceBy8(0, lane, 16), p, size);
}

}  // namespace

bool crc64HasClmul() { return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse2"); }

uint64_t crc64Clmul(uint64_t previous, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  if (size < 64 || !crc64HasClmul()) return crc64SlicingBy8(previous, data, size);
  return ~foldAll(~previous, p, size);
}

#else

bool crc64HasClmul() { return false; }
uint64_t crc64Clmul(uint64_t previous, const void* data, size_t size) {
  return crc64SlicingBy8(previous, data, size);
}

#endif

}  // namespace rtcp
