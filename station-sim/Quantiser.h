#pragma once
/// \file Quantiser.h
/// Turns float baseband samples into the RSP bit mode's integers: scales them so that the
/// expected rms of each component is targetRms(bits) (1024 for 16 bit, 20 for 8 bit, 2.5
/// for 4 bit: well clear of clipping), rounds to nearest and clips, counting clipped
/// components.

#include <complex>
#include <cstddef>
#include <cstdint>

namespace rtcp::sim {

class Quantiser {
 public:
  /// powerPerPolarisation: expected E|x|^2 of the input per polarisation.
  Quantiser(int bitsPerSample, double powerPerPolarisation);

  static double targetRms(int bitsPerSample);
  int bitsPerSample() const { return bits_; }
  float scale() const { return scale_; }  ///< integer units per input unit

  /// x[time], y[time] -> out[time][pol]; returns the number of clipped components.
  uint64_t quantise(const std::complex<float>* x, const std::complex<float>* y, size_t n,
                    std::complex<int16_t>* out) const;

 private:
  int bits_;
  float scale_;
  float max_;
};

}  // namespace rtcp::sim
