#pragma once
/// \file DelayAndBandpassCorrection.h
/// Step 4 of the signal chain: removes the residual (sub-sample) delay of a station and the
/// ripple of the station's own filter bank, and reorders the spectra into the correlator's
/// input layout.
///
/// Channel c (sky frequency f_c = f_subband + (c - C/2) fs / C) of spectrum s is multiplied
/// by exp(-2 pi i f_c tau(s)) x gain[c], with tau(s) interpolated linearly from the delay at
/// the block start to the delay at its end, taken at the spectrum's middle:
/// tau(s) = tau0 + (tau1 - tau0) (s + 0.5) / S. A station that records
/// x(t) = e(t + tau) exp(+2 pi i f_subband tau) then correlates to zero phase with the
/// reference. gain[c] = StationFilter::bandpassCorrection, COBALT's correction from the
/// real station filter: 2^25 / sqrt of the power the channel receives through the
/// station's 1024-subband filter bank, its own response plus the neighbouring subbands'
/// aliases (1.005 at the subband centre). Flagged spectra are written as zeros.
///
/// Four channels at a time, 16 spectra to a tile in AVX-512 or AVX2 registers (DelayTiles.h)
/// or one spectrum at a time in plain code (the channels and spectra left over too), chosen
/// at run time (Isa, as CorrelatorKernel's).

#include <complex>
#include <vector>

#include "CellPowers.h"
#include "CorrelatorKernel.h"
#include "SpectrumMask.h"

namespace rtcp::correlator {

class DelayAndBandpassCorrection {
 public:
  using Isa = CorrelatorKernel::Isa;

  /// subbandWidth: fs in Hz. paddedSpectra >= nrSpectra: the time axis length of the output.
  /// isa: the tiles' form (kGeneric: none, every spectrum plain; kAuto: the widest the CPU
  /// runs; one it lacks throws).
  DelayAndBandpassCorrection(int nrChannels, int nrSpectra, int paddedSpectra, double subbandWidth,
                             bool delayCompensation, bool correctBandPass, Isa isa = Isa::kAuto);

  /// spectra[spectrum][channel][pol] (complex) -> output[channel][pol][re,im][paddedSpectra]
  /// (floats; the padding is left untouched). Delays in seconds (tau - n/fs). Thread-safe.
  void apply(const std::complex<float>* spectra, const SpectrumMask& valid, double subbandFrequency,
             double delayAtStart, double delayAtEnd, float* output) const;

  /// The phasors of one block in progress, for apply() in chunks of spectra.
  struct Phasors {
    std::vector<std::complex<double>> current;  ///< [channel]: the next spectrum's phasor
    std::vector<std::complex<double>> step;     ///< [channel]: from a spectrum to the next
    std::vector<std::complex<double>> stride;   ///< [channel]: step^16, from tile to tile
    std::vector<float> powerRe, powerIm;        ///< [channel][k < 16]: step^k
  };
  /// Starts a block (the same arguments as apply()): phasors of spectrum 0.
  void start(double subbandFrequency, double delayAtStart, double delayAtEnd,
             Phasors& phasors) const;
  /// Spectra [first, first + count) of the block started: spectra[0] is spectrum `first`
  /// (spectra[spectrum][channel][pol]); writes output[channel][pol][re,im][first, first +
  /// count) and advances the phasors. Chunks follow each other from spectrum 0; when every
  /// chunk but the last holds a multiple of 16 spectra, the output is bit-identical to one
  /// apply() over the whole block. Thread-safe (phasors are the caller's).
  ///
  /// cellPowers (when cells is not null; first a multiple of kCellLanes): also the
  /// pre-correlation flagger's cell powers of the spectra written, summed while they are
  /// in registers (CellPowers.h): cells[c * stride + k] = the power of channel c summed
  /// over spectra [16 k, 16 k + 16) of the output (its last cell: to nrSpectra), for the
  /// cells of [first, first + count); the bits channelCellPowers gives on the output.
  void apply(const std::complex<float>* spectra, const SpectrumMask& valid, int first, int count,
             Phasors& phasors, float* output, CellPowerGrid cellPowers = {}) const;

  /// Sky frequency of a channel.
  double channelFrequency(double subbandFrequency, int channel) const {
    return subbandFrequency + (channel - nrChannels_ / 2) * subbandWidth_ / nrChannels_;
  }
  /// The amplitude gain per channel (all 1 without bandpass correction).
  const std::vector<double>& gains() const { return gains_; }
  bool delayCompensation() const { return delayCompensation_; }

 private:
  /// Four channels of spectra [first, first + count) (spectra: spectrum first) in tiles of
  /// 16 spectra (AVX-512); advances phasor past the spectra done, whose number it returns.
  int applyTiles(const std::complex<float>* spectra, const SpectrumMask& valid, int firstChannel,
                 int first, int count, Phasors& phasors, float* output,
                 CellPowerGrid cellPowers) const;
  /// nrChannels channels of spectra [first, first + count) (spectra: spectrum first), one
  /// spectrum at a time; advances phasor.
  void applyChannels(const std::complex<float>* spectra, const SpectrumMask& valid,
                     int firstChannel, int nrChannels, int first, int count,
                     std::complex<double>* phasor, const std::complex<double>* step,
                     float* output) const;

  int nrChannels_;
  int nrSpectra_;
  int paddedSpectra_;
  double subbandWidth_;
  bool delayCompensation_;
  Isa isa_;  ///< kAvx512: rotateTileAvx512, kAvx2: rotateTileAvx2, kGeneric: applyChannels only
  std::vector<double> gains_;
};

}  // namespace rtcp::correlator
