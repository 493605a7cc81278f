#pragma once
/// \file DelayTiles.h
/// The vectorised inner step of DelayAndBandpassCorrection (AVX-512): 16 spectra x 4
/// channels of spectra[spectrum][channel][pol] are transposed (a 16 x 16 float
/// transpose) into rows of 16 spectra and rotated by per-spectrum phasors.

#include <cstddef>

namespace rtcp::correlator::tiles {

/// in: spectrum s0's first of 4 channels (floats; spectra spectrumStride floats apart);
/// phasorRe/Im: [channel 0..3][16 spectra]; out: output[c0][pol][reim][s0], rows
/// rowStride floats apart.
void rotateTileAvx512(const float* in, size_t spectrumStride, const float* phasorRe,
                      const float* phasorIm, float* out, size_t rowStride);

}  // namespace rtcp::correlator::tiles
