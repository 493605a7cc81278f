#include "FftPlan.h"

#include <mutex>
#include <stdexcept>
#include <string>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/FftwPlanner.h"

namespace rtcp::correlator::beamformed {

FftPlan::FftPlan(int size, int stride, int count, int distance, int count2, int distance2,
                 int direction) {
  const fftwf_iodim dims[1] = {{size, stride, stride}};
  const fftwf_iodim loops[2] = {{count, distance, distance}, {count2, distance2, distance2}};
  // FFTW_MEASURE overwrites the array it plans on: plan on scratch of the same extent.
  const size_t extent = size_t(count - 1) * size_t(distance) +
                        size_t(count2 - 1) * size_t(distance2) + size_t(size - 1) * size_t(stride) +
                        1;
  AlignedBuffer<std::complex<float>> scratch(extent);
  auto* data = reinterpret_cast<fftwf_complex*>(scratch.data());
  {
    std::lock_guard lock(fftwPlannerMutex());
    plan_ = fftwf_plan_guru_dft(1, dims, count2 > 1 ? 2 : 1, loops, data, data, direction,
                                FFTW_MEASURE);
  }
  if (!plan_)
    throw std::runtime_error("beam former: FFTW could not plan " + std::to_string(count) + " x " +
                             std::to_string(size) + "-point FFTs");
}

FftPlan::~FftPlan() {
  if (!plan_) return;
  std::lock_guard lock(fftwPlannerMutex());
  fftwf_destroy_plan(plan_);
}

void FftPlan::execute(std::complex<float>* data) const {
  auto* d = reinterpret_cast<fftwf_complex*>(data);
  fftwf_execute_dft(plan_, d, d);
}

}  // namespace rtcp::correlator::beamformed
