#pragma once
/// \file CorrelatorKernel.h
/// Step 6 of the signal chain: correlates every station pair (autocorrelations included)
/// for every channel and polarisation product, summing over the block's spectra.
///
/// Problem sizes are fixed at construction; one call, correlate(), with a fixed layout:
///   input   samples[station][channel][pol][reim][time]   float, pol X Y, reim re im,
///           time padded to paddedSamples() (a multiple of 16) with zeros; either one
///           contiguous buffer or one pointer per station to its [channel][pol][reim][time],
///           64-byte aligned (rtcp::AlignedBuffer);
///   output  visibilities[baseline][channel][pol]         complex<float>, overwritten,
///           baseline(s1 <= s2) = s2 (s2 + 1) / 2 + s1, pol = 2 P + Q for
///           sum_t x_s1,P(t) conj(x_s2,Q(t)) (XX XY YX YY).
/// Vectorised across time (16 samples per AVX-512 register, split re/im), register-tiled
/// over 1 x 2 stations (16 accumulators: one first station against a pair of second
/// stations, whose rows stay in L1 while a block of first stations streams from L2), a
/// span of 768 samples at a time (longer blocks add up their spans' products), threaded
/// with OpenMP over channels (or, with few channels, over blocks of first stations).
/// AVX-512, AVX2 (1 x 1 tiles, the next second station's rows prefetched) or plain C++
/// chosen at run time.

#include <complex>
#include <cstddef>
#include <span>
#include <string>

namespace rtcp::correlator {

class CorrelatorKernel {
 public:
  enum class Isa { kAuto, kAvx512, kAvx2, kGeneric };

  /// nrThreads 0: OpenMP's default. Isa::kAuto picks the widest the CPU supports;
  /// asking for one the CPU lacks throws std::runtime_error.
  CorrelatorKernel(int nrStations, int nrChannels, int nrSamples, Isa isa = Isa::kAuto,
                   int nrThreads = 0);

  /// samples: one contiguous buffer of nrStations x floatsPerStation() floats.
  void correlate(const float* samples, std::complex<float>* visibilities) const;
  /// stations[s]: station s's samples[channel][pol][reim][time] (floatsPerStation() floats).
  void correlate(std::span<const float* const> stations, std::complex<float>* visibilities) const;

  /// One baseline of one channel, as correlate() computes it: a and b are two stations'
  /// [pol][reim][time] rows of a channel (64-byte aligned), out its 4 products.
  void correlateBaseline(const float* a, const float* b, std::complex<float>* out) const;

  int nrStations() const { return nrStations_; }
  int nrChannels() const { return nrChannels_; }
  int nrSamples() const { return nrSamples_; }
  /// Length of the time axis in the input layout.
  int paddedSamples() const { return paddedSamples_; }
  size_t floatsPerStation() const { return size_t(nrChannels_) * 4 * paddedSamples_; }
  /// 32 flops per baseline, channel and sample.
  double flopsPerCall() const;
  Isa isa() const { return isa_; }
  static std::string toString(Isa isa);
  /// kAuto: the widest the CPU supports (AVX-512, AVX2 with FMA, generic); the others as
  /// they are, or std::runtime_error naming `part` when the CPU lacks them.
  static Isa resolve(Isa isa, const std::string& part);
  /// The time-axis length for nrSamples: rounded up to a multiple of 16, and 16 more when
  /// that is a multiple of 512 (rows a multiple of 2 KB apart fall in the same L1 sets).
  static int paddedLength(int nrSamples) {
    const int padded = (nrSamples + 15) / 16 * 16;
    return padded % 512 == 0 ? padded + 16 : padded;
  }

 private:
  void correlateChannel(std::span<const float* const> stations, int channel,
                        std::complex<float>* visibilities) const;
  void correlateBlock(std::span<const float* const> stations, int channel, int firstStation,
                      std::complex<float>* visibilities) const;
  void correlateSpan(std::span<const float* const> stations, int channel, int firstStation,
                     int start, std::complex<float>* visibilities) const;

  int nrStations_;
  int nrChannels_;
  int nrSamples_;
  int paddedSamples_;
  int summedSamples_;  ///< nrSamples rounded up to 16: what the tiles sum (the rest is zeros)
  Isa isa_;
  int nrThreads_;
};

}  // namespace rtcp::correlator
