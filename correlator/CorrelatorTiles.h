#pragma once
/// \file CorrelatorTiles.h
/// The register tiles of CorrelatorKernel, one set per instruction set. Each reads
/// stations' [pol][reim][time] rows of one channel (time: paddedSamples floats, a
/// multiple of 16) and writes the 4 polarisation products of a baseline.

#include <complex>

namespace rtcp::correlator::tiles {

/// out[pol] = sum_t a_P(t) conj(b_Q(t)), pol = 2 P + Q.
using SingleTile = void (*)(const float* a, const float* b, int paddedSamples,
                            std::complex<float>* out);
/// Two baselines (a, b0) and (a, b1) at once; meanwhile asks the cache for the 4 rows at
/// `prefetch` (data a later call needs: it hides the memory's latency behind arithmetic).
void pairAvx512(const float* a, const float* b0, const float* b1, int paddedSamples,
                std::complex<float>* out0, std::complex<float>* out1, const float* prefetch);
void singleAvx512(const float* a, const float* b, int paddedSamples, std::complex<float>* out);
void singleAvx2(const float* a, const float* b, int paddedSamples, std::complex<float>* out);
void singleGeneric(const float* a, const float* b, int paddedSamples, std::complex<float>* out);

}  // namespace rtcp::correlator::tiles
