#pragma once
/// \file DelayChannelSplitter.h
/// Beam former step 1: splits a station's subband into the C_d delay-compensation channels
/// (Cobalt.BeamFormer.nrDelayCompensationChannels, COBALT's default 64) with a plain C_d-point
/// FFT per spectrum and polarisation, no FIR: ChannelMerger's inverse FFT gives the time
/// series back exactly (COBALT's beam former does the same, so that the beams can be
/// channelised again afterwards). Channel c holds baseband frequency (c - C/2) fs / C, as
/// the correlator's filter bank (DESIGN §2.3), so DelayAndBandpassCorrection corrects it.
///
/// Spectrum s is made from samples [s C, (s + 1) C): it is valid when all of them arrived
/// (flag()); DelayAndBandpassCorrection zeroes the flagged ones.

#include <complex>
#include <cstdint>

#include "FftPlan.h"
#include "SpectrumMask.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator::beamformed {

class DelayChannelSplitter {
 public:
  /// nrChannels C_d >= 1, nrSpectra per block (the block is nrSpectra x C_d samples).
  DelayChannelSplitter(int nrChannels, int nrSpectra);

  /// input samples[time][pol] (nrSpectra x C_d samples, no history) ->
  /// spectra[spectrum][channel][pol]. Both 64-byte aligned. Thread-safe (const).
  void split(const std::complex<float>* input, std::complex<float>* spectra) const;

  /// Valid spectra of subband `subband` of a block whose samples [firstSample, firstSample +
  /// nrSpectra x C_d) are the block's own (after the correlator's filter history): spectrum s
  /// is valid iff its C_d samples all arrived and ionproc did not serve the block flagged.
  void flag(const StationBlock& block, int subband, int firstSample, SpectrumMask& valid) const;

  int nrChannels() const { return nrChannels_; }
  int nrSpectra() const { return nrSpectra_; }
  int nrSamples() const { return nrChannels_ * nrSpectra_; }

 private:
  int nrChannels_;
  int nrSpectra_;
  FftPlan plan_;
};

/// True when bits [begin, end) of words (bit i: words[i / 64] >> i % 64) are all set.
bool allBitsSet(const uint64_t* words, int64_t begin, int64_t end);

}  // namespace rtcp::correlator::beamformed
