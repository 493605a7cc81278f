#pragma once
/// \file DelayTiles.h
/// The vectorised inner step of DelayAndBandpassCorrection (AVX-512, AVX2): 16 spectra x 4
/// channels of spectra[spectrum][channel][pol] are transposed (one 16 x 16 float
/// transpose, or four 8 x 8) into rows of 16 spectra and rotated by per-spectrum phasors.

#include <cstddef>
#include <cstdint>

namespace rtcp::correlator::tiles {

/// in: spectrum s0's first of 4 channels (floats; spectra spectrumStride floats apart);
/// spectrum s0 + k of channel c is rotated by phasor base[c] x power[c][k] when bit k of
/// `valid` is set, else zeroed: baseRe/Im[channel 0..3], powerRe/Im[channel 0..3][16
/// spectra]; out: output[c0][pol][reim][s0], rows rowStride floats apart. cellPower (when
/// not null): cellPower[c * cellStride] = the power of channel c summed over the tile's
/// 16 spectra as written to out, in CellPowers.h's order (the very bits channelCellPowers
/// gives for a cell of these 16 spectra).
void rotateTileAvx512(const float* in, size_t spectrumStride, const float* baseRe,
                      const float* baseIm, const float* powerRe, const float* powerIm,
                      uint32_t valid, float* out, size_t rowStride, float* cellPower,
                      size_t cellStride);
/// The same with AVX2: in quarters of 8 spectra x 2 channels.
void rotateTileAvx2(const float* in, size_t spectrumStride, const float* baseRe,
                    const float* baseIm, const float* powerRe, const float* powerIm, uint32_t valid,
                    float* out, size_t rowStride, float* cellPower, size_t cellStride);

}  // namespace rtcp::correlator::tiles
