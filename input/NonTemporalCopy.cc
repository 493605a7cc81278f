#include "NonTemporalCopy.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace rtcp::ion {
namespace {

const bool kHasAvx512 = __builtin_cpu_supports("avx512f");

__attribute__((target("avx512f"))) void copyAvx512(uint8_t* dst, const uint8_t* src, size_t n) {
  const size_t head = std::min(n, (64 - reinterpret_cast<uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, head);
  size_t i = head;
  for (; i + 256 <= n; i += 256) {  // four lines in flight
    const __m512i a = _mm512_loadu_si512(src + i), b = _mm512_loadu_si512(src + i + 64),
                  c = _mm512_loadu_si512(src + i + 128), d = _mm512_loadu_si512(src + i + 192);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), a);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 64), b);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 128), c);
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i + 192), d);
  }
  for (; i + 64 <= n; i += 64)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i), _mm512_loadu_si512(src + i));
  std::memcpy(dst + i, src + i, n - i);
}

}  // namespace

void copyNonTemporalAnySize(uint8_t* dst, const uint8_t* src, size_t n) {
  if (kHasAvx512)
    copyAvx512(dst, src, n);
  else
    std::memcpy(dst, src, n);
}

void copyNonTemporal(uint8_t* dst, const uint8_t* src, size_t n) {
  if (n >= kMinNonTemporalBytes)
    copyNonTemporalAnySize(dst, src, n);
  else
    std::memcpy(dst, src, n);
}

void nonTemporalFence() { _mm_sfence(); }

}  // namespace rtcp::ion
