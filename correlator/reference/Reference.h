#pragma once
/// \file Reference.h
/// Plain reference twins of the signal chain's steps: the specification the optimised
/// classes are tested against. Straight loops in double precision, no tricks; same
/// layouts as the optimised steps (see their headers).

#include <array>
#include <complex>
#include <span>
#include <string>
#include <vector>

#include "SpectrumMask.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/FlaggingSettings.h"
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

/// PolarisationCorrection: samples[channel][pol][reim][paddedSpectra] (floats) times
/// exp(-i (2 pi f_c delay[pol] + phase[pol])), f_c the sky frequency of channel c, in place.
void correctPolarisations(int nrChannels, int paddedSpectra, double subbandWidth,
                          double subbandFrequency, std::array<double, 2> delay,
                          std::array<double, 2> phase, float* samples);

/// Beamformer's input and output, per station: its name, samples[channel][pol][reim][padded]
/// and valid[spectrum] (the padding past the spectra is zero).
struct Stations {
  std::vector<std::string> names;
  std::vector<std::vector<float>> samples;
  std::vector<std::vector<bool>> valid;
};

/// Beamformer: the sum of the members (names; fewer than two: no merging) in the place of
/// members[0], the other members dropped, the rest in their order. A merged spectrum is
/// valid where every member's is, zero where not.
Stations mergeStations(const Stations& input, const std::vector<std::string>& members,
                       int paddedSpectra);

/// ValidSampleCounter: block.valid(baseline, channel) = the spectra valid at both stations
/// (valid[station][spectrum]); for C > 1 channel 0 counts 0 and its visibilities are zeroed.
void countValidSamples(const std::vector<std::vector<bool>>& valid, CorrelatedData& block);

/// CorrelatorKernel: visibilities[baseline][channel][pol] = sum over time of
/// x_s1,P conj(x_s2,Q); stations[s] -> [channel][pol][reim][padded].
void correlate(std::span<const float* const> stations, int nrChannels, int nrSamples,
               int paddedSamples, std::complex<float>* visibilities);

/// PreCorrelationFlagger (one station, its flags only: ReferenceFlagger.cc): cells summed
/// sample by sample over the valid spectra, statistics from sorted copies, every
/// SumThreshold window summed afresh. samples[channel][pol][reim][padded], valid[spectrum];
/// returns [channel][spectrum], true = the sample enters the correlation.
std::vector<std::vector<bool>> flagStation(const float* samples, int nrChannels, int nrSpectra,
                                           int paddedSpectra, const std::vector<bool>& valid,
                                           const FlaggingSettings& settings);

/// SumThreshold's pass with one window (SumThreshold.h) over values, flags (true =
/// flagged), every window summed afresh.
void sumThresholdPass(const std::vector<double>& values, std::vector<bool>& flags, size_t window,
                      double threshold);

/// ValidSampleCounter with per-channel flags: valid[station][channel][spectrum].
void countValidSamples(const std::vector<std::vector<std::vector<bool>>>& valid,
                       CorrelatedData& block);

}  // namespace rtcp::correlator::reference
