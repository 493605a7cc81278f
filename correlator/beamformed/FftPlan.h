#pragma once
/// \file FftPlan.h
/// FFTW single-precision plans of the beam-former's steps: batched complex FFTs planned
/// once (FFTW_MEASURE) and executed on any 64-byte aligned arrays of the planned layout
/// (fftwf_execute_dft), so one plan serves every thread. Planning and destroying hold
/// rtcp's one FFTW planner lock (rtcp/FftwPlanner.h): the correlator's steps plan too.

#include <fftw3.h>

#include <complex>

namespace rtcp::correlator::beamformed {

class FftPlan {
 public:
  /// `count` transforms of `size` points, element i of transform b at
  /// data[b * distance + i * stride] (complex elements), in place; direction FFTW_FORWARD
  /// or FFTW_BACKWARD (unnormalised). A second loop of `count2` transforms `distance2`
  /// apart (the two polarisations) when count2 > 1.
  FftPlan(int size, int stride, int count, int distance, int count2, int distance2, int direction);
  ~FftPlan();
  FftPlan(const FftPlan&) = delete;
  FftPlan& operator=(const FftPlan&) = delete;
  FftPlan(FftPlan&& other) noexcept : plan_(other.plan_) { other.plan_ = nullptr; }

  /// Runs the planned transforms in place on data (64-byte aligned). Thread-safe.
  void execute(std::complex<float>* data) const;

 private:
  fftwf_plan plan_ = nullptr;
};

}  // namespace rtcp::correlator::beamformed
