#pragma once
/// \file SignalGenerator.h
/// One subband's baseband signals for every station, chunk by chunk (DESIGN §2.3):
/// station s records x_s(t) = sum_k e_k(t + tau_sk) exp(+2 pi i f_subband tau_sk(t))
/// + receiver noise + an optional tone. e_k is one complex Gaussian signal per source and
/// polarisation (power flux/2), common to all stations, kept in a continuous buffer. The
/// delay's whole and fractional parts shift e_k exactly for a band-limited signal by a
/// phase gradient in the frequency domain (overlap-save with margins beyond the largest
/// delay); the LO phase f_subband tau(t) follows tau linearly per sample.

#include <complex>
#include <cstdint>
#include <vector>

#include "Fft.h"
#include "Random.h"
#include "SkyModel.h"
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
    int number = 0;          ///< subband number (seeds the sky signal)
    double frequency = 0;    ///< centre sky frequency, Hz
    double sampleRate = 0;   ///< complex samples per second
  };

  /// stationIds seed each station's receiver noise; firstSample is the first chunk's.
  SignalGenerator(const SkyModel& sky, const ChunkGeometry& geometry, const Fft& forward,
                  const Fft& backward, Subband subband, const std::vector<int>& stationIds,
                  uint64_t seed, int64_t firstSample);

  /// Advances the sky signals to the chunk of `delays` (chunks come in order) and
  /// transforms them; call once per chunk before station().
  void prepare(const ChunkDelays& delays);
  /// Station s's signal in the prepared chunk: out[pol][time], time in [0, nrSamples).
  void station(int s, const ChunkDelays& delays, std::complex<float>* out);
  /// True when the tone falls inside this subband.
  bool hasTone() const { return hasTone_; }

 private:
  void addTone(int s, const ChunkDelays& delays, std::complex<float>* out);

  const SkyModel& sky_;
  ChunkGeometry geometry_;
  const Fft& forward_;
  const Fft& backward_;
  Subband subband_;
  bool hasTone_ = false;
  int64_t nextSample_;
  bool primed_ = false;
  std::vector<Xoshiro256> skyRandom_;                   ///< [source][pol]
  std::vector<AlignedBuffer<std::complex<float>>> skySignal_; ///< [source][pol] e_k, fftSize samples
  std::vector<AlignedBuffer<std::complex<float>>> skySpectrum_;  ///< [source][pol]
  std::vector<Xoshiro256> noiseRandom_;                 ///< [station][pol]
  AlignedBuffer<std::complex<float>> frequencyRamp_;    ///< [fftSize]
  AlignedBuffer<std::complex<float>> timeRamp_;         ///< [nrSamples]
  AlignedBuffer<std::complex<float>> spectrum_;         ///< [fftSize]
  AlignedBuffer<std::complex<float>> shifted_;          ///< [fftSize]
};

}  // namespace rtcp::sim
