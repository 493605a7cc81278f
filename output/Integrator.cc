#include "Integrator.h"

#include <stdexcept>
#include <string>

#include "rtcp/Baselines.h"
#include "rtcp/Logger.h"

namespace rtcp::ion {

Integrator::Integrator(int blocksPerIntegration, std::vector<int> subbandNumbers, int64_t nrBlocks,
                       Emit emit, int maxOpenIntegrations)
    : integrations_(blocksPerIntegration),
      subbandNumbers_(std::move(subbandNumbers)),
      nrBlocks_(nrBlocks),
      emit_(std::move(emit)),
      maxOpen_(maxOpenIntegrations) {}

namespace {
std::vector<int> subbandNumbersOf(const ObservationSettings& settings) {
  std::vector<int> numbers;
  for (const SubbandSettings& s : settings.subbands) numbers.push_back(s.number);
  return numbers;
}
}  // namespace

Integrator::Integrator(const ObservationSettings& settings, Emit emit, int maxOpenIntegrations)
    : Integrator(settings.blocksPerIntegration, subbandNumbersOf(settings),
                 nrProcessedBlocks(settings), std::move(emit), maxOpenIntegrations) {}

void Integrator::add(int subbandIndex, int64_t block, int nrStations, int nrChannels,
                     std::span<const std::complex<float>> visibilities,
                     std::span<const uint32_t> validSamples) {
  if (subbandIndex < 0 || subbandIndex >= int(subbandNumbers_.size()))
    throw std::invalid_argument("subband index " + std::to_string(subbandIndex) + " out of range");
  if (block < 0 || (nrBlocks_ >= 0 && block >= nrBlocks_))
    throw std::invalid_argument("block " + std::to_string(block) + " out of range");
  // The shape comes from the link: checked before it is computed with (no overflow).
  const bool shapeOk = nrStations >= 1 && nrChannels >= 1 && nrStations <= kMaxStations &&
                       nrChannels <= kMaxChannels;
  const size_t cells =
      shapeOk ? size_t(nrStations) * size_t(nrStations + 1) / 2 * size_t(nrChannels) : 0;
  if (!shapeOk || visibilities.size() != cells * kNrPolarisationProducts ||
      validSamples.size() != cells)
    throw std::invalid_argument("visibilities of " + std::to_string(visibilities.size()) +
                                " and counts of " + std::to_string(validSamples.size()) +
                                " do not fit " + std::to_string(nrStations) + " stations x " +
                                std::to_string(nrChannels) + " channels");
  const int64_t integration = integrations_.of(block);
  const int slot = integrations_.slotOf(block);
  const Key key{subbandIndex, integration};
  std::vector<std::unique_ptr<CorrelatedData>> out;
  {
    std::lock_guard lock(mutex_);
    if (closed_.count(key)) {
      ++statistics_.late;
      RTCP_LOG_WARN("integrator", "block " << block << " of subband "
                                           << subbandNumbers_[subbandIndex]
                                           << " came after its integration was sent; dropped");
      return;
    }
    auto it = open_.find(key);
    if (it == open_.end()) {
      closeOlder(subbandIndex, integration, out);
      Open fresh;
      fresh.data = takeSpare(nrStations, nrChannels);
      fresh.data->subband = subbandIndex;
      fresh.data->integration = integration;
      fresh.added.assign(size_t(integrations_.blocksPerIntegration), false);
      it = open_.emplace(key, std::move(fresh)).first;
    }
    Open& open = it->second;
    if (open.data->nrStations != nrStations || open.data->nrChannels != nrChannels)
      throw std::invalid_argument("block shape differs from the integration's earlier blocks");
    if (open.added[slot]) {
      ++statistics_.duplicates;
      RTCP_LOG_WARN("integrator", "block " << block << " of subband "
                                           << subbandNumbers_[subbandIndex]
                                           << " arrived twice; ignored");
      return;
    }
    // Summing under the lock keeps it simple; it is a few vector adds per block. The first
    // block is copied: a recycled integration holds stale sums.
    std::complex<float>* sum = open.data->visibilities.data();
    uint32_t* count = open.data->validSamples.data();
    if (open.nrAdded == 0) {
      std::copy(visibilities.begin(), visibilities.end(), sum);
      std::copy(validSamples.begin(), validSamples.end(), count);
    } else {
      for (size_t i = 0; i < visibilities.size(); ++i) sum[i] += visibilities[i];
      for (size_t i = 0; i < validSamples.size(); ++i) count[i] += validSamples[i];
    }
    open.added[slot] = true;
    ++statistics_.blocks;
    const int64_t end = integrations_.firstBlock(integration + 1);
    const int64_t lastBlock = nrBlocks_ >= 0 ? std::min<int64_t>(nrBlocks_, end) : end;
    if (++open.nrAdded == int(lastBlock - integrations_.firstBlock(integration))) close(it, out);
  }
  for (auto& data : out) emit_(std::move(data));
}

std::unique_ptr<CorrelatedData> Integrator::takeSpare(int nrStations, int nrChannels) {
  while (!spares_.empty()) {
    std::unique_ptr<CorrelatedData> spare = std::move(spares_.back());
    spares_.pop_back();
    if (spare->nrStations == nrStations && spare->nrChannels == nrChannels) return spare;
  }
  return std::make_unique<CorrelatedData>(nrStations, nrChannels);
}

void Integrator::recycle(std::unique_ptr<CorrelatedData> spent) {
  std::lock_guard lock(mutex_);
  if (spent && spares_.size() < kMaxSpares) spares_.push_back(std::move(spent));
}

void Integrator::closeOlder(int subbandIndex, int64_t integration,
                            std::vector<std::unique_ptr<CorrelatedData>>& out) {
  for (auto it = open_.begin(); it != open_.end();) {
    const auto next = std::next(it);
    if (it->first.first == subbandIndex && it->first.second <= integration - maxOpen_)
      close(it, out);
    it = next;
  }
}

void Integrator::close(std::map<Key, Open>::iterator it,
                       std::vector<std::unique_ptr<CorrelatedData>>& out) {
  if (it->second.nrAdded < integrations_.blocksPerIntegration) {
    ++statistics_.incompleteIntegrations;
    RTCP_LOG_WARN("integrator", "integration " << it->first.second << " of subband "
                                               << subbandNumbers_[it->first.first] << " sent with "
                                               << it->second.nrAdded << " of "
                                               << integrations_.blocksPerIntegration << " blocks");
  }
  ++statistics_.integrations;
  closed_.insert(it->first);
  out.push_back(std::move(it->second.data));
  open_.erase(it);
}

void Integrator::flush() {
  std::vector<std::unique_ptr<CorrelatedData>> out;
  {
    std::lock_guard lock(mutex_);
    while (!open_.empty()) close(open_.begin(), out);
  }
  for (auto& data : out) emit_(std::move(data));
}

Integrator::Statistics Integrator::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

}  // namespace rtcp::ion
