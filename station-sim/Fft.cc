#include "Fft.h"

#include <mutex>
#include <stdexcept>
#include <string>

#include "rtcp/AlignedBuffer.h"
#include "rtcp/FftwPlanner.h"

namespace rtcp::sim {

Fft::Fft(int size, Direction direction) : size_(size) {
  AlignedBuffer<std::complex<float>> in(size), out(size);
  std::lock_guard lock(fftwPlannerMutex());
  plan_ = fftwf_plan_dft_1d(size, reinterpret_cast<fftwf_complex*>(in.data()),
                            reinterpret_cast<fftwf_complex*>(out.data()),
                            direction == Direction::kForward ? FFTW_FORWARD : FFTW_BACKWARD,
                            FFTW_MEASURE);
  if (!plan_)
    throw std::runtime_error("FFTW cannot plan a transform of " + std::to_string(size) + " points");
}

Fft::~Fft() {
  std::lock_guard lock(fftwPlannerMutex());
  fftwf_destroy_plan(plan_);
}

void Fft::execute(const std::complex<float>* in, std::complex<float>* out) const {
  // FFTW does not write an out-of-place input of a complex transform.
  fftwf_execute_dft(plan_, reinterpret_cast<fftwf_complex*>(const_cast<std::complex<float>*>(in)),
                    reinterpret_cast<fftwf_complex*>(out));
}

}  // namespace rtcp::sim
