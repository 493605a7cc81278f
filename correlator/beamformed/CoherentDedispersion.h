#pragma once
/// \file CoherentDedispersion.h
/// Beam former step 5 (per coherent TAB that asks for it): coherent dedispersion at the
/// TAB's dispersion measure. FFT convolution (overlap-save) of the subband's complex time
/// series with the inverse of the cold-plasma dispersion, relative to each final channel's
/// own centre f0 (DESIGN §2.7): frequency f = f0 + df is multiplied by
///   H(f) = exp(-2 pi i k DM df^2 / (f0^2 f)),   k = 4.148808e3 s MHz^2 cm^3 / pc,
/// which undoes the smearing inside each channel and leaves the delays between channels
/// (k DM / f0^2) for incoherent dedispersion downstream.
///
/// The filter reaches latency() samples into the past and the future, so the output is
/// late by that much: output sample t of a call is the dedispersed input sample t -
/// latency() of the stream. Overlap-save carries the last 2 latency() input samples from
/// call to call (zeros before the first), so consecutive blocks give one seamless series:
/// no sample is lost or repeated at block edges. The valid fractions travel with the
/// samples through the same delay. The latency a dispersion measure needs, and what it
/// means for the output's time stamps: rtcp/BeamFormedTiming.h. fftSize() points per FFT, fftSize()
/// - 2 latency() new samples per segment.

#include <complex>
#include <vector>

#include "FftPlan.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/BeamFormedTiming.h"

namespace rtcp::correlator::beamformed {

/// The FFT plan of one FFT size, shared by every CoherentDedispersion of that size:
/// fftSize points, the two polarisations one after the other (contiguous transforms: FFTW
/// copied strided ones through buffers, 30 % slower at 65536 points). Forward only: the
/// inverse is taken as conj(FFT(conj(x))).
struct DedispersionFft {
  explicit DedispersionFft(int fftSize);
  int size;
  FftPlan forward;
};

class CoherentDedispersion {
 public:
  /// An FFT size for a latency: the power of two at least 4 x 2 latency and 1024.
  static int fftSizeFor(int latency);

  /// subbandFrequency: the subband's centre (Hz); nrChannels: the final channels (C_f) whose
  /// centres the chirp is relative to (channel c at f_sb + (c - C_f/2) fs / C_f).
  CoherentDedispersion(int fftSize, int latency, double subbandWidth, double subbandFrequency,
                       int nrChannels, double dispersionMeasure);

  /// In place: samples[time][pol] and valid[time] (nrSamples each) become the stream's
  /// dedispersed samples and valid fractions latency() earlier. scratch: [pol][fftSize()]
  /// complex, 64-byte aligned. valid null: the samples alone (another TAB of the same
  /// latency and stations carries the valid fractions); then give it null every call.

  void process(const DedispersionFft& fft, std::complex<float>* samples, float* valid,
               int nrSamples, std::complex<float>* scratch);
  /// Forgets the history (zeros, valid 0): the next call starts a new stream.
  void reset();

  int latency() const { return latency_; }
  int fftSize() const { return fftSize_; }
  double dispersionMeasure() const { return dispersionMeasure_; }
  /// The filter H per FFT bin (bin k: baseband frequency k fs / N, k - N past N / 2), with
  /// the latency's delay and the 1 / N of the inverse FFT.
  const std::vector<std::complex<float>>& chirp() const { return chirp_; }

 private:
  int fftSize_;
  int latency_;
  int overlap_;  ///< 2 latency
  double dispersionMeasure_;
  /// spectrum[k] = conj(spectrum[k] chirp_[k]) for one polarisation's fftSize() bins.
  void multiplyByChirpConjugated(std::complex<float>* spectrum) const;

  std::vector<std::complex<float>> chirp_;
  AlignedBuffer<std::complex<float>> history_;  ///< the last overlap_ input samples [pol][time]
  std::vector<float> validHistory_;             ///< the last latency_ valid fractions
  std::vector<float> validScratch_;
};

}  // namespace rtcp::correlator::beamformed
