#include "rtcp/Benchmark.h"

#include <immintrin.h>
#include <omp.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

namespace rtcp {

std::map<std::string, BenchmarkEntry>& benchmarkRegistry() {
  static std::map<std::string, BenchmarkEntry> registry;
  return registry;
}

namespace {

constexpr int kChains = 12;  // independent accumulators: covers FMA latency x ports

/// FMA chains on 512-bit vectors; returns the flops done.
__attribute__((target("avx512f"))) double fmaChains512(long iterations, float* sink) {
  __m512 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm512_set1_ps(0.001f * c);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], a, b);
  __m512 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm512_add_ps(sum, acc[c]);
  float lanes[16];
  _mm512_storeu_ps(lanes, sum);
  *sink = lanes[0];
  return double(iterations) * kChains * 16 * 2;
}

__attribute__((target("avx2,fma"))) double fmaChains256(long iterations, float* sink) {
  __m256 acc[kChains];
  for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(0.001f * c);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);
  __m256 sum = acc[0];
  for (int c = 1; c < kChains; ++c) sum = _mm256_add_ps(sum, acc[c]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  *sink = lanes[0];
  return double(iterations) * kChains * 8 * 2;
}

/// Best GFLOP/s of FMA chains on `threads` threads, timed by `seconds` (a clock in seconds).
template <typename Clock>
double measureFmaPeak(int threads, Clock seconds) {
  if (threads <= 0) threads = omp_get_num_procs();
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const long iterations = 20'000'000;
  double best = 0;
  for (int repeat = 0; repeat < 3; ++repeat) {
    std::vector<float> sinks(threads);
    double flops = 0;
    const double start = seconds();
#pragma omp parallel for num_threads(threads) reduction(+ : flops)
    for (int t = 0; t < threads; ++t)
      flops += avx512 ? fmaChains512(iterations, &sinks[t]) : fmaChains256(iterations, &sinks[t]);
    best = std::max(best, flops / (seconds() - start) / 1e9);
  }
  return best;
}

double wallSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double threadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

double processCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return double(now.tv_sec) + 1e-9 * double(now.tv_nsec);
}

double measureMemcpyGbps() {
  using Clock = std::chrono::steady_clock;
  std::vector<uint8_t> a(64 << 20, 1), b(64 << 20);
  const auto start = Clock::now();
  int rounds = 0;
  while (Clock::now() - start < std::chrono::milliseconds(300)) {
    std::memcpy(b.data(), a.data(), a.size());
    ++rounds;
  }
  return 8.0 * double(a.size()) * rounds /
         std::chrono::duration<double>(Clock::now() - start).count() / 1e9;
}

double measureFmaPeakGflops(int threads) { return measureFmaPeak(threads, wallSeconds); }

double measureFmaPeakGflopsPerCpuSecond() { return measureFmaPeak(1, threadCpuSeconds); }

void printFigure(const std::string& name, double value) {
  std::printf("%s: %.4g\n", name.c_str(), value);
  std::fflush(stdout);
}

void printFigure(const std::string& name, const std::string& value) {
  std::printf("%s: %s\n", name.c_str(), value.c_str());
  std::fflush(stdout);
}

}  // namespace rtcp
