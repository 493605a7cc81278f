#pragma once
/// \file InputConverter.h
/// Step 1 of the signal chain: one subband of a StationBlock (RSP-encoded 16-, 8- or 4-bit
/// complex integers) to complex floats. Samples that did not arrive become zeros.

#include <array>
#include <complex>

#include "rtcp/StationBlock.h"

namespace rtcp::correlator {

class InputConverter {
 public:
  /// bitsPerSample: 16, 8 or 4 (throws std::invalid_argument otherwise).
  explicit InputConverter(int bitsPerSample);

  /// Converts every sample (history included) of subband `subband` of `block` into
  /// samples[time][pol] (pol X, Y), time in [0, block.header.nrSamples); samples whose
  /// valid bit is clear are written as zeros. Returns the number of such samples.
  int convert(const StationBlock& block, int subband, std::complex<float>* samples) const;

  /// The same for samples [first, first + count) of the subband only: samples[0] is
  /// sample `first` (for the chain's chunks of spectra, each with its filter history).
  /// Throws std::invalid_argument when the range leaves [0, block.header.nrSamples).
  int convert(const StationBlock& block, int subband, int first, int count,
              std::complex<float>* samples) const;

  int bitsPerSample() const { return bits_; }

 private:
  void convertRun(const uint8_t* in, int count, std::complex<float>* out) const;

  int bits_;
  int bytesPerSample_;
  std::array<std::complex<float>, 256> nibbles_{};  ///< 4-bit byte (low re, high im) -> value
};

}  // namespace rtcp::correlator
