#include "PostCorrelationFlagger.h"

#include <aoflagger.h>
#include <time.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "IncoherentStations.h"
#include "rtcp/Baselines.h"

namespace rtcp::ion {

namespace {

const std::string kStrategyKey = "Rtcp.Flagging.postCorrelation.strategy";

double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace

struct PostCorrelationFlagger::Aoflagger {
  aoflagger::AOFlagger library;
  aoflagger::Strategy strategy;
};

PostCorrelationFlagger::PostCorrelationFlagger(const FlaggingSettings& settings, Emit emit)
    : settings_(settings), emit_(std::move(emit)) {
  if (!settings_.postCorrelation) return;
  aoflagger_ = std::make_unique<Aoflagger>();
  strategyFile_ = settings_.strategy;
  if (strategyFile_.empty()) {
    strategyFile_ = aoflagger_->library.FindStrategyFile(aoflagger::TelescopeId::LOFAR_TELESCOPE);
    if (strategyFile_.empty())
      throw std::runtime_error(
          "AOFlagger has no LOFAR strategy installed (package aoflagger); "
          "name one with " +
          kStrategyKey);
  } else if (!std::filesystem::is_regular_file(strategyFile_)) {
    throw std::runtime_error(kStrategyKey + ": no strategy file " + strategyFile_);
  }
  try {
    aoflagger_->strategy = aoflagger_->library.LoadStrategyFile(strategyFile_);
  } catch (const std::exception& e) {
    throw std::runtime_error(kStrategyKey + ": AOFlagger cannot load " + strategyFile_ + ": " +
                             e.what());
  }
}

PostCorrelationFlagger::~PostCorrelationFlagger() = default;

void PostCorrelationFlagger::add(std::unique_ptr<CorrelatedData> integration) {
  std::lock_guard lock(mutex_);
  Subband& subband = subbands_[integration->subband];
  auto at = std::upper_bound(
      subband.held.begin(), subband.held.end(), integration->integration,
      [](int64_t i, const std::unique_ptr<CorrelatedData>& d) { return i < d->integration; });
  if (at - subband.held.begin() < subband.decided) {  // later than its window: as it is
    ++statistics_.integrations;
    emit_(std::move(integration));
    return;
  }
  subband.held.insert(at, std::move(integration));
  const size_t window = size_t(settings_.postWindow), overlap = size_t(settings_.postOverlap);
  if (subband.held.size() < window) return;
  flagWindow(subband, size_t(subband.decided), window - overlap);
  handOn(subband, window - 2 * overlap);
}

void PostCorrelationFlagger::flush() {
  std::lock_guard lock(mutex_);
  for (auto& [index, subband] : subbands_) {
    if (subband.held.empty()) continue;
    flagWindow(subband, size_t(subband.decided), subband.held.size());
    handOn(subband, subband.held.size());
  }
}

void PostCorrelationFlagger::flagWindow(Subband& subband, size_t from, size_t to) {
  const double start = threadSeconds();
  const size_t N = size_t(subband.held.front()->nrStations);
  if (statistics_.stationVisibilities.size() < N) {
    statistics_.stationVisibilities.resize(N);
    statistics_.stationFlagged.resize(N);
    statistics_.incoherent.resize(N);
  }
  // The broken stations first: AOFlagger would flag parts of their baselines (zeros,
  // noise bursts) and leave their autocorrelations, which the check needs beside them.
  if (settings_.detectBrokenStations) flagIncoherentStations(subband, from, to);
  if (aoflagger_) runAoflagger(subband, from, to);
  subband.decided = int(to);
  statistics_.seconds += threadSeconds() - start;
}

void PostCorrelationFlagger::flagIncoherentStations(Subband& subband, size_t from, size_t to) {
  const int N = subband.held.front()->nrStations, C = subband.held.front()->nrChannels;
  std::vector<CorrelatedData*> window;
  for (const auto& integration : subband.held) window.push_back(integration.get());
  const std::vector<bool> incoherent = findIncoherentStations(coherenceSignificance(window), N);
  for (int s = 0; s < N; ++s) {
    if (!incoherent[size_t(s)]) continue;
    for (size_t t = from; t < to; ++t) {
      CorrelatedData& d = *subband.held[t];
      bool anyData = false;
      for (int other = 0; other < N; ++other) {
        const int baseline = baselineIndex(std::min(s, other), std::max(s, other));
        for (int c = 0; c < C; ++c) {
          anyData |= d.valid(baseline, c) > 0;
          d.valid(baseline, c) = 0;
          for (int p = 0; p < 4; ++p) d.visibility(baseline, c, p) = 0;
        }
      }
      statistics_.incoherent[size_t(s)] += anyData;
    }
  }
}

void PostCorrelationFlagger::runAoflagger(Subband& subband, size_t from, size_t to) {
  const CorrelatedData& first = *subband.held.front();
  const size_t T = subband.held.size();
  const int N = first.nrStations, C = first.nrChannels;
  aoflagger::ImageSet images = aoflagger_->library.MakeImageSet(T, size_t(C), 8);
  aoflagger::FlagMask existing = aoflagger_->library.MakeFlagMask(T, size_t(C), false);
  const size_t stride = images.HorizontalStride();
  const size_t flagStride = existing.HorizontalStride();
  for (int s2 = 0; s2 < N; ++s2)
    for (int s1 = 0; s1 < s2; ++s1) {
      const int baseline = baselineIndex(s1, s2);
      bool anyData = false;
      for (size_t t = 0; t < T; ++t) {
        CorrelatedData& d = *subband.held[t];
        for (int c = 0; c < C; ++c) {
          const uint32_t valid = d.valid(baseline, c);
          const float scale = valid ? 1.0f / float(valid) : 0.0f;
          for (int p = 0; p < 4; ++p) {
            const std::complex<float> v = d.visibility(baseline, c, p) * scale;
            images.ImageBuffer(size_t(2 * p))[size_t(c) * stride + t] = v.real();
            images.ImageBuffer(size_t(2 * p + 1))[size_t(c) * stride + t] = v.imag();
          }
          existing.Buffer()[size_t(c) * flagStride + t] = valid == 0;
          anyData |= valid > 0;
        }
      }
      if (!anyData) continue;
      const aoflagger::FlagMask found = aoflagger_->strategy.Run(images, existing);
      ++statistics_.windows;
      const size_t foundStride = found.HorizontalStride();
      for (size_t t = from; t < to; ++t) {
        CorrelatedData& d = *subband.held[t];
        for (int c = 0; c < C; ++c) {
          if (d.valid(baseline, c) == 0) continue;
          ++statistics_.visibilities;
          ++statistics_.stationVisibilities[size_t(s1)];
          ++statistics_.stationVisibilities[size_t(s2)];
          if (!found.Buffer()[size_t(c) * foundStride + t]) continue;
          ++statistics_.flagged;
          ++statistics_.stationFlagged[size_t(s1)];
          ++statistics_.stationFlagged[size_t(s2)];
          d.valid(baseline, c) = 0;
          for (int p = 0; p < 4; ++p) d.visibility(baseline, c, p) = 0;
        }
      }
    }
}

void PostCorrelationFlagger::handOn(Subband& subband, size_t count) {
  for (size_t i = 0; i < count && !subband.held.empty(); ++i) {
    std::unique_ptr<CorrelatedData> integration = std::move(subband.held.front());
    subband.held.pop_front();
    --subband.decided;
    ++statistics_.integrations;
    emit_(std::move(integration));
  }
  subband.decided = std::max(0, subband.decided);
}

PostCorrelationFlagger::Statistics PostCorrelationFlagger::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

}  // namespace rtcp::ion
