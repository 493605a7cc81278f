#include "PostCorrelationFlagger.h"

#include <aoflagger.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <utility>

#include "IncoherentStations.h"
#include "rtcp/Baselines.h"
#include "rtcp/StationTable.h"  // dataDirectory()

namespace rtcp::ion {

namespace {

const std::string kStrategyKey = "Rtcp.Flagging.postCorrelation.strategy";
const std::string kOnlineStrategy = "rtcp-online.lua";  // in the data directory (parsets/)
const std::string kLofarStrategy = "lofar-default";     // AOFlagger's LOFAR strategy

/// The images AOFlagger gets per baseline: real and imaginary of each product it sees.
size_t imagesPerBaseline(PostPolarisations polarisations) {
  switch (polarisations) {
    case PostPolarisations::kParallel:
      return 4;
    case PostPolarisations::kStokesI:
      return 2;
    case PostPolarisations::kAll:
      break;
  }
  return 8;
}

/// The strategy file Rtcp.Flagging.postCorrelation.strategy names: empty, rtcp's online
/// strategy (kOnlineStrategy in the data directory); `lofar-default`, AOFlagger's own LOFAR
/// strategy where AOFlagger installed it; else a path.
std::string findStrategyFile(const std::string& name, aoflagger::AOFlagger& library) {
  if (name.empty()) {
    const std::string file = dataDirectory() + "/" + kOnlineStrategy;
    if (!std::filesystem::is_regular_file(file))
      throw std::runtime_error("rtcp's online strategy " + file +
                               " is missing (RTCP_DATA_DIR?); name one with " + kStrategyKey);
    return file;
  }
  if (name == kLofarStrategy && !std::filesystem::exists(name)) {
    const std::string file = library.FindStrategyFile(aoflagger::TelescopeId::LOFAR_TELESCOPE);
    if (file.empty())
      throw std::runtime_error(kStrategyKey + " = " + name +
                               ": AOFlagger has no LOFAR strategy installed (package aoflagger)");
    return file;
  }
  if (!std::filesystem::is_regular_file(name))
    throw std::runtime_error(kStrategyKey + ": no strategy file " + name);
  return name;
}

double threadSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

}  // namespace

/// What one thread flags with: its own copy of the strategy (Strategy::Run is not
/// thread-safe), the images and existing-flag mask it fills for each baseline (made once per
/// window shape, not per window), and its counts until they are added into the statistics.
struct PostCorrelationFlagger::Worker {
  aoflagger::Strategy strategy;
  aoflagger::ImageSet images;
  aoflagger::FlagMask existing;
  size_t count = 0, height = 0, capacity = 0, width = 0;  ///< of images (0: none yet), existing
  uint64_t windows = 0, visibilities = 0, flagged = 0;
  std::vector<uint64_t> stationVisibilities, stationFlagged;  ///< [station]
};

struct PostCorrelationFlagger::Aoflagger {
  aoflagger::AOFlagger library;
  std::vector<Worker> workers;  ///< one per thread (Rtcp.Flagging.postCorrelation.threads)
};

PostCorrelationFlagger::PostCorrelationFlagger(const FlaggingSettings& settings, Emit emit)
    : settings_(settings), emit_(std::move(emit)) {
  if (!settings_.postCorrelation) return;
  aoflagger_ = std::make_unique<Aoflagger>();
  strategyFile_ = findStrategyFile(settings_.strategy, aoflagger_->library);
  aoflagger_->workers.resize(size_t(std::max(1, settings_.postThreads)));
  for (Worker& worker : aoflagger_->workers) {
    try {
      worker.strategy = aoflagger_->library.LoadStrategyFile(strategyFile_);
    } catch (const std::exception& e) {
      throw std::runtime_error(kStrategyKey + ": AOFlagger cannot load " + strategyFile_ + ": " +
                               e.what());
    }
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
  const int N = subband.held.front()->nrStations;
  std::vector<std::pair<int, int>> pairs;  // the cross-correlations (s1 < s2)
  for (int s2 = 0; s2 < N; ++s2)
    for (int s1 = 0; s1 < s2; ++s1) pairs.emplace_back(s1, s2);
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> failures(aoflagger_->workers.size());
  for (Worker& worker : aoflagger_->workers) prepareImages(worker, subband);
  auto work = [&](size_t w) {
    try {
      Worker& worker = aoflagger_->workers[w];
      for (size_t k; (k = next.fetch_add(1)) < pairs.size();)
        flagBaseline(worker, subband, pairs[k].first, pairs[k].second, from, to);
    } catch (...) {
      failures[w] = std::current_exception();
      next = pairs.size();
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (size_t w = 1; w < aoflagger_->workers.size(); ++w) helpers.emplace_back(work, w);
    work(0);
  }
  for (const std::exception_ptr& failure : failures)
    if (failure) std::rethrow_exception(failure);
  for (Worker& worker : aoflagger_->workers) {
    statistics_.windows += std::exchange(worker.windows, 0);
    statistics_.visibilities += std::exchange(worker.visibilities, 0);
    statistics_.flagged += std::exchange(worker.flagged, 0);
    for (size_t s = 0; s < worker.stationVisibilities.size(); ++s) {
      statistics_.stationVisibilities[s] += std::exchange(worker.stationVisibilities[s], 0);
      statistics_.stationFlagged[s] += std::exchange(worker.stationFlagged[s], 0);
    }
  }
}

void PostCorrelationFlagger::prepareImages(Worker& worker, const Subband& subband) const {
  const size_t T = subband.held.size(), C = size_t(subband.held.front()->nrChannels);
  const size_t N = size_t(subband.held.front()->nrStations);
  const size_t count = imagesPerBaseline(settings_.postPolarisations);
  const size_t capacity = std::max(T, size_t(settings_.postWindow));
  if (worker.count != count || worker.height != C || worker.capacity < T) {
    worker.images = aoflagger_->library.MakeImageSet(T, C, count, 0.0f, capacity);
    worker.count = count;
    worker.capacity = capacity;
  }
  worker.images.ResizeWithoutReallocation(T);
  if (worker.width != T || worker.height != C)
    worker.existing = aoflagger_->library.MakeFlagMask(T, C, false);
  worker.width = T;
  worker.height = C;
  if (worker.stationVisibilities.size() < N) {
    worker.stationVisibilities.resize(N);
    worker.stationFlagged.resize(N);
  }
}

bool PostCorrelationFlagger::fillImages(Worker& worker, const Subband& subband,
                                        int baseline) const {
  const size_t T = subband.held.size();
  const int C = subband.held.front()->nrChannels;
  aoflagger::ImageSet& images = worker.images;
  const size_t stride = images.HorizontalStride();
  const size_t flagStride = worker.existing.HorizontalStride();
  bool* existing = worker.existing.Buffer();
  // [product][channel][integration]: real and imaginary of each product AOFlagger sees.
  float* re[4];
  float* im[4];
  for (size_t k = 0; k < images.ImageCount() / 2; ++k) {
    re[k] = images.ImageBuffer(2 * k);
    im[k] = images.ImageBuffer(2 * k + 1);
  }
  bool anyData = false;
  for (size_t t = 0; t < T; ++t) {
    CorrelatedData& d = *subband.held[t];
    for (int c = 0; c < C; ++c) {
      const uint32_t valid = d.valid(baseline, c);
      existing[size_t(c) * flagStride + t] = valid == 0;
      anyData |= valid > 0;
    }
  }
  // One loop per choice of products (FlaggingSettings::postPolarisations), not a choice per
  // cell: DATA = sum / valid samples, 0 where nothing is valid.
  auto fill = [&](auto&& store) {
    for (size_t t = 0; t < T; ++t) {
      CorrelatedData& d = *subband.held[t];
      for (int c = 0; c < C; ++c) {
        const uint32_t valid = d.valid(baseline, c);
        store(&d.visibility(baseline, c, 0), valid ? 1.0f / float(valid) : 0.0f,
              size_t(c) * stride + t);
      }
    }
  };
  switch (settings_.postPolarisations) {
    case PostPolarisations::kAll:
      fill([&](const std::complex<float>* v, float scale, size_t at) {
        for (int p = 0; p < 4; ++p) {
          re[p][at] = v[p].real() * scale;
          im[p][at] = v[p].imag() * scale;
        }
      });
      break;
    case PostPolarisations::kParallel:
      fill([&](const std::complex<float>* v, float scale, size_t at) {
        re[0][at] = v[0].real() * scale;
        im[0][at] = v[0].imag() * scale;
        re[1][at] = v[3].real() * scale;
        im[1][at] = v[3].imag() * scale;
      });
      break;
    case PostPolarisations::kStokesI:
      fill([&](const std::complex<float>* v, float scale, size_t at) {
        re[0][at] = 0.5f * (v[0].real() + v[3].real()) * scale;
        im[0][at] = 0.5f * (v[0].imag() + v[3].imag()) * scale;
      });
      break;
  }
  return anyData;
}

void PostCorrelationFlagger::flagBaseline(Worker& worker, Subband& subband, int s1, int s2,
                                          size_t from, size_t to) const {
  const int C = subband.held.front()->nrChannels;
  const int baseline = baselineIndex(s1, s2);
  if (!fillImages(worker, subband, baseline)) return;
  const aoflagger::FlagMask found = worker.strategy.Run(worker.images, worker.existing);
  ++worker.windows;
  const size_t foundStride = found.HorizontalStride();
  const bool* flags = found.Buffer();
  uint64_t visibilities = 0, flagged = 0;
  for (size_t t = from; t < to; ++t) {
    CorrelatedData& d = *subband.held[t];
    for (int c = 0; c < C; ++c) {
      if (d.valid(baseline, c) == 0) continue;
      ++visibilities;
      if (!flags[size_t(c) * foundStride + t]) continue;
      ++flagged;
      d.valid(baseline, c) = 0;
      for (int p = 0; p < 4; ++p) d.visibility(baseline, c, p) = 0;
    }
  }
  worker.visibilities += visibilities;
  worker.flagged += flagged;
  for (int s : {s1, s2}) {
    worker.stationVisibilities[size_t(s)] += visibilities;
    worker.stationFlagged[size_t(s)] += flagged;
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
