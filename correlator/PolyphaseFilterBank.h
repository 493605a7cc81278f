#pragma once
/// \file PolyphaseFilterBank.h
/// Step 3 of the signal chain: splits a subband into C channels with a 16-tap polyphase
/// filter bank (FIR per channel branch with Kaiser-windowed sinc coefficients, then a
/// C-point FFT per spectrum and polarisation with FFTW).
///
/// Spectrum s is computed from input samples [s C, s C + 16 C) of its input (the first
/// 15 C being history). Channel c holds baseband frequency (c - C/2) fs / C: the subband's
/// DC lands in channel C/2 (the fftshift is folded into the FIR weights as (-1)^c).
/// A tone at a channel centre keeps its amplitude; white noise of power P per sample
/// gives P x sum(h^2) (about 0.93 P / C) per channel. C = 1 passes samples through.
///
/// The FIR filter has three forms, chosen at run time (Isa, as CorrelatorKernel's): 16
/// floats at a time in AVX-512 registers (multiply-adds GCC fuses when it optimises), the
/// same in AVX2 intrinsics (fused multiply-adds in the same order: then the same bits),
/// and the first's code compiled for any x86-64 (separate multiplies and adds); C = 2 (8
/// floats to a spectrum) has plain loops only.

#include <complex>
#include <memory>
#include <vector>

#include "CorrelatorKernel.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::correlator {

class PolyphaseFilterBank {
 public:
  using Isa = CorrelatorKernel::Isa;

  /// nrChannels: a power of two; maxSpectra: the most spectra one call produces; isa: the
  /// FIR filter's form (kAuto: the widest the CPU runs; one it lacks throws).
  PolyphaseFilterBank(int nrChannels, int maxSpectra, Isa isa = Isa::kAuto);
  ~PolyphaseFilterBank();
  PolyphaseFilterBank(const PolyphaseFilterBank&) = delete;
  PolyphaseFilterBank& operator=(const PolyphaseFilterBank&) = delete;

  /// Stateless: input samples[time][pol] holds nrHistorySamples() history samples and then
  /// nrSpectra x C new ones; writes spectra[spectrum][channel][pol] (nrSpectra x C x 2).
  /// Both pointers 16-byte aligned. Thread-safe (const).
  void filter(const std::complex<float>* input, int nrSpectra, std::complex<float>* spectra) const;

  int nrChannels() const { return nrChannels_; }
  int maxSpectra() const { return maxSpectra_; }
  /// (taps - 1) x C, 0 for C = 1.
  int nrHistorySamples() const { return history_; }
  /// The prototype filter h[tap * C + channel] (sum 1).
  const std::vector<double>& prototype() const { return prototype_; }

 private:
  struct Plans;
  void firFilter(const float* input, int nrSpectra, float* output) const;
  void fft(std::complex<float>* spectra, int nrSpectra) const;

  int nrChannels_;
  int maxSpectra_;
  int history_;
  Isa isa_;
  std::vector<double> prototype_;
  AlignedBuffer<float> weights_;  ///< weights[tap][channel][4]: h (-1)^c for X re, X im, Y re, Y im
  std::unique_ptr<Plans> plans_;
};

}  // namespace rtcp::correlator
