#pragma once
/// \file Benchmark.h
/// Benchmarks for `rtcp-bench WHAT`. Each part registers its benchmarks from a file
/// in its own folder (built into an OBJECT library rtcp_bench_<part> that tools/
/// links); a benchmark prints `name: value` lines to standard output. Figures that
/// depend on the machine are given as ratios to a reference measured in the same run.

#include <functional>
#include <map>
#include <string>

namespace rtcp {

struct BenchmarkEntry {
  std::string description;
  std::function<int(int argc, char** argv)> run;  ///< arguments after WHAT
};

std::map<std::string, BenchmarkEntry>& benchmarkRegistry();

/// Registers a benchmark at static-initialisation time.
struct BenchmarkRegistrar {
  BenchmarkRegistrar(const std::string& name, const std::string& description,
                     std::function<int(int, char**)> run) {
    benchmarkRegistry()[name] = {description, std::move(run)};
  }
};

/// Measured FP32 fused-multiply-add peak of this machine in GFLOP/s (2 flops per FMA
/// lane), from independent FMA chains in the widest vector unit on `threads` threads
/// (0: every core).
double measureFmaPeakGflops(int threads = 0);

/// The same peak on the calling thread per second of its CPU time: on a shared machine,
/// time slices given to other processes do not count against it.
double measureFmaPeakGflopsPerCpuSecond();

/// CPU seconds the calling thread has used.
double threadCpuSeconds();
/// CPU seconds the whole process (every thread) has used.
double processCpuSeconds();

/// Single-thread memcpy bandwidth in Gb/s (64 MiB copied for 0.3 s): the machine reference
/// for figures of bytes moved.
double measureMemcpyGbps();

/// Prints `name: value` on standard output.
void printFigure(const std::string& name, double value);
void printFigure(const std::string& name, const std::string& value);

}  // namespace rtcp

#define RTCP_REGISTER_BENCHMARK(name, description, function) \
  static ::rtcp::BenchmarkRegistrar rtcp_benchmark_registrar_##function(name, description, function)
