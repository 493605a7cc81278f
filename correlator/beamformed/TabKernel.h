#pragma once
/// \file TabKernel.h
/// Beam former step 3: the coherent tied-array beams (TABs). Per delay-compensation channel
/// and polarisation a complex matrix product,
///   beams[tab][time] = sum_station weights[tab][station] x[station][time],
/// the plain sum of unit-modulus phase weights times the stations' delay- and
/// bandpass-corrected samples (no 1/n; DESIGN §2.7).
///
/// Problem sizes are fixed at construction; one call, form(), with a fixed layout:
///   input    stations[s] -> samples[channel][pol][reim][paddedSamples] float (the layout
///            DelayAndBandpassCorrection writes), 64-byte aligned
///   weights  weights[channel][station][tab] complex<float> (TabWeights.h)
///   output   beams[tab][channel][pol][reim][paddedSamples] float, overwritten, 64-byte
///            aligned (streaming stores)
/// Real arithmetic, vectorised across time (re and im rows apart): per station, each tile
/// loads its samples once and broadcasts each of its TABs' weights once, four FMAs per
/// complex multiply-add. Register tiles of 6 TABs x 32 samples (AVX-512: 24 accumulators) or
/// 2 TABs x 16 samples (AVX2: 8); time outermost, so the 32 samples of every station stay in
/// L1 while all TABs are formed from them; threaded with OpenMP over (channel,
/// polarisation). The beams are written with streaming stores. AVX-512, AVX2 or plain C++ chosen at
/// run time, as CorrelatorKernel does. 8 flops per station, TAB, channel, polarisation and sample
/// (DESIGN §4).

#include <complex>
#include <span>

#include "CorrelatorKernel.h"

namespace rtcp::correlator::beamformed {

class TabKernel {
 public:
  using Isa = CorrelatorKernel::Isa;
  /// paddedSamples: the time axis length (a multiple of 16) of input and output rows; the
  /// kernel forms all of them (the padding holds zeros in, gives zeros out). nrThreads 0:
  /// OpenMP's default. Isa::kAuto picks the widest the CPU supports; asking for one it
  /// lacks throws std::runtime_error.
  TabKernel(int nrStations, int nrTabs, int nrChannels, int paddedSamples, Isa isa = Isa::kAuto,
            int nrThreads = 0);

  void form(std::span<const float* const> stations, const std::complex<float>* weights,
            float* beams) const;

  int nrStations() const { return nrStations_; }
  int nrTabs() const { return nrTabs_; }
  int nrChannels() const { return nrChannels_; }
  int paddedSamples() const { return paddedSamples_; }
  size_t floatsPerStation() const { return size_t(nrChannels_) * 4 * size_t(paddedSamples_); }
  size_t floatsPerTab() const { return floatsPerStation(); }
  /// 8 flops per station, TAB, channel, polarisation and (padded) sample.
  double flopsPerCall() const {
    return 8.0 * nrStations_ * nrTabs_ * nrChannels_ * 2.0 * paddedSamples_;
  }
  Isa isa() const { return isa_; }

 private:
  void formRows(std::span<const float* const> stations, const std::complex<float>* weights,
                int channel, int pol, float* beams) const;

  int nrStations_;
  int nrTabs_;
  int nrChannels_;
  int paddedSamples_;
  Isa isa_;
  int nrThreads_;
};

}  // namespace rtcp::correlator::beamformed
