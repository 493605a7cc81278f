#pragma once
/// \file Pulsar.h
/// A simulated pulsar (Sim.Source[i].pulsar.*, DESIGN §2.2): the source's noise-like signal
/// gated by a periodic Gaussian power envelope, dispersed by cold plasma.
///
/// At sky frequency f a pulse arrives t_DM(f) = k DM / f^2 after it would at infinite
/// frequency (k = 4.148808e3 s MHz^2 cm^3 / pc, f in MHz): the pulse peaks at the reference
/// position at epoch + n period + t_DM(f). Within a band of centre f0 (a subband, or an
/// aliased neighbour) the dispersion is the filter exp(2 pi i k' / f), k' = k DM 1e12 s Hz^2,
/// f = f0 + nu in Hz, whose group delay is t_DM(f). Split as
///   2 pi k' / f = 2 pi k' / f0  -  2 pi nu t_DM(f0)  +  2 pi k' nu^2 / (f0^2 f),
/// the constant phase of the band is dropped (its noise is independent of every other
/// band's), the linear term is a delay of the whole band, applied to the pulse envelope
/// (PulseEnvelope at t_DM(f0)), and the rest is the residual chirp, applied to the band's
/// spectrum on the overlap-save grid (SignalGenerator): exact for every fine frequency.
/// Its group delay t_DM(f0 + nu) - t_DM(f0) runs from + to - across the band (low
/// frequencies arrive later); the chunks' margins hold its largest magnitude.

#include <complex>
#include <cstddef>
#include <cstdint>

#include "rtcp/ObservationSettings.h"

namespace rtcp::sim {

/// The cold-plasma dispersion constant, s MHz^2 cm^3 / pc.
constexpr double kDispersionConstant = 4.148808e3;

/// t_DM(f): the delay (s) at sky frequency f (Hz) after infinite frequency.
double dispersionDelay(double dispersionMeasure, double frequency);
/// The residual chirp's phase in turns at offset nu (Hz) from a band centre f0 (Hz):
/// k' nu^2 / (f0^2 (f0 + nu)).
double residualChirpTurns(double dispersionMeasure, double centre, double offset);
/// The largest |t_DM(f0 + nu) - t_DM(f0)| (s) over a subband of centre f0 and its aliased
/// neighbours, |nu| <= 1.5 sampleRate, i.e. the margin a chunk needs for the residual chirp.
double dispersionSpread(double dispersionMeasure, double centre, double sampleRate);

/// The amplitude envelope of a pulsar's signal in a band whose pulses arrive `delay`
/// seconds after infinite frequency: sqrt of the power sum_n exp(-4 ln 2 ((t - t_n) /
/// width)^2), t_n = epoch + n period + delay, peak 1.
class PulseEnvelope {
 public:
  PulseEnvelope(const SimPulsar& pulsar, double sampleRate, double delay);

  /// amplitude[j] of absolute sample firstSample + j (at time sample / sampleRate).
  void fill(int64_t firstSample, float* amplitude, size_t n) const;
  /// Seconds from the pulse peak nearest to sample `sample` (in [-period/2, period/2)).
  double offsetFromPeak(int64_t sample) const;

 private:
  double period_, width_, sampleRate_;
  long double reference_;  ///< a pulse peak in the band, Unix seconds
};

}  // namespace rtcp::sim
