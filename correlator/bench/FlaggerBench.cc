// `rtcp-bench flagger`: the online RFI flaggers' cost. Pre-correlation: the hot chain
// (16 stations, 64 channels, 768 spectra, one thread; ChainInputs.h) with and without
// flagging, per second of the thread's CPU, interleaved; its share of the chain. Post-
// correlation: AOFlagger's LOFAR strategy on 24 stations × 64 channels, 1 s integrations,
// windows of 16 overlapping by 4 (the defaults), per second of the thread's CPU; against
// what LOFAR's 488 subbands × 24 stations of 1 s integrations ask of one core.
#include <memory>
#include <random>

#include "BenchTiming.h"
#include "ChainInputs.h"
#include "PostCorrelationFlagger.h"
#include "SubbandProcessor.h"
#include "rtcp/Baselines.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {
namespace {

double chainCpuSeconds(HotBlocks& blocks, const ObservationSettings& settings) {
  SubbandProcessor processor(settings, 1);
  CorrelatedData output = processor.makeOutput();
  return bestSecondsPerCall([&] { blocks.processNext(processor, output); }, 5, 0.3,
                            threadCpuSeconds);
}

/// CPU seconds of the post-correlation flagger per integration of one subband.
double postCpuSecondsPerIntegration(int nrStations, int nrChannels, int nrIntegrations) {
  FlaggingSettings settings;
  settings.online = settings.postCorrelation = true;
  std::mt19937 random(4);
  std::normal_distribution<float> gauss(0, 1);
  std::vector<std::unique_ptr<CorrelatedData>> integrations;
  for (int i = 0; i < nrIntegrations; ++i) {
    auto d = std::make_unique<CorrelatedData>(nrStations, nrChannels);
    for (auto& v : d->visibilities) v = {gauss(random), gauss(random)};
    for (auto& n : d->validSamples) n = 3052;
    d->integration = i;
    integrations.push_back(std::move(d));
  }
  size_t handedOn = 0;
  ion::PostCorrelationFlagger flagger(settings,
                                      [&](std::unique_ptr<CorrelatedData>) { ++handedOn; });
  const double start = threadCpuSeconds();
  for (auto& d : integrations) flagger.add(std::move(d));
  flagger.flush();
  return (threadCpuSeconds() - start) / double(nrIntegrations);
}

int run(int, char**) {
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

  const int stations = 24, channels = 64;
  const double perIntegration = postCpuSecondsPerIntegration(stations, channels, 48);
  printFigure("flagger.post.N24.C64.cpu_seconds_per_subband_integration", perIntegration);
  printFigure("flagger.post.cpu_seconds_per_station_subband_second", perIntegration / stations);
  // LOFAR: 488 subbands, 1 s integrations: 488 subband-integrations per second.
  printFigure("flagger.post.lofar_488_subbands_realtime_ratio_one_core",
              1.0 / (488 * perIntegration));
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK("flagger",
                        "online RFI flaggers: pre-correlation share of the chain, "
                        "post-correlation (AOFlagger) against LOFAR's 488 subbands on one core",
                        run);

}  // namespace rtcp::correlator::bench
