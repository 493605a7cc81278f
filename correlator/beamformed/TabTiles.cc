#include "TabTiles.h"

#include <immintrin.h>

namespace rtcp::correlator::beamformed::tiles {

namespace {

#define RTCP_AVX512 __attribute__((target("avx512f"), always_inline)) inline
#define RTCP_AVX2 __attribute__((target("avx2,fma"), always_inline)) inline

/// kTabs TABs x kVectors x 16 samples from sample t0: per station 2 kVectors loads,
/// 2 kTabs broadcasts and 4 kTabs kVectors FMAs into the 2 kTabs kVectors accumulators.
template <int kTabs, int kVectors>
RTCP_AVX512 void tileAvx512(const Rows& rows, int firstTab, int t0) {
  __m512 re[kTabs][kVectors], im[kTabs][kVectors];
#pragma GCC unroll 8
  for (int t = 0; t < kTabs; ++t)
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) re[t][v] = im[t][v] = _mm512_setzero_ps();
  const float* w = rows.weights + 2 * firstTab;
  const size_t weightStride = 2 * size_t(rows.nrTabs);
  for (int s = 0; s < rows.nrStations; ++s, w += weightStride) {
    const float* x = rows.stations[s] + t0;
    __m512 xr[kVectors], xi[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      xr[v] = _mm512_loadu_ps(x + 16 * v);
      xi[v] = _mm512_loadu_ps(x + rows.imOffset + 16 * v);
    }
#pragma GCC unroll 8
    for (int t = 0; t < kTabs; ++t) {
      const __m512 wr = _mm512_set1_ps(w[2 * t]), wi = _mm512_set1_ps(w[2 * t + 1]);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) {
        re[t][v] = _mm512_fmadd_ps(wr, xr[v], re[t][v]);
        im[t][v] = _mm512_fmadd_ps(wr, xi[v], im[t][v]);
        re[t][v] = _mm512_fnmadd_ps(wi, xi[v], re[t][v]);
        im[t][v] = _mm512_fmadd_ps(wi, xr[v], im[t][v]);
      }
    }
  }
#pragma GCC unroll 8
  for (int t = 0; t < kTabs; ++t) {
    float* out = rows.beams + size_t(firstTab + t) * rows.tabStride + t0;
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      _mm512_stream_ps(out + 16 * v, re[t][v]);
      _mm512_stream_ps(out + rows.imOffset + 16 * v, im[t][v]);
    }
  }
}

template <int kVectors>
RTCP_AVX512 void tileOfAvx512(const Rows& rows, int tab, int size, int t0) {
  switch (size) {
    case 6:
      tileAvx512<6, kVectors>(rows, tab, t0);
      break;
    case 5:
      tileAvx512<5, kVectors>(rows, tab, t0);
      break;
    case 4:
      tileAvx512<4, kVectors>(rows, tab, t0);
      break;
    case 3:
      tileAvx512<3, kVectors>(rows, tab, t0);
      break;
    case 2:
      tileAvx512<2, kVectors>(rows, tab, t0);
      break;
    default:
      tileAvx512<1, kVectors>(rows, tab, t0);
      break;
  }
}

/// Every TAB from sample t0, in tiles of at most 6 (24 accumulators of 32 registers) made
/// as even as they can be: 8 TABs as 4 + 4, not 6 + 2 (a tile of few TABs spends its
/// loads on few FMAs).
template <int kVectors>
RTCP_AVX512 void tabsAvx512(const Rows& rows, int t0) {
  constexpr int kMostTabs = 6;
  const int tiles = (rows.nrTabs + kMostTabs - 1) / kMostTabs;
  const int base = rows.nrTabs / tiles, larger = rows.nrTabs % tiles;
  int tab = 0;
  for (int i = 0; i < tiles; ++i) {
    const int size = base + (i < larger ? 1 : 0);
    tileOfAvx512<kVectors>(rows, tab, size, t0);
    tab += size;
  }
}

template <int kTabs>
RTCP_AVX2 void tileAvx2(const Rows& rows, int firstTab, int t0) {
  constexpr int kVectors = 2;  // 16 samples
  __m256 re[kTabs][kVectors], im[kTabs][kVectors];
#pragma GCC unroll 2
  for (int t = 0; t < kTabs; ++t)
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) re[t][v] = im[t][v] = _mm256_setzero_ps();
  const float* w = rows.weights + 2 * firstTab;
  const size_t weightStride = 2 * size_t(rows.nrTabs);
  for (int s = 0; s < rows.nrStations; ++s, w += weightStride) {
    const float* x = rows.stations[s] + t0;
    __m256 xr[kVectors], xi[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      xr[v] = _mm256_loadu_ps(x + 8 * v);
      xi[v] = _mm256_loadu_ps(x + rows.imOffset + 8 * v);
    }
#pragma GCC unroll 2
    for (int t = 0; t < kTabs; ++t) {
      const __m256 wr = _mm256_broadcast_ss(w + 2 * t), wi = _mm256_broadcast_ss(w + 2 * t + 1);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) {
        re[t][v] = _mm256_fmadd_ps(wr, xr[v], re[t][v]);
        im[t][v] = _mm256_fmadd_ps(wr, xi[v], im[t][v]);
        re[t][v] = _mm256_fnmadd_ps(wi, xi[v], re[t][v]);
        im[t][v] = _mm256_fmadd_ps(wi, xr[v], im[t][v]);
      }
    }
  }
#pragma GCC unroll 2
  for (int t = 0; t < kTabs; ++t) {
    float* out = rows.beams + size_t(firstTab + t) * rows.tabStride + t0;
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) {
      _mm256_stream_ps(out + 8 * v, re[t][v]);
      _mm256_stream_ps(out + rows.imOffset + 8 * v, im[t][v]);
    }
  }
}

}  // namespace

// Time outermost: the 32 samples of every station (N x 256 bytes) stay in L1 while every
// TAB tile is formed from them; the weights come from L1 or L2. The beams are written with
// streaming stores (64-byte aligned rows): they are not read again soon, and ordinary
// stores would read every line first (with 32 TABs and more, 0.55-0.8 of the FMA peak
// became 0.88-1.0 on an AVX-512 Zen, one thread per CPU second).
__attribute__((target("avx512f"))) void formAvx512(const Rows& rows, int begin, int end) {
  int t0 = begin;
  for (; t0 + 32 <= end; t0 += 32) tabsAvx512<2>(rows, t0);
  for (; t0 < end; t0 += 16) tabsAvx512<1>(rows, t0);
  _mm_sfence();  // the beams were written with streaming stores
}

__attribute__((target("avx2,fma"))) void formAvx2(const Rows& rows, int begin, int end) {
  for (int t0 = begin; t0 < end; t0 += 16) {
    int tab = 0;
    for (; tab + 2 <= rows.nrTabs; tab += 2) tileAvx2<2>(rows, tab, t0);
    if (tab < rows.nrTabs) tileAvx2<1>(rows, tab, t0);
  }
  _mm_sfence();
}

void formGeneric(const Rows& rows, int begin, int end) {
  for (int tab = 0; tab < rows.nrTabs; ++tab) {
    float* re = rows.beams + size_t(tab) * rows.tabStride;
    float* im = re + rows.imOffset;
    for (int t = begin; t < end; ++t) re[t] = im[t] = 0;
    for (int s = 0; s < rows.nrStations; ++s) {
      const float wr = rows.weights[2 * (size_t(s) * rows.nrTabs + tab)];
      const float wi = rows.weights[2 * (size_t(s) * rows.nrTabs + tab) + 1];
      const float* xr = rows.stations[s];
      const float* xi = xr + rows.imOffset;
      for (int t = begin; t < end; ++t) {
        re[t] += wr * xr[t] - wi * xi[t];
        im[t] += wr * xi[t] + wi * xr[t];
      }
    }
  }
}

}  // namespace rtcp::correlator::beamformed::tiles
