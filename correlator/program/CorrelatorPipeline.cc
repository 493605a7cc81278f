#include "CorrelatorPipeline.h"

#include <chrono>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

#include "BeamFormerProcessor.h"
#include "MpiCheck.h"
#include "SubbandProcessor.h"
#include "rtcp/Integrations.h"

namespace rtcp::correlator {

namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The first exception of either thread, to rethrow from run().
class FirstFailure {
 public:
  void set(std::exception_ptr failure) {
    std::lock_guard lock(mutex_);
    if (!failure_) failure_ = failure;
  }
  void rethrow() {
    std::lock_guard lock(mutex_);
    if (failure_) std::rethrow_exception(failure_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr failure_;
};

}  // namespace

CorrelatorPipeline::CorrelatorPipeline(const ObservationSettings& settings, MPI_Comm comm,
                                       StationBlockFetcher& fetcher, VisibilityOutput& output,
                                       Options options)
    : settings_(settings),
      comm_(comm),
      fetcher_(fetcher),
      output_(output),
      options_(options),
      distribution_(WorkDistribution::forObservation(
          [comm] {
            int size = 1;
            MPI_Comm_size(comm, &size);
            return size;
          }(),
          settings)),
      transpose_(comm, distribution_, settings.nrStations()) {
  MPI_Comm_rank(comm, &rank_);
  const int nrSamples = nrHistorySamples(settings) + int(settings.samplesPerBlock());
  const int nrSets = std::max(1, options.queueBlocks);
  // Every rank must agree: the others' exchange would wait for a rank that lends.
  int lends = options.lentSubbands && fetcher.lendsSubbands() ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &lends, 1, MPI_INT, MPI_MIN, comm);
  lentSubbands_ = lends == 1;
  if (lentSubbands_) {
    for (int i = 0; i < nrSets; ++i) {
      auto set = std::make_unique<BlockSet>();
      set->index = i;
      set->pointers.assign(size_t(settings.nrStations()), nullptr);
      pool_.add(std::move(set));
    }
    return;
  }
  ownStations_ = distribution_.stationsOf(rank_);
  for (size_t k = 0; k < ownStations_.size(); ++k)
    fetched_.push_back(
        std::make_unique<StationBlock>(settings.nrSubbands(), nrSamples, settings.bitsPerSample));
  if (options.sharedMemoryExchange && SharedMemoryTranspose::possible(comm))
    shared_ = std::make_unique<SharedMemoryTranspose>(comm, distribution_, settings.nrStations(),
                                                      nrSets, nrSamples, settings.bitsPerSample);
  for (int i = 0; i < nrSets; ++i) {
    auto set = std::make_unique<BlockSet>();
    set->index = i;
    for (int s = 0; s < settings.nrStations(); ++s) {
      if (shared_) {
        set->pointers.push_back(&shared_->block(i, s));
        continue;
      }
      set->stations.push_back(std::make_unique<StationBlock>(distribution_.maxSubbandsPerRank(),
                                                             nrSamples, settings.bitsPerSample));
      set->pointers.push_back(set->stations.back().get());
    }
    pool_.add(std::move(set));
  }
}

void CorrelatorPipeline::run() {
  const auto start = Clock::now();
  // The processors (FFTW plans measured, the beam former's subband states with their
  // dedispersion chirps) before the first block is asked for: made while ionproc serves
  // blocks, they made the first blocks of beam-formed observations late.
  SubbandProcessor processor(settings_, options_.nrThreads);
  const std::unique_ptr<beamformed::BeamFormerProcessor> beamFormer = makeBeamFormer();
  FirstFailure failure;
  std::thread processing([&] {
    try {
      process(processor, beamFormer.get());
    } catch (...) {
      failure.set(std::current_exception());
      pool_.close();  // the main thread stops at its next free.pop()
    }
  });
  try {
    if (lentSubbands_)
      lendOwnSubbands();
    else
      fetchAndExchange();
  } catch (...) {
    failure.set(std::current_exception());
  }
  pool_.filled.close();  // the processing thread drains what is there and ends
  processing.join();
  if (lentSubbands_) {
    try {
      fetcher_.release();
    } catch (...) {
      failure.set(std::current_exception());
    }
  }
  failure.rethrow();
  if (!output_.finish()) throw std::runtime_error("some output did not reach its destination");
  statistics_.wallSeconds = secondsSince(start);
}

void CorrelatorPipeline::fetchAndExchange() {
  std::vector<const StationBlock*> fetched(fetched_.size());
  // Blocks past the last whole integration would integrate into nothing.
  const int64_t nrBlocks = nrProcessedBlocks(settings_);
  for (int64_t block = firstProcessedBlock(settings_); block < nrBlocks; ++block) {
    const auto fetchStart = Clock::now();
    // Into fetched_, or lent in place from ionproc's shared memory until the next fetch.
    for (size_t k = 0; k < ownStations_.size(); ++k)
      fetched[k] = &fetcher_.fetch(block, ownStations_[k], *fetched_[k]);
    statistics_.fetchSeconds += secondsSince(fetchStart);

    std::optional<std::unique_ptr<BlockSet>> set = pool_.free.pop();
    if (!set) return;  // the processing thread failed
    if (shared_) {
      shared_->transpose(block, fetched, (*set)->index, (*set)->subbands);
    } else {
      std::vector<StationBlock*> received;
      for (auto& station : (*set)->stations) received.push_back(station.get());
      transpose_.transpose(block, fetched, received, (*set)->subbands);
    }
    (*set)->block = block;
    if (block >= 0) ++statistics_.blocks;
    if (!pool_.filled.push(std::move(*set))) return;
  }
  fetcher_.release();
  statistics_.exchangeWaitSeconds =
      shared_ ? shared_->secondsWaiting() : transpose_.secondsWaiting();
  statistics_.exchangeSeconds =
      shared_ ? shared_->secondsTransferring() : transpose_.secondsTransferring();
  statistics_.bytesExchanged = shared_ ? shared_->bytesSent() : transpose_.bytesSent();
}

void CorrelatorPipeline::lendOwnSubbands() {
  const int64_t nrBlocks = nrProcessedBlocks(settings_);
  for (int64_t block = firstProcessedBlock(settings_); block < nrBlocks; ++block) {
    // The free set's blocks are processed: its leases may end (lease number = set index).
    std::optional<std::unique_ptr<BlockSet>> set = pool_.free.pop();
    if (!set) return;  // the processing thread failed
    const auto fetchStart = Clock::now();
    const WorkDistribution::SubbandRange range = distribution_.subbandRange(rank_, block);
    (*set)->subbands = distribution_.subbandsOf(rank_, block);
    if (range.count > 0)
      for (int s = 0; s < settings_.nrStations(); ++s)
        (*set)->pointers[size_t(s)] =
            &fetcher_.lendSubbands(block, s, range.first, range.count, (*set)->index);
    statistics_.fetchSeconds += secondsSince(fetchStart);
    // Every rank has been served this block before any asks for the next: ionproc releases
    // a station's older blocks as it serves newer ones (its input waits for room when not
    // in real time), and a rank running ahead would let the others' blocks go.
    MPI_Request request;
    checkMpi(MPI_Ibarrier(comm_, &request), "MPI_Ibarrier");
    statistics_.exchangeWaitSeconds += waitSleeping(request);
    (*set)->block = block;
    if (block >= 0) ++statistics_.blocks;
    if (!pool_.filled.push(std::move(*set))) return;
  }
  // The leases end in run(), once the processing thread is done with them.
}

void CorrelatorPipeline::leadIn(const BlockSet& blocks, beamformed::BeamFormerProcessor& beamFormer,
                                std::map<int, std::vector<BeamFormedData>>& outputs) {
  for (size_t j = 0; j < blocks.subbands.size(); ++j) {
    const int subband = blocks.subbands[j];
    if (beamFormer.nrTabs(settings_.subbands[size_t(subband)].beam) == 0) continue;
    std::vector<BeamFormedData>& tabs = outputs[subband];
    if (tabs.empty()) tabs = beamFormer.makeOutputs(subband);
    beamFormer.process(blocks.pointers, int(j), subband, tabs);
  }
  ++statistics_.leadInBlocks;
}

CorrelatorPipeline::Progress CorrelatorPipeline::progress() const {
  std::lock_guard lock(progressMutex_);
  Progress progress = progress_;
  if (liveSteps_) progress.steps = *liveSteps_;  // relaxed atomics: a snapshot
  return progress;
}

std::string CorrelatorPipeline::exchangeDescription() const {
  if (lentSubbands_) return "none: each rank lends its subbands of every station from ionproc";
  return shared_ ? "in MPI-3 shared memory" : "by MPI messages";
}

std::unique_ptr<beamformed::BeamFormerProcessor> CorrelatorPipeline::makeBeamFormer() const {
  if (!settings_.beamFormed.enabled()) return nullptr;
  auto beamFormer = std::make_unique<beamformed::BeamFormerProcessor>(
      settings_, beamformed::BeamFormerParameters::from(settings_.beamFormed), options_.nrThreads);
  // Beam-formed observations keep each subband on its rank (WorkDistribution).
  for (int subband : distribution_.subbandsOf(rank_, 0))
    if (beamFormer->nrTabs(settings_.subbands[size_t(subband)].beam) > 0)
      beamFormer->prepare(subband);
  return beamFormer;
}

void CorrelatorPipeline::process(SubbandProcessor& processor,
                                 beamformed::BeamFormerProcessor* beamFormer) {
  CorrelatedData output = processor.makeOutput();
  // Correlated and beam-formed at once, as COBALT does: the beam former takes the same
  // blocks. Its outputs are kept per subband (their shapes and labels differ by SAP).
  std::map<int, std::vector<BeamFormedData>> beamFormed;
  {
    std::lock_guard lock(progressMutex_);
    liveSteps_ = &processor.stepTimes();
  }
  // Without correlated output nothing takes the visibilities: the ranks only form beams.
  const bool correlate = settings_.correlatedOutput.enabled;
  while (std::optional<std::unique_ptr<BlockSet>> set = pool_.filled.pop()) {
    const auto start = Clock::now();
    const BlockSet& blocks = **set;
    if (blocks.block < 0) {  // only the beam former's lead-in comes before block 0
      if (beamFormer) leadIn(blocks, *beamFormer, beamFormed);
      statistics_.leadInSeconds += secondsSince(start);
      pool_.free.push(std::move(*set));
      continue;
    }
    std::map<std::pair<int, int>, std::pair<double, int>> tabPower;  // sum, subbands
    for (size_t j = 0; j < blocks.subbands.size(); ++j) {
      if (correlate) {
        processor.process(blocks.pointers, int(j), blocks.subbands[j], output);
        output_.write(blocks.subbands[j], blocks.block, output);
      }
      ++statistics_.subbandBlocks;
      if (!beamFormer ||
          beamFormer->nrTabs(settings_.subbands[size_t(blocks.subbands[j])].beam) == 0)
        continue;
      std::vector<BeamFormedData>& tabs = beamFormed[blocks.subbands[j]];
      if (tabs.empty()) tabs = beamFormer->makeOutputs(blocks.subbands[j]);
      beamFormer->process(blocks.pointers, int(j), blocks.subbands[j], tabs);
      for (const BeamFormedData& tab : tabs) {
        auto& [sum, subbands] = tabPower[{tab.sap, tab.tab}];
        sum += meanPower(tab);
        ++subbands;
      }
      output_.writeBeamFormed(tabs);
      ++statistics_.beamFormedSubbandBlocks;
    }
    statistics_.processingSeconds += secondsSince(start);
    {
      std::lock_guard lock(progressMutex_);
      ++progress_.blocks;
      progress_.subbandBlocks = statistics_.subbandBlocks;
      progress_.processingSeconds = statistics_.processingSeconds;
      if (!tabPower.empty()) {
        progress_.tabBlock = blocks.block;
        progress_.tabPower.clear();
        for (const auto& [tab, sum] : tabPower) progress_.tabPower[tab] = sum.first / sum.second;
      }
    }
    pool_.free.push(std::move(*set));
  }
  statistics_.steps = processor.stepTimes();
  {
    std::lock_guard lock(progressMutex_);
    progress_.steps = statistics_.steps;
    liveSteps_ = nullptr;
  }
  statistics_.flags = processor.flagTotals();
  if (!beamFormer) return;
  statistics_.beamFormerSteps = beamFormer->stepTimes();
  if (correlate)
    statistics_.beamFormerFlags = beamFormer->flagTotals();
  else
    statistics_.flags = beamFormer->flagTotals();
}

}  // namespace rtcp::correlator
