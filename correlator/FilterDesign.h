#pragma once
/// \file FilterDesign.h
/// The prototype lowpass filter of the correlator's own polyphase filter bank: a
/// Kaiser-windowed sinc of nrTaps x nrChannels coefficients with cutoff 1/nrChannels (of
/// the Nyquist band). (The stations' filter, which the bandpass correction divides out,
/// is LOFAR's own: rtcp::StationFilter.)

#include <vector>

namespace rtcp::correlator {

/// Kaiser window parameter for about 91 dB stop-band attenuation (0.1102 (A - 8.7)).
constexpr double kKaiserBeta = 9.0695;

/// Kaiser window of n points: I0(beta sqrt(1 - (2i/(n-1) - 1)^2)) / I0(beta).
std::vector<double> kaiserWindow(int n, double beta = kKaiserBeta);

/// Prototype filter h[tap * nrChannels + branch] (the branch is the channel index of the
/// polyphase decomposition): windowed sinc((n - (N-1)/2) / nrChannels), N = taps x channels,
/// normalised to a DC gain of 1 (sum of all coefficients 1), so that a tone at a channel
/// centre leaves the filter bank with its input amplitude.
std::vector<double> prototypeFilter(int nrChannels, int nrTaps);

/// |H(nu)| of a prototype filter at nu, in units of the channel spacing (nu = 0 is the
/// passband centre, nu = +-0.5 the channel edges, nu = 1 the neighbour's centre).
double filterResponse(const std::vector<double>& prototype, int nrChannels, double nu);

}  // namespace rtcp::correlator
