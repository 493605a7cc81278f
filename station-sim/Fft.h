#pragma once
/// \file Fft.h
/// A one-dimensional complex FFTW (fftw3f) plan, made once and executed on any 64-byte
/// aligned, out-of-place pair of arrays (thread-safe execution).

#include <fftw3.h>

#include <complex>

namespace rtcp::sim {

class Fft {
 public:
  enum class Direction { kForward, kBackward };
  /// Plans an unnormalised transform of `size` points (FFTW_MEASURE).
  Fft(int size, Direction direction);
  ~Fft();
  Fft(const Fft&) = delete;
  Fft& operator=(const Fft&) = delete;

  int size() const { return size_; }
  /// out = FFT(in); in and out are distinct 64-byte aligned arrays of size() points.
  void execute(const std::complex<float>* in, std::complex<float>* out) const;

 private:
  int size_;
  fftwf_plan plan_ = nullptr;
};

}  // namespace rtcp::sim
