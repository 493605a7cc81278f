// Register tiles of the correlator, compiled for each instruction set through target
// attributes (the rest of the program stays baseline x86-64).
#include "CorrelatorTiles.h"

#include <immintrin.h>

// GCC 12 warns about the _mm512_undefined_ps() inside its own shuffle intrinsics (GCC bug
// 105593); the warning says nothing about this file.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace rtcp::correlator::tiles {

namespace {

// Row offsets within a station's [pol][reim][time] block.
inline int row(int pol, int reim, int stride) { return (2 * pol + reim) * stride; }

/// Writes or adds the 4 products of a baseline.
inline void store(const std::complex<float>* products, bool accumulate, std::complex<float>* out) {
  for (int pol = 0; pol < 4; ++pol)
    out[pol] = accumulate ? out[pol] + products[pol] : products[pol];
}

}  // namespace

// ---- AVX-512: 16 time samples per register ----------------------------------------------

#define RTCP_AVX512 __attribute__((target("avx512f"), always_inline)) inline

/// Sum of the 16 lanes (shuffles only).
RTCP_AVX512 float sum512(__m512 v) {
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0x4e));  // swap 256-bit halves
  v = _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xb1));  // swap 128-bit quarters
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0x4e));        // swap pairs
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xb1));        // swap neighbours
  return _mm512_cvtss_f32(v);
}

/// The lane sums of 16 registers in one register (a transposing tree: 15 adds, 30
/// shuffles); the sum of v[k] lands in lane kSum16Lane[k].
constexpr int kSum16Lane[16] = {0, 2, 1, 3, 8, 10, 9, 11, 4, 6, 5, 7, 12, 14, 13, 15};
RTCP_AVX512 __m512 sum16(const __m512* v) {
  __m512 w[8], u[4], s[2];
  for (int k = 0; k < 8; ++k)  // 256-bit halves
    w[k] = _mm512_add_ps(_mm512_shuffle_f32x4(v[k], v[k + 8], 0x44),
                         _mm512_shuffle_f32x4(v[k], v[k + 8], 0xee));
  for (int k = 0; k < 4; ++k)  // 128-bit quarters
    u[k] = _mm512_add_ps(_mm512_shuffle_f32x4(w[k], w[k + 4], 0x88),
                         _mm512_shuffle_f32x4(w[k], w[k + 4], 0xdd));
  for (int k = 0; k < 2; ++k)  // pairs within quarters
    s[k] = _mm512_add_ps(_mm512_shuffle_ps(u[k], u[k + 2], 0x44),
                         _mm512_shuffle_ps(u[k], u[k + 2], 0xee));
  return _mm512_add_ps(_mm512_shuffle_ps(s[0], s[1], 0x88), _mm512_shuffle_ps(s[0], s[1], 0xdd));
}

/// acc_re += ar br + ai bi; acc_im += ai br - ar bi  (a conj(b)), the products formed off
/// the accumulators' chains, which then hold one add per step (as cmac256): with two
/// chained FMAs per step, one baseline's 8 accumulators ran at 0.80 of the FMA peak in L1
/// on Zen 5, latency-bound; so, 0.86-0.89 (the adds have pipes of their own). The pair
/// tile's 16 accumulators run at the peak from L2 either way.
RTCP_AVX512 void cmacOffChain512(__m512 ar, __m512 ai, __m512 br, __m512 bi, __m512& re,
                                 __m512& im) {
  re = _mm512_add_ps(re, _mm512_fmadd_ps(ar, br, _mm512_mul_ps(ai, bi)));
  im = _mm512_add_ps(im, _mm512_fnmadd_ps(ar, bi, _mm512_mul_ps(ai, br)));
}

__attribute__((target("avx512f"))) void singleAvx512(const float* a, const float* b, Span span,
                                                     std::complex<float>* out) {
  const int n = span.stride;
  __m512 re[4], im[4];
  for (int i = 0; i < 4; ++i) re[i] = im[i] = _mm512_setzero_ps();
  for (int t = 0; t < span.length; t += 16) {
    const __m512 br0 = _mm512_load_ps(b + row(0, 0, n) + t),
                 bi0 = _mm512_load_ps(b + row(0, 1, n) + t);
    const __m512 br1 = _mm512_load_ps(b + row(1, 0, n) + t),
                 bi1 = _mm512_load_ps(b + row(1, 1, n) + t);
#pragma GCC unroll 2
    for (int p = 0; p < 2; ++p) {
      const __m512 ar = _mm512_load_ps(a + row(p, 0, n) + t),
                   ai = _mm512_load_ps(a + row(p, 1, n) + t);
      cmacOffChain512(ar, ai, br0, bi0, re[2 * p], im[2 * p]);
      cmacOffChain512(ar, ai, br1, bi1, re[2 * p + 1], im[2 * p + 1]);
    }
  }
  std::complex<float> products[4];
  for (int i = 0; i < 4; ++i) products[i] = {sum512(re[i]), sum512(im[i])};
  store(products, span.accumulate, out);
}

/// The 8 accumulators of one baseline of a pair tile: re[P][Q], then im[P][Q].
struct Acc512 {
  __m512 re0, re1, re2, re3, im0, im1, im2, im3;
};

/// One time step of one baseline: a's rows (P = 0, 1) against b's.
RTCP_AVX512 void stepBaseline512(__m512 ar0, __m512 ai0, __m512 ar1, __m512 ai1, const float* b,
                                 int n, int t, Acc512& acc) {
  const __m512 br0 = _mm512_load_ps(b + row(0, 0, n) + t),
               bi0 = _mm512_load_ps(b + row(0, 1, n) + t);
  cmacOffChain512(ar0, ai0, br0, bi0, acc.re0, acc.im0);
  cmacOffChain512(ar1, ai1, br0, bi0, acc.re2, acc.im2);
  const __m512 br1 = _mm512_load_ps(b + row(1, 0, n) + t),
               bi1 = _mm512_load_ps(b + row(1, 1, n) + t);
  cmacOffChain512(ar0, ai0, br1, bi1, acc.re1, acc.im1);
  cmacOffChain512(ar1, ai1, br1, bi1, acc.re3, acc.im3);
}

__attribute__((target("avx512f"))) void pairAvx512(const float* a, const float* b0, const float* b1,
                                                   Span span, std::complex<float>* out0,
                                                   std::complex<float>* out1) {
  const int n = span.stride;
  const __m512 zero = _mm512_setzero_ps();
  Acc512 x{zero, zero, zero, zero, zero, zero, zero, zero}, y = x;  // (a, b0), (a, b1)
  for (int t = 0; t < span.length; t += 16) {
    const __m512 ar0 = _mm512_load_ps(a + row(0, 0, n) + t),
                 ai0 = _mm512_load_ps(a + row(0, 1, n) + t);
    const __m512 ar1 = _mm512_load_ps(a + row(1, 0, n) + t),
                 ai1 = _mm512_load_ps(a + row(1, 1, n) + t);
    stepBaseline512(ar0, ai0, ar1, ai1, b0, n, t, x);
    stepBaseline512(ar0, ai0, ar1, ai1, b1, n, t, y);
  }
  // Registers in kSum16Lane's order: re of (a, b0), re of (a, b1), im of (a, b0), im of (a, b1).
  const __m512 acc[16] = {x.re0, x.re1, x.re2, x.re3, y.re0, y.re1, y.re2, y.re3,
                          x.im0, x.im1, x.im2, x.im3, y.im0, y.im1, y.im2, y.im3};
  alignas(64) float sums[16];
  _mm512_store_ps(sums, sum16(acc));
  std::complex<float> products0[4], products1[4];
  for (int i = 0; i < 4; ++i) {
    products0[i] = {sums[kSum16Lane[i]], sums[kSum16Lane[8 + i]]};
    products1[i] = {sums[kSum16Lane[4 + i]], sums[kSum16Lane[12 + i]]};
  }
  store(products0, span.accumulate, out0);
  store(products1, span.accumulate, out1);
}

// ---- AVX2: 8 time samples per register, 1 x 1 tiles -----------------------------------------

#define RTCP_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

/// re += ar br + ai bi; im += ai br - ar bi  (a conj(b)). The products are formed off the
/// accumulators' chains, which hold one add per step: 8 accumulators of two chained FMAs
/// (latency 4 on Zen 3) would need every FMA on time to keep both FMA pipes busy, whereas
/// the adds run on their own pipes (measured in L1: 0.94 of the FMA peak against 0.83).
RTCP_AVX2 void cmac256(__m256 ar, __m256 ai, __m256 br, __m256 bi, __m256& re, __m256& im) {
  re = _mm256_add_ps(re, _mm256_fmadd_ps(ar, br, _mm256_mul_ps(ai, bi)));
  im = _mm256_add_ps(im, _mm256_fnmadd_ps(ar, bi, _mm256_mul_ps(ai, br)));
}

/// out[k] = (sum of re[k]'s lanes, sum of im[k]'s lanes), k = 0..3: pairwise adds that
/// leave each (re, im) side by side, so two complex sums are stored at once.
RTCP_AVX2 void storeSums256(const __m256* re, const __m256* im, bool accumulate,
                            std::complex<float>* out) {
  for (int k = 0; k < 4; k += 2) {
    const __m256 sums =
        _mm256_hadd_ps(_mm256_hadd_ps(re[k], im[k]), _mm256_hadd_ps(re[k + 1], im[k + 1]));
    __m128 products = _mm_add_ps(_mm256_castps256_ps128(sums), _mm256_extractf128_ps(sums, 1));
    float* to = reinterpret_cast<float*>(out + k);
    if (accumulate) products = _mm_add_ps(products, _mm_loadu_ps(to));
    _mm_storeu_ps(to, products);
  }
}

__attribute__((target("avx2,fma"))) void singleAvx2(const float* a, const float* b, Span span,
                                                    std::complex<float>* out) {
  const int n = span.stride;
  __m256 re[4], im[4];
  for (int i = 0; i < 4; ++i) re[i] = im[i] = _mm256_setzero_ps();
#pragma GCC unroll 2
  for (int t = 0; t < span.length; t += 8) {
    const __m256 br0 = _mm256_load_ps(b + row(0, 0, n) + t),
                 bi0 = _mm256_load_ps(b + row(0, 1, n) + t);
    const __m256 br1 = _mm256_load_ps(b + row(1, 0, n) + t),
                 bi1 = _mm256_load_ps(b + row(1, 1, n) + t);
#pragma GCC unroll 2
    for (int p = 0; p < 2; ++p) {
      const __m256 ar = _mm256_load_ps(a + row(p, 0, n) + t),
                   ai = _mm256_load_ps(a + row(p, 1, n) + t);
      cmac256(ar, ai, br0, bi0, re[2 * p], im[2 * p]);
      cmac256(ar, ai, br1, bi1, re[2 * p + 1], im[2 * p + 1]);
    }
  }
  storeSums256(re, im, span.accumulate, out);
}

// ---- Plain C++ ---------------------------------------------------------------------------

void singleGeneric(const float* a, const float* b, Span span, std::complex<float>* out) {
  const int n = span.stride;
  std::complex<float> products[4];
  for (int p = 0; p < 2; ++p)
    for (int q = 0; q < 2; ++q) {
      const float *ar = a + row(p, 0, n), *ai = a + row(p, 1, n);
      const float *br = b + row(q, 0, n), *bi = b + row(q, 1, n);
      float re = 0, im = 0;
#pragma omp simd reduction(+ : re, im)
      for (int t = 0; t < span.length; ++t) {
        re += ar[t] * br[t] + ai[t] * bi[t];
        im += ai[t] * br[t] - ar[t] * bi[t];
      }
      products[2 * p + q] = {re, im};
    }
  store(products, span.accumulate, out);
}

}  // namespace rtcp::correlator::tiles
