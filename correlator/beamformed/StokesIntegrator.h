#pragma once
/// \file StokesIntegrator.h
/// Beam former step 7: Stokes parameters from a beam's final channels, summed over
/// timeIntegrationFactor spectra (COBALT's CoherentStokes / IncoherentStokes kernels;
/// DESIGN §2.7):
///   I = XX* + YY*,  Q = XX* - YY*,  U = 2 Re(XY*),  V = 2 Im(XY*);
///   XXYY: the four real components Xr, Xi, Yr, Yi (no integration).
/// Also the valid fraction of each output value: the mean, over the timeIntegrationFactor
/// spectra it sums, of the fraction of (station, sample) contributions that were valid in
/// its channel (ValidFractions.h).

#include <complex>

#include "rtcp/BeamFormedBlock.h"

namespace rtcp::correlator::beamformed {

class StokesIntegrator {
 public:
  /// nrSpectra: final-channel spectra per block (a multiple of timeIntegration). Throws
  /// std::invalid_argument for XXYY with timeIntegration > 1 (COBALT refuses it too).
  StokesIntegrator(StokesKind kind, int nrChannels, int nrSpectra, int timeIntegration);

  /// spectra[spectrum][channel][pol] -> output.samples[component][sample][channel],
  /// overwritten or, with add, added to (the incoherent sum over stations).
  void detect(const std::complex<float>* spectra, bool add, BeamFormedData& output) const;
  /// valid[spectrum][channel] (fractions 0..1) -> output.validFraction[sample][channel].
  void validFraction(const float* valid, BeamFormedData& output) const;

  /// An output of this shape (kind, channels, samples), zeroed.
  BeamFormedData makeOutput() const;
  StokesKind kind() const { return kind_; }
  int nrChannels() const { return nrChannels_; }
  int nrOutputSamples() const { return nrSpectra_ / timeIntegration_; }

 private:
  StokesKind kind_;
  int nrChannels_;
  int nrSpectra_;
  int timeIntegration_;
};

}  // namespace rtcp::correlator::beamformed
