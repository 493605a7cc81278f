#pragma once
/// \file Reference.h
/// Plain reference twins of the signal chain's steps: the specification the optimised
/// classes are tested against. Straight loops in double precision, no tricks; same
/// layouts as the optimised steps (see their headers).

#include <complex>
#include <span>
#include <vector>

#include "SpectrumMask.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator::reference {

/// InputConverter: samples[time][pol] via rtcp::decodeRspSample; invalid samples zero.
void convertInput(const StationBlock& block, int subband, std::complex<float>* samples);

/// SpectrumFlagger: spectrum s valid iff every sample of its window [s C, s C + W) is
/// valid, W = 16 C (1 for C = 1). valid[time] per input sample.
void flagSpectra(const std::vector<bool>& sampleValid, int nrChannels, int nrSpectra,
                 SpectrumMask& mask);

/// PolyphaseFilterBank (stateless): direct FIR with the prototype filter and a direct DFT,
/// channel c at baseband frequency (c - C/2) fs / C. input[time][pol] with history.
void filterBank(const std::complex<float>* input, int nrChannels, int nrSpectra,
                std::complex<float>* spectra);

/// DelayAndBandpassCorrection: spectra[s][c][pol] -> output[c][pol][reim][padded] with
/// exp(-2 pi i f_c tau(s)) gain[c] evaluated directly per spectrum.
void correctDelayAndBandpass(const std::complex<float>* spectra, const SpectrumMask& valid,
                             int nrChannels, int nrSpectra, int paddedSpectra, double subbandWidth,
                             double subbandFrequency, bool delayCompensation, bool correctBandPass,
                             double delayAtStart, double delayAtEnd, float* output);

/// CorrelatorKernel: visibilities[baseline][channel][pol] = sum over time of
/// x_s1,P conj(x_s2,Q); stations[s] -> [channel][pol][reim][padded].
void correlate(std::span<const float* const> stations, int nrChannels, int nrSamples,
               int paddedSamples, std::complex<float>* visibilities);

}  // namespace rtcp::correlator::reference
