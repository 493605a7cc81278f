#pragma once
/// \file SpectrumNoise.h
/// The level and the noise of a station's spectrum integrated over a block (the
/// pre-correlation flagger's step 2, PreCorrelationFlagger.h), for SumThreshold in
/// frequency.
///
/// The channels' own spread cannot give the noise there: an FM transmitter fills most of a
/// subband's channels (the real IE613 capture: 8 of 15 channels of subband 29 above twice
/// the quiet ones), so a σ taken from the channels, winsorized or not, grows with the
/// interference and hides it, and so does the median. The noise of a channel's power is
/// known instead, from the radiometer equation: a channel's power averaged over N spectra
/// of both polarisations (2N complex Gaussian samples, each of exponentially distributed
/// power) has σ = level / √(2N). The bandpass left in a corrected subband (within ±0.16 dB
/// at 16 channels, 0.1 dB at 64: correlator/README.md) is added as a relative σ
/// kBandpassFlatness, which dominates only in blocks of more than about 1000 spectra. The
/// spread below the median (median − the value of rank 15.9 %: 1 σ for Gaussian values),
/// which excess power does not reach, is a floor: data noisier than the model are judged
/// on their own spread.
///
/// The flagger runs SumThreshold with these statistics over the unflagged channels again,
/// up to kSpectrumRounds times, while it finds more: the channels flagged drop out of the
/// median, which then falls to the quiet channels' level (an FM signal's wings).

#include <cstddef>
#include <cstdint>

#include "OrderStatistics.h"
#include "SumThreshold.h"

namespace rtcp::correlator {

/// The relative σ of the bandpass left in a corrected subband's integrated spectrum.
constexpr double kBandpassFlatness = 0.02;
/// Rank of the value one σ below the median for Gaussian values: Φ(−1).
constexpr double kOneSigmaBelow = 0.1587;
/// SumThreshold rounds on the integrated spectrum (each with the statistics of what the
/// rounds before it left).
constexpr int kSpectrumRounds = 4;

/// Median of values[i] with flags[i] == 0 (i < n) and σ = max(median √(1 / (2 spectra) +
/// kBandpassFlatness²), median − the value of rank ⌊kOneSigmaBelow count⌋); spectra: the
/// spectra of both polarisations behind a value. scratch: reused.
RobustStatistics spectrumNoise(const float* values, const uint8_t* flags, size_t n, double spectra,
                               SelectionScratch& scratch);

}  // namespace rtcp::correlator
