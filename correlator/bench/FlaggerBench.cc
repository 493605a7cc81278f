// `rtcp-bench flagger`: the online RFI flaggers' cost. Pre-correlation: the hot chain
// (16 stations, 64 channels, 768 spectra, one thread; ChainInputs.h) with and without
// flagging, per second of the thread's CPU, interleaved; its share of the chain. Post-
// correlation (PostFlaggerBench.cc): AOFlagger's LOFAR strategy on 24 stations × 64
// channels, 1 s integrations, per window and polarisation setting, against what LOFAR's 488
// subbands × 24 stations of 1 s integrations ask of one core, and its flags on simulated
// interference.

#include <cstdio>
#include <string>

#include "BenchTiming.h"
#include "ChainInputs.h"
#include "PostFlaggerBench.h"
#include "SubbandProcessor.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {
namespace {

double chainCpuSeconds(HotBlocks& blocks, const ObservationSettings& settings) {
  SubbandProcessor processor(settings, 1);
  CorrelatedData output = processor.makeOutput();
  return bestSecondsPerCall([&] { blocks.processNext(processor, output); }, 5, 0.3,
                            threadCpuSeconds);
}

void printPreCorrelationFigures() {
  HotBlocks hot(16);
  ObservationSettings on = hot.settings();
  on.flagging.online = on.flagging.preCorrelation = on.flagging.detectBrokenStations = true;
  double off = 1e30, with = 1e30;
  for (int round = 0; round < 2; ++round) {  // interleaved: the machine's load moves
    off = std::min(off, chainCpuSeconds(hot, hot.settings()));
    with = std::min(with, chainCpuSeconds(hot, on));
  }
  const double block = hot.settings().blockDuration();
  printFigure("flagger.pre.N16.chain_cpu_seconds_per_subband_block", off);
  printFigure("flagger.pre.N16.chain_with_flagging_cpu_seconds_per_subband_block", with);
  printFigure("flagger.pre.cpu_seconds_per_station_subband_second", (with - off) / 16 / block);
  printFigure("flagger.pre.fraction_of_chain", (with - off) / off);
}

/// `--post-only`: the post-correlation figures alone.
int run(int argc, char** argv) {
  if (argc > 0 && (std::string(argv[0]) == "--help" || std::string(argv[0]) == "-h")) {
    std::printf("usage: rtcp-bench flagger [--post-only]: the post-correlation figures alone\n");
    return 0;
  }
  if (!(argc > 0 && std::string(argv[0]) == "--post-only")) printPreCorrelationFigures();
  printPostCorrelationFigures();
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK("flagger",
                        "online RFI flaggers: pre-correlation share of the chain, "
                        "post-correlation (AOFlagger) against LOFAR's 488 subbands on one core",
                        run);

}  // namespace rtcp::correlator::bench
