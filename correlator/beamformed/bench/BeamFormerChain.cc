#include "BeamFormerChain.h"

#include <random>
#include <vector>

#include "BeamFormerProcessor.h"
#include "BenchTiming.h"
#include "ChainInputs.h"

namespace rtcp::correlator::beamformed::bench {

double beamFormerSubbandsPerCore(const ObservationSettings& settings, StepTimes* steps) {
  BeamFormerProcessor processor(settings, BeamFormerParameters::from(settings.beamFormed), 1);
  std::mt19937 random(3);
  std::vector<StationBlock> blocks;
  std::vector<const StationBlock*> pointers;
  for (int s = 0; s < settings.nrStations(); ++s)
    blocks.push_back(correlator::bench::randomBlock(settings, s, random));
  for (const StationBlock& block : blocks) pointers.push_back(&block);
  std::vector<BeamFormedData> outputs = processor.makeOutputs(0);
  int64_t number = 0;
  const double seconds = correlator::bench::bestSecondsPerCall(
      [&] {
        for (StationBlock& block : blocks) block.header.block = number;
        ++number;
        processor.process(pointers, 0, 0, outputs);
      },
      3, 0.5, threadCpuSeconds);
  if (steps) *steps = processor.stepTimes();
  return settings.blockDuration() / seconds;
}

}  // namespace rtcp::correlator::beamformed::bench
