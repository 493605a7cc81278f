#include "PolyphaseFilterBank.h"

#include <fftw3.h>
#include <immintrin.h>

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

#include "FilterDesign.h"
#include "rtcp/FftwPlanner.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator {

namespace {

constexpr int kSpectraPerPlan = 16;  // spectra one FFTW execution transforms

/// In-place plan over `count` spectra[spectrum][channel][pol]: C-point FFTs along the
/// channel axis, for every spectrum and polarisation.
fftwf_plan makePlan(int nrChannels, int count, std::complex<float>* buffer) {
  const fftwf_iodim dims[1] = {{nrChannels, 2, 2}};
  const fftwf_iodim loops[2] = {{count, 2 * nrChannels, 2 * nrChannels}, {2, 1, 1}};
  auto* data = reinterpret_cast<fftwf_complex*>(buffer);
  std::lock_guard lock(fftwPlannerMutex());
  fftwf_plan plan = fftwf_plan_guru_dft(1, dims, 2, loops, data, data, FFTW_FORWARD, FFTW_MEASURE);
  if (!plan)
    throw std::runtime_error("PolyphaseFilterBank: FFTW could not plan " +
                             std::to_string(nrChannels) + "-point FFTs");
  return plan;
}

/// 16 floats (4 dual-polarisation samples); unaligned access allowed.
typedef float Vector16 __attribute__((vector_size(64), aligned(4)));

/// By reference: a helper returning a Vector16 by value would be compiled for the
/// default target, and at -O0 (not inlined) its return would not match the AVX-512
/// clone's calling convention (GCC's -Wpsabi warns of exactly this).
inline const Vector16& at(const float* p) { return *reinterpret_cast<const Vector16*>(p); }

/// output[s][i] = sum_k weights[k][i] input[(s + k) width + i], i < width = 4 C floats.
/// Per 16-float column: the 16 taps' weights stay in registers and 4 spectra are
/// accumulated at once (independent FMA chains; the input is read from L1). Compiled into
/// firKernelAvx512 and firKernelPlain, each for its target.
__attribute__((always_inline)) inline void firKernel(const float* __restrict input,
                                                     const float* __restrict weights, int width,
                                                     int nrSpectra, float* __restrict output) {
  constexpr int kSpectraAtOnce = 4;
  for (int i = 0; i < width; i += 16) {
    Vector16 w[kFilterTaps];
    for (int k = 0; k < kFilterTaps; ++k) w[k] = at(weights + size_t(k) * width + i);
    int s = 0;
    for (; s + kSpectraAtOnce <= nrSpectra; s += kSpectraAtOnce) {
      Vector16 acc[kSpectraAtOnce] = {};
      for (int k = 0; k < kFilterTaps; ++k)
        for (int r = 0; r < kSpectraAtOnce; ++r)
          acc[r] += w[k] * at(input + size_t(s + r + k) * width + i);
      for (int r = 0; r < kSpectraAtOnce; ++r)
        *reinterpret_cast<Vector16*>(output + size_t(s + r) * width + i) = acc[r];
    }
    for (; s < nrSpectra; ++s) {
      Vector16 acc = {};
      for (int k = 0; k < kFilterTaps; ++k) acc += w[k] * at(input + size_t(s + k) * width + i);
      *reinterpret_cast<Vector16*>(output + size_t(s) * width + i) = acc;
    }
  }
}

/// firKernel in AVX-512 registers: each acc += w x a fused multiply-add (when optimised).
__attribute__((target("avx512f"))) void firKernelAvx512(const float* __restrict input,
                                                        const float* __restrict weights, int width,
                                                        int nrSpectra, float* __restrict output) {
  firKernel(input, weights, width, nrSpectra, output);
}

/// firKernel for any x86-64 (SSE registers, a multiply and an add).
void firKernelPlain(const float* __restrict input, const float* __restrict weights, int width,
                    int nrSpectra, float* __restrict output) {
  firKernel(input, weights, width, nrSpectra, output);
}

/// The same on AVX2 machines, in intrinsics. (firKernel compiled for AVX2 kept its Vector16s on
/// the stack, as pairs of 128-bit halves, with a separate multiply and add: 0.1 of the FMA
/// peak.) Per 16-float column, kSpectraAtOnce spectra at once: 12 accumulators in
/// registers, each tap's 2 weight registers loaded once for them, the inputs read as
/// the FMAs' memory operands (from L1: a column's 16 + 6 rows are 1.4 KB).
__attribute__((target("avx2,fma"))) void firKernelAvx2(const float* __restrict input,
                                                       const float* __restrict weights, int width,
                                                       int nrSpectra, float* __restrict output) {
  constexpr int kSpectraAtOnce = 6;
  for (int i = 0; i < width; i += 16) {
    int s = 0;
    for (; s + kSpectraAtOnce <= nrSpectra; s += kSpectraAtOnce) {
      __m256 acc[kSpectraAtOnce][2];
      for (auto& a : acc) a[0] = a[1] = _mm256_setzero_ps();
      for (int k = 0; k < kFilterTaps; ++k) {
        const float* w = weights + size_t(k) * width + i;
        const __m256 w0 = _mm256_loadu_ps(w), w1 = _mm256_loadu_ps(w + 8);
#pragma GCC unroll 6
        for (int r = 0; r < kSpectraAtOnce; ++r) {
          const float* x = input + size_t(s + r + k) * width + i;
          acc[r][0] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x), acc[r][0]);
          acc[r][1] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + 8), acc[r][1]);
        }
      }
      for (int r = 0; r < kSpectraAtOnce; ++r) {
        float* out = output + size_t(s + r) * width + i;
        _mm256_storeu_ps(out, acc[r][0]);
        _mm256_storeu_ps(out + 8, acc[r][1]);
      }
    }
    for (; s < nrSpectra; ++s) {
      __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
      for (int k = 0; k < kFilterTaps; ++k) {
        const float* w = weights + size_t(k) * width + i;
        const float* x = input + size_t(s + k) * width + i;
        acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(w), _mm256_loadu_ps(x), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + 8), _mm256_loadu_ps(x + 8), acc1);
      }
      _mm256_storeu_ps(output + size_t(s) * width + i, acc0);
      _mm256_storeu_ps(output + size_t(s) * width + i + 8, acc1);
    }
  }
}

/// The same for any width (C = 2: 8 floats).
void firKernelNarrow(const float* input, const float* weights, int width, int nrSpectra,
                     float* output) {
  for (int s = 0; s < nrSpectra; ++s)
    for (int i = 0; i < width; ++i) {
      float acc = 0;
      for (int k = 0; k < kFilterTaps; ++k)
        acc += weights[size_t(k) * width + i] * input[size_t(s + k) * width + i];
      output[size_t(s) * width + i] = acc;
    }
}

}  // namespace

struct PolyphaseFilterBank::Plans {
  fftwf_plan chunk = nullptr;   // kSpectraPerPlan spectra
  fftwf_plan single = nullptr;  // one spectrum
  ~Plans() {
    std::lock_guard lock(fftwPlannerMutex());
    if (chunk) fftwf_destroy_plan(chunk);
    if (single) fftwf_destroy_plan(single);
  }
};

PolyphaseFilterBank::PolyphaseFilterBank(int nrChannels, int maxSpectra, Isa isa)
    : nrChannels_(nrChannels),
      maxSpectra_(maxSpectra),
      history_(nrChannels > 1 ? (kFilterTaps - 1) * nrChannels : 0),
      isa_(CorrelatorKernel::resolve(isa, "PolyphaseFilterBank")) {
  if (nrChannels < 1 || (nrChannels & (nrChannels - 1)) || maxSpectra < 1)
    throw std::invalid_argument("PolyphaseFilterBank: " + std::to_string(nrChannels) +
                                " channels (need a power of two), " + std::to_string(maxSpectra) +
                                " spectra");
  if (nrChannels == 1) return;
  prototype_ = prototypeFilter(nrChannels, kFilterTaps);
  weights_ = AlignedBuffer<float>(size_t(kFilterTaps) * nrChannels * 4);
  for (int k = 0; k < kFilterTaps; ++k)
    for (int c = 0; c < nrChannels; ++c)
      for (int j = 0; j < 4; ++j)
        weights_[(size_t(k) * nrChannels + c) * 4 + j] =
            float(prototype_[size_t(k) * nrChannels + c] * (c % 2 ? -1 : 1));
  plans_ = std::make_unique<Plans>();
  AlignedBuffer<std::complex<float>> scratch(size_t(kSpectraPerPlan) * nrChannels * 2);
  plans_->chunk = makePlan(nrChannels, kSpectraPerPlan, scratch.data());
  plans_->single = makePlan(nrChannels, 1, scratch.data());
}

PolyphaseFilterBank::~PolyphaseFilterBank() = default;

void PolyphaseFilterBank::firFilter(const float* input, int nrSpectra, float* output) const {
  const int width = 4 * nrChannels_;
  if (width % 16 != 0)
    firKernelNarrow(input, weights_.data(), width, nrSpectra, output);
  else if (isa_ == Isa::kAvx512)
    firKernelAvx512(input, weights_.data(), width, nrSpectra, output);
  else if (isa_ == Isa::kAvx2)
    firKernelAvx2(input, weights_.data(), width, nrSpectra, output);
  else
    firKernelPlain(input, weights_.data(), width, nrSpectra, output);
}

void PolyphaseFilterBank::fft(std::complex<float>* spectra, int nrSpectra) const {
  if (fftwf_alignment_of(reinterpret_cast<float*>(spectra)) != 0)
    throw std::invalid_argument("PolyphaseFilterBank: spectra buffer not 16-byte aligned");
  const size_t stride = 2 * size_t(nrChannels_);
  int s = 0;
  for (; s + kSpectraPerPlan <= nrSpectra; s += kSpectraPerPlan) {
    auto* data = reinterpret_cast<fftwf_complex*>(spectra + s * stride);
    fftwf_execute_dft(plans_->chunk, data, data);
  }
  for (; s < nrSpectra; ++s) {
    auto* data = reinterpret_cast<fftwf_complex*>(spectra + s * stride);
    fftwf_execute_dft(plans_->single, data, data);
  }
}

void PolyphaseFilterBank::filter(const std::complex<float>* input, int nrSpectra,
                                 std::complex<float>* spectra) const {
  if (nrSpectra > maxSpectra_ || nrSpectra < 0)
    throw std::invalid_argument("PolyphaseFilterBank: " + std::to_string(nrSpectra) +
                                " spectra requested, at most " + std::to_string(maxSpectra_));
  if (nrChannels_ == 1) {
    std::memcpy(static_cast<void*>(spectra), input,
                sizeof(std::complex<float>) * 2 * size_t(nrSpectra));
    return;
  }
  firFilter(reinterpret_cast<const float*>(input), nrSpectra, reinterpret_cast<float*>(spectra));
  fft(spectra, nrSpectra);
}

}  // namespace rtcp::correlator
