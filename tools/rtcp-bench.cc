// rtcp-bench WHAT [ARGS]: runs the named benchmark (see `rtcp-bench --help`) and prints
// `name: value` lines.
#include <cstdio>
#include <cstring>
#include <exception>

#include "rtcp/Benchmark.h"
#include "rtcp/Logger.h"

namespace {

void printHelp() {
  std::printf("usage: rtcp-bench WHAT [ARGS]\n\nbenchmarks:\n");
  std::printf("  %-12s %s\n", "peak", "FP32 FMA peak of this machine (every core)");
  for (const auto& [name, entry] : rtcp::benchmarkRegistry())
    std::printf("  %-12s %s\n", name.c_str(), entry.description.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  rtcp::Logger::setProcessName("rtcp-bench");
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    printHelp();
    return argc < 2 ? 1 : 0;
  }
  const std::string what = argv[1];
  try {
    if (what == "peak" && argc > 2) {
      std::printf("usage: rtcp-bench peak: %s\n", "FP32 FMA peak of this machine (every core)");
      return !std::strcmp(argv[2], "--help") || !std::strcmp(argv[2], "-h") ? 0 : 1;
    }
    if (what == "peak") {
      rtcp::printFigure("fma_peak_gflops", rtcp::measureFmaPeakGflops());
      return 0;
    }
    const auto found = rtcp::benchmarkRegistry().find(what);
    if (found == rtcp::benchmarkRegistry().end()) {
      std::fprintf(stderr, "rtcp-bench: unknown benchmark '%s'\n", what.c_str());
      printHelp();
      return 1;
    }
    return found->second.run(argc - 2, argv + 2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rtcp-bench %s: %s\n", what.c_str(), e.what());
    return 1;
  }
}
