#pragma once
/// \file CorrelatorTiles.h
/// The register tiles of CorrelatorKernel, one set per instruction set. Each reads
/// stations' [pol][reim][time] rows of one channel over one span of time and writes (or
/// adds to) the 4 polarisation products of a baseline.

#include <complex>

namespace rtcp::correlator::tiles {

/// Where a tile reads: row r (pol P, re/im) of a station starts at its pointer + r * stride
/// floats; the tile sums `length` samples (a multiple of 16) from there. With `accumulate`
/// it adds its products to `out` (a later span of the same block), else overwrites them.
struct Span {
  int stride;
  int length;
  bool accumulate;
};

/// out[pol] (+)= sum_t a_P(t) conj(b_Q(t)), pol = 2 P + Q.
using SingleTile = void (*)(const float* a, const float* b, Span span, std::complex<float>* out);
/// Two baselines (a, b0) and (a, b1) at once.
void pairAvx512(const float* a, const float* b0, const float* b1, Span span,
                std::complex<float>* out0, std::complex<float>* out1);
void singleAvx512(const float* a, const float* b, Span span, std::complex<float>* out);
void singleAvx2(const float* a, const float* b, Span span, std::complex<float>* out);
void singleGeneric(const float* a, const float* b, Span span, std::complex<float>* out);

}  // namespace rtcp::correlator::tiles
