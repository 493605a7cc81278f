#pragma once
/// \file BeamFormedReference.h
/// Plain reference twins of the beam former's steps: the specification the optimised
/// classes are tested against. Straight loops in double precision, direct DFTs; the same
/// layouts as the optimised steps (see their headers).

#include <complex>
#include <span>
#include <vector>

#include "rtcp/BeamFormedBlock.h"

namespace rtcp::correlator::beamformed::reference {

/// DelayChannelSplitter: spectra[s][c][pol] = sum_n input[s C + n][pol]
/// exp(-2 pi i (c - C/2) n / C).
void splitChannels(const std::complex<float>* input, int nrChannels, int nrSpectra,
                   std::complex<float>* spectra);

/// ChannelMerger: samples[s C + n][pol] = 1/C sum_c Y[c] exp(+2 pi i (c - C/2) n / C),
/// Y from input[c][pol][reim][paddedSpectra].
void mergeChannels(const float* input, int nrChannels, int nrSpectra, int paddedSpectra,
                   std::complex<float>* samples);

/// TabKernel: beams[tab][c][pol][reim][t] = sum_s weights[c][s][tab] x_s[c][pol][t].
void formTabs(std::span<const float* const> stations, const std::complex<float>* weights,
              int nrTabs, int nrChannels, int paddedSamples, float* beams);

/// CoherentDedispersion over a whole stream at once: the stream's DFT times
/// exp(-2 pi i k DM df^2 / (f0^2 f)) (f0 the nearest final-channel centre), inverse DFT,
/// delayed by `latency` samples (zeros first). stream[time][pol]; the stream is padded
/// with zeros to twice its length first, so its end does not wrap onto its start.
std::vector<std::complex<double>> dedisperse(const std::vector<std::complex<double>>& stream,
                                             double subbandWidth, double subbandFrequency,
                                             int nrChannels, double dispersionMeasure, int latency);

/// StokesIntegrator: spectra[spectrum][channel][pol] -> samples[component][sample][channel].
void stokes(const std::complex<float>* spectra, StokesKind kind, int nrChannels, int nrSpectra,
            int timeIntegration, std::vector<double>& samples);

}  // namespace rtcp::correlator::beamformed::reference
