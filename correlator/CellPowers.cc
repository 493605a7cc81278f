#include "CellPowers.h"

#include <algorithm>
#include <cstring>

namespace rtcp::correlator {

namespace {

/// 16 floats as one value (GCC's vector extension: one AVX-512 register, two AVX2 or four
/// SSE ones, whichever the clone compiling it has).
typedef float Lanes __attribute__((vector_size(kCellLanes * sizeof(float))));
typedef float HalfLanes __attribute__((vector_size(kCellLanes / 2 * sizeof(float))));
typedef float QuarterLanes __attribute__((vector_size(kCellLanes / 4 * sizeof(float))));

}  // namespace

/// 16 lanes at a time (independent partial sums in one vector, then the tree of halves), the rest
/// one by one.
__attribute__((target_clones("avx512f", "avx2", "default"))) void channelCellPowers(
    const float* __restrict rows, size_t rowStride, int nrSpectra, int spectraPerCell,
    float* __restrict cells) {
  const float* a = rows;
  const float* b = rows + rowStride;
  const float* c = rows + 2 * rowStride;
  const float* d = rows + 3 * rowStride;
  for (int begin = 0, k = 0; begin < nrSpectra; begin += spectraPerCell, ++k) {
    const int end = std::min(nrSpectra, begin + spectraPerCell);
    Lanes lanes = {};
    int t = begin;
    for (; t + kCellLanes <= end; t += kCellLanes) {
      Lanes x, y, z, w;  // unaligned loads
      std::memcpy(&x, a + t, sizeof x);
      std::memcpy(&y, b + t, sizeof y);
      std::memcpy(&z, c + t, sizeof z);
      std::memcpy(&w, d + t, sizeof w);
      lanes += x * x + y * y + z * z + w * w;
    }
    const HalfLanes half = __builtin_shufflevector(lanes, lanes, 0, 1, 2, 3, 4, 5, 6, 7) +
                           __builtin_shufflevector(lanes, lanes, 8, 9, 10, 11, 12, 13, 14, 15);
    const QuarterLanes quarter = __builtin_shufflevector(half, half, 0, 1, 2, 3) +
                                 __builtin_shufflevector(half, half, 4, 5, 6, 7);
    float sum = (quarter[0] + quarter[2]) + (quarter[1] + quarter[3]);
    for (; t < end; ++t) sum += a[t] * a[t] + b[t] * b[t] + c[t] * c[t] + d[t] * d[t];
    cells[k] = sum;
  }
}

}  // namespace rtcp::correlator
