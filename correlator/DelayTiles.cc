#include "DelayTiles.h"

#include <immintrin.h>

// GCC 12 warns about the _mm512_undefined_ps() inside its own shuffle intrinsics (GCC bug
// 105593); the warning says nothing about this file.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace rtcp::correlator::tiles {

namespace {

/// In-place transpose of a 16 x 16 float matrix held in 16 registers, except that within
/// each group of four the columns come out in the order 0 2 1 3: r[4g + 1] holds column
/// 4g + 2 and r[4g + 2] column 4g + 1.
__attribute__((target("avx512f"), always_inline)) inline void transpose16(__m512* r) {
  __m512 t[16];
  for (int i = 0; i < 16; i += 2) {  // interleave pairs of rows
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4)
    for (int j = 0; j < 2; ++j) {  // 64-bit pairs
      r[i + j] = _mm512_castpd_ps(
          _mm512_unpacklo_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
      r[i + j + 2] = _mm512_castpd_ps(
          _mm512_unpackhi_pd(_mm512_castps_pd(t[i + j]), _mm512_castps_pd(t[i + j + 2])));
    }
  for (int i = 0; i < 16; i += 8)
    for (int j = 0; j < 4; ++j) {  // 128-bit quarters
      t[i + j] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0x88);
      t[i + j + 4] = _mm512_shuffle_f32x4(r[i + j], r[i + j + 4], 0xdd);
    }
  for (int j = 0; j < 8; ++j) {  // 256-bit halves
    r[j] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0x88);
    r[j + 8] = _mm512_shuffle_f32x4(t[j], t[j + 8], 0xdd);
  }
}

#define RTCP_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

/// In-place transpose of an 8 x 8 float matrix held in 8 registers.
RTCP_AVX2 void transpose8(__m256* r) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {  // interleave pairs of rows
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  __m256 u[8];
  for (int i = 0; i < 8; i += 4) {  // 64-bit pairs
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int j = 0; j < 4; ++j) {  // 128-bit halves
    r[j] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x20);
    r[j + 4] = _mm256_permute2f128_ps(u[j], u[j + 4], 0x31);
  }
}

/// All ones in lane k where bit k of `bits` is set.
RTCP_AVX2 __m256 laneMask(uint32_t bits) {
  const __m256i lanes = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i set = _mm256_and_si256(_mm256_set1_epi32(int(bits)), lanes);
  return _mm256_castsi256_ps(_mm256_cmpeq_epi32(set, lanes));
}

/// What both tiles inline (AVX2 without FMA: a subset of the AVX-512 tile's target too).
#define RTCP_AVX2_NO_FMA __attribute__((target("avx2"), always_inline)) inline

/// The 8 lanes' part of CellPowers.h's tree: (h0 + h4, h1 + h5, ...), then (q0 + q2) +
/// (q1 + q3).
RTCP_AVX2_NO_FMA float reduceHalf(__m256 half) {
  const __m128 quarter = _mm_add_ps(_mm256_castps256_ps128(half), _mm256_extractf128_ps(half, 1));
  const __m128 pairs = _mm_add_ps(quarter, _mm_movehl_ps(quarter, quarter));  // q0+q2, q1+q3
  return _mm_cvtss_f32(_mm_add_ss(pairs, _mm_shuffle_ps(pairs, pairs, 1)));
}

/// x², rounded before any addition: the empty asm hides the product, so that the compiler
/// cannot fuse it with the addition after it (CellPowers.cc is compiled without fusing).
RTCP_AVX2_NO_FMA __m256 square(__m256 x) {
  __m256 p = _mm256_mul_ps(x, x);
  asm("" : "+v"(p));
  return p;
}

/// ((x re² + x im²) + y re²) + y im², lane by lane: CellPowers.h's order and rounding.
RTCP_AVX2_NO_FMA __m256 spectrumPowers(__m256 xRe, __m256 xIm, __m256 yRe, __m256 yIm) {
  __m256 p = _mm256_add_ps(square(xRe), square(xIm));
  p = _mm256_add_ps(p, square(yRe));
  return _mm256_add_ps(p, square(yIm));
}

#define RTCP_AVX512 __attribute__((target("avx512f"), always_inline)) inline

RTCP_AVX512 __m512 square(__m512 x) {
  __m512 p = _mm512_mul_ps(x, x);
  asm("" : "+v"(p));
  return p;
}

/// out[c * stride] = the sum of powers[c]'s 16 lanes, c < 4, in CellPowers.h's tree (l[i] +
/// l[i + 8], then h[i] + h[i + 4], then (q0 + q2) + (q1 + q3)), the four channels at once.
RTCP_AVX512 void sumFourChannels(const __m512* powers, float* out, size_t stride) {
  // 16 -> 8: [c0 lanes 0-7 | c1 lanes 0-7] + [c0 lanes 8-15 | c1 lanes 8-15], and c2, c3
  const __m512 h01 = _mm512_add_ps(_mm512_shuffle_f32x4(powers[0], powers[1], 0x44),
                                   _mm512_shuffle_f32x4(powers[0], powers[1], 0xee));
  const __m512 h23 = _mm512_add_ps(_mm512_shuffle_f32x4(powers[2], powers[3], 0x44),
                                   _mm512_shuffle_f32x4(powers[2], powers[3], 0xee));
  // 8 -> 4: quarter c = [h_c 0-3] + [h_c 4-7]
  const __m512 q =
      _mm512_add_ps(_mm512_shuffle_f32x4(h01, h23, 0x88), _mm512_shuffle_f32x4(h01, h23, 0xdd));
  // (q0 + q2) + (q1 + q3) in lane 0 of each quarter
  const __m512 pairs = _mm512_add_ps(q, _mm512_permute_ps(q, 0x4e));
  const __m512 sums = _mm512_add_ps(pairs, _mm512_permute_ps(pairs, 0xb1));
  alignas(16) float four[4];
  _mm_store_ps(four, _mm512_castps512_ps128(_mm512_maskz_compress_ps(0x1111, sums)));
  for (int c = 0; c < 4; ++c) out[size_t(c) * stride] = four[c];
}

RTCP_AVX512 __m512 spectrumPowers(__m512 xRe, __m512 xIm, __m512 yRe, __m512 yIm) {
  __m512 p = _mm512_add_ps(square(xRe), square(xIm));
  p = _mm512_add_ps(p, square(yRe));
  return _mm512_add_ps(p, square(yIm));
}

}  // namespace

__attribute__((target("avx2,fma"))) void rotateTileAvx2(const float* in, size_t spectrumStride,
                                                        const float* baseRe, const float* baseIm,
                                                        const float* powerRe, const float* powerIm,
                                                        uint32_t valid, float* out,
                                                        size_t rowStride, float* cellPower,
                                                        size_t cellStride) {
  __m256 firstHalf[4];                      // [channel]: spectra 0 .. 7's powers
  for (int half = 0; half < 2; ++half)      // spectra 8 half .. 8 half + 7
    for (int pair = 0; pair < 2; ++pair) {  // channels 2 pair, 2 pair + 1
      __m256 r[8];  // r[spectrum][channel][pol][reim], then r[channel][pol][reim][spectrum]
      for (int s = 0; s < 8; ++s)
        r[s] = _mm256_loadu_ps(in + (8 * half + s) * spectrumStride + 8 * pair);
      transpose8(r);
      const __m256 mask = laneMask(valid >> (8 * half));
      for (int local = 0; local < 2; ++local) {
        const int c = 2 * pair + local;
        const __m256 br = _mm256_set1_ps(baseRe[c]), bi = _mm256_set1_ps(baseIm[c]);
        const __m256 wr = _mm256_loadu_ps(powerRe + 16 * c + 8 * half),
                     wi = _mm256_loadu_ps(powerIm + 16 * c + 8 * half);
        const __m256 pr = _mm256_and_ps(mask, _mm256_fmsub_ps(br, wr, _mm256_mul_ps(bi, wi)));
        const __m256 pi = _mm256_and_ps(mask, _mm256_fmadd_ps(br, wi, _mm256_mul_ps(bi, wr)));
        __m256 rows[4];  // [pol][reim]: 8 spectra
        for (int pol = 0; pol < 2; ++pol) {
          const __m256 re = r[4 * local + 2 * pol], im = r[4 * local + 2 * pol + 1];
          float* row = out + (4 * c + 2 * pol) * rowStride + 8 * half;
          rows[2 * pol] = _mm256_fmsub_ps(re, pr, _mm256_mul_ps(im, pi));
          rows[2 * pol + 1] = _mm256_fmadd_ps(re, pi, _mm256_mul_ps(im, pr));
          _mm256_storeu_ps(row, rows[2 * pol]);
          _mm256_storeu_ps(row + rowStride, rows[2 * pol + 1]);
        }
        if (!cellPower) continue;
        const __m256 powers = spectrumPowers(rows[0], rows[1], rows[2], rows[3]);
        if (half == 0)
          firstHalf[c] = powers;
        else
          cellPower[size_t(c) * cellStride] = reduceHalf(_mm256_add_ps(firstHalf[c], powers));
      }
    }
}

__attribute__((target("avx512f"))) void rotateTileAvx512(const float* in, size_t spectrumStride,
                                                         const float* baseRe, const float* baseIm,
                                                         const float* powerRe, const float* powerIm,
                                                         uint32_t valid, float* out,
                                                         size_t rowStride, float* cellPower,
                                                         size_t cellStride) {
  __m512 r[16];  // r[spectrum][channel][pol][reim], then r[channel][pol][reim][spectrum]
  for (int s = 0; s < 16; ++s) r[s] = _mm512_loadu_ps(in + s * spectrumStride);
  transpose16(r);
  const __mmask16 mask = __mmask16(valid);
  __m512 powers[4];  // [channel]: the power of each of the tile's 16 spectra
  for (int c = 0; c < 4; ++c) {
    // the phasors of the tile's 16 spectra: base x power, zero where flagged
    const __m512 br = _mm512_set1_ps(baseRe[c]), bi = _mm512_set1_ps(baseIm[c]);
    const __m512 wr = _mm512_loadu_ps(powerRe + 16 * c), wi = _mm512_loadu_ps(powerIm + 16 * c);
    const __m512 pr =
        _mm512_maskz_mov_ps(mask, _mm512_sub_ps(_mm512_mul_ps(br, wr), _mm512_mul_ps(bi, wi)));
    const __m512 pi =
        _mm512_maskz_mov_ps(mask, _mm512_add_ps(_mm512_mul_ps(br, wi), _mm512_mul_ps(bi, wr)));
    __m512 rows[4];  // [pol][reim]: the tile's 16 spectra
    for (int pol = 0; pol < 2; ++pol) {
      // columns 4c + 2 pol (re) and 4c + 2 pol + 1 (im), in transpose16's order
      const __m512 re = r[4 * c + pol], im = r[4 * c + 2 + pol];
      float* row = out + (4 * c + 2 * pol) * rowStride;
      rows[2 * pol] = _mm512_fmsub_ps(re, pr, _mm512_mul_ps(im, pi));
      rows[2 * pol + 1] = _mm512_fmadd_ps(re, pi, _mm512_mul_ps(im, pr));
      _mm512_storeu_ps(row, rows[2 * pol]);
      _mm512_storeu_ps(row + rowStride, rows[2 * pol + 1]);
    }
    if (cellPower) powers[c] = spectrumPowers(rows[0], rows[1], rows[2], rows[3]);
  }
  if (cellPower) sumFourChannels(powers, cellPower, cellStride);
}

}  // namespace rtcp::correlator::tiles
