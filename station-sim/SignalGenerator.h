#pragma once
/// \file SignalGenerator.h
/// One subband's baseband signals for every station, chunk by chunk (DESIGN §2.3), as a
/// LOFAR station's polyphase filter bank delivers them (SubbandResponse): station s records
/// x_s(t) = sum_k g_k sum_{m=-1,0,1} (H_m * e_k,b+m)(t + tau_sk) exp(+2 pi i (f_b + m fs)
/// tau_sk(t))
/// + receiver noise + an optional tone. e_k,b is one complex Gaussian signal per source,
/// subband and polarisation (power flux/2), common to all stations and kept in a
/// continuous buffer; g_k is the station beam's amplitude toward source k. Subband b's
/// neighbours b-1 and b+1 alias into its edges through the filter's response
/// H_m(nu) = H(nu + m), each with the delay phase of its own sky frequency. Polarisation P
/// of station s adds its signal path: tau_sk + d_sP and a phase phi_sP
/// (Sim.<field>.delay.P / phase0.P). The delay's whole and fractional parts shift e exactly
/// for a band-limited signal by a phase gradient in the frequency domain (overlap-save with
/// margins beyond the largest delay), where the filter's response is applied too; the LO
/// phase f_b tau(t) follows tau linearly per sample. Receiver noise is white before the
/// filter bank (ReceiverNoise); a tone is scaled by H at its offset from the subband centre.
/// Interference made at the station (Sim.rfi.*) comes last: a silent station's signal is
/// zeroed, then a local tone (H at its offset, a phase of each station's own, no geometric
/// delay), a drifting narrow-band signal (a linear sweep in frequency, restarting every
/// drift.period on the sample clock; H at its offset in the chunk's middle, a phase of each
/// station's own) and broadband bursts (white noise of their own per station, during the
/// first burst.duration seconds of every burst.period, on the sample clock) are added. A
/// noise-only station gets neither sky nor sky tone, and receiver noise of the power they
/// and its noise would have had (the same autocorrelation, no correlation with the others).
/// A polarised source's X and Y spectra are mixed from its two signals (Polarisation.h); a
/// pulsar's signal is gated by its pulse envelope in time, each band's at its own
/// dispersion delay, and its spectrum multiplied by the band's residual chirp (Pulsar.h).

#include <complex>
#include <cstdint>
#include <vector>

#include "Fft.h"
#include "Polarisation.h"
#include "Pulsar.h"
#include "Random.h"
#include "ReceiverNoise.h"
#include "SkyModel.h"
#include "SubbandResponse.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::sim {

/// Sizes of the overlap-save chunks: an FFT of fftSize points yields nrSamples() output
/// samples, with `margin` samples of the continuous signal on either side.
struct ChunkGeometry {
  int margin = 0;
  int fftSize = 0;
  int nrSamples() const { return fftSize - 2 * margin; }  ///< a multiple of 16

  /// Margin: the largest delay plus kInterpolationMargin samples (the band-limited
  /// shift's sinc tails), rounded up to 8; FFT: a power of two of at least 8 margins.
  static ChunkGeometry forMaxDelay(double maxDelaySamples);
  static constexpr int kInterpolationMargin = 256;
};

class SignalGenerator {
 public:
  struct Subband {
    int number = 0;         ///< subband number (seeds the sky signal)
    double frequency = 0;   ///< centre sky frequency, Hz
    double sampleRate = 0;  ///< complex samples per second
    /// [source]: the station beam's amplitude toward the source (empty: all 1).
    std::vector<double> sourceGains;
  };

  /// stationIds seed each station's receiver noise (one distinct key per antenna field);
  /// firstSample is the first chunk's. response: the station filter on this geometry's FFT
  /// grid.
  SignalGenerator(const SkyModel& sky, const ChunkGeometry& geometry, const Fft& forward,
                  const Fft& backward, const SubbandResponse& response, Subband subband,
                  const std::vector<int>& stationIds, uint64_t seed, int64_t firstSample);

  /// Advances the sky signals to the chunk of `delays` (chunks come in order) and
  /// transforms them; call once per chunk before station().
  void prepare(const ChunkDelays& delays);
  /// Station s's signal in the prepared chunk: out[pol][time], time in [0, nrSamples).
  void station(int s, const ChunkDelays& delays, std::complex<float>* out);
  /// Expected E|x|^2 per polarisation of a station's signal (for the quantiser's gain).
  double powerPerPolarisation() const;

 private:
  /// How source k's signals are formed beyond noise of power flux/2 per polarisation.
  struct SourceForm {
    PolarisationMix mix;                ///< X, Y from the two signals
    std::vector<PulseEnvelope> pulses;  ///< [band]; empty: a steady source
    /// [band]: H_m times the residual chirp, FFT order; empty: no dispersion.
    std::vector<AlignedBuffer<std::complex<float>>> dispersedResponse;
  };
  SourceForm formOf(const SimSource& source) const;
  /// Advances the sky signal of source k, band m, pol p by a chunk, gates it by the pulse
  /// envelope in envelope_ (a pulsar), transforms it and shapes it into skySpectrum(k, m, p).
  void transformSky(int k, int m, int p);
  void addTone(int s, const ChunkDelays& delays, std::complex<float>* out);
  void addInterference(int s, int64_t firstSample, std::complex<float>* out);
  void addDrift(int s, int64_t firstSample, std::complex<float>* out);
  /// The spectrum of band m of source k, pol p: [source][band][pol].
  AlignedBuffer<std::complex<float>>& skySpectrum(int k, int m, int p) {
    return skySpectrum_[size_t((k * SubbandResponse::kNrBands + m + 1) * kPolarisations + p)];
  }
  static constexpr int kPolarisations = 2;

  const SkyModel& sky_;
  ChunkGeometry geometry_;
  const Fft& forward_;
  const Fft& backward_;
  const SubbandResponse& response_;
  Subband subband_;
  double toneGain_ = 0;     ///< H at the tone's offset; 0: no tone here
  double rfiToneGain_ = 0;  ///< H at the interfering tone's offset; 0: not here
  /// [station]: which of the interference Sim.rfi.* puts there.
  std::vector<uint8_t> rfiTone_, rfiBursts_, silent_, drift_, noiseOnly_;
  std::vector<Xoshiro256> rfiRandom_;         ///< [station][pol]: the bursts' noise
  AlignedBuffer<std::complex<float>> burst_;  ///< [nrSamples]
  int64_t nextSample_;
  bool primed_ = false;
  /// Sky signals e_k of this subband's band and its neighbours' (m = -1, 0, +1), seeded by
  /// their subband numbers, before any pulse envelope: [source][band][pol].
  std::vector<Xoshiro256> skyRandom_;
  std::vector<AlignedBuffer<std::complex<float>>> skySignal_;    ///< fftSize samples each
  std::vector<AlignedBuffer<std::complex<float>>> skySpectrum_;  ///< H_m x FFT(e), FFT order
  std::vector<SourceForm> forms_;                                ///< [source]
  std::vector<ReceiverNoise> noise_;                             ///< [station][pol]
  AlignedBuffer<std::complex<float>> frequencyRamp_;             ///< [fftSize]
  AlignedBuffer<std::complex<float>> timeRamp_;                  ///< [nrSamples]
  AlignedBuffer<std::complex<float>> spectrum_;                  ///< [fftSize]
  AlignedBuffer<std::complex<float>> shifted_;                   ///< [fftSize]
  AlignedBuffer<float> envelope_;                                ///< [fftSize]: pulse amplitude
  AlignedBuffer<std::complex<float>> gated_;                     ///< [fftSize]
  AlignedBuffer<std::complex<float>> white_;  ///< [history + nrSamples]: receiver noise scratch
};

}  // namespace rtcp::sim
