// `rtcp-bench flagger`, post-correlation part: the PostCorrelationFlagger with rtcp's
// online strategy (parsets/rtcp-online.lua, the default) and with AOFlagger's LOFAR strategy
// (lofar-default), each with settings of window, overlap and polarisations, on simulated
// visibilities of one subband (64 channels, 1 s integrations of 3052 samples each): a sky
// source with fringes on every baseline plus receiver noise, and interference injected into
// the cross-correlations of 2 to 20 times the noise. Per setting: CPU per subband-
// integration of 24 stations (and so LOFAR's 488 subbands against one core), and on 12
// stations the flags against what was injected (interference found, clean cells flagged)
// and against the flags of the previous default (LOFAR's strategy on windows of 32
// overlapping by 4, every polarisation), cell by cell.
#include "PostFlaggerBench.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "PostCorrelationFlagger.h"
#include "rtcp/Baselines.h"
#include "rtcp/Benchmark.h"

namespace rtcp::correlator::bench {
namespace {

constexpr uint32_t kSamples = 3052;  // 1 s of a 195 kHz subband in 64 channels
constexpr int kChannels = 64;
constexpr int kPattern = 96;     // integrations of the interference pattern (repeats)
constexpr float kStrong = 6.0f;  // interference of at least this many σ: "strong"
constexpr float kPi2 = 6.2831853f;

/// What was injected into a cell (cross-correlation, channel, integration).
enum Kind : uint8_t { kClean = 0, kTone, kBurst, kDrift, kXOnly };

struct Variant {
  std::string name;
  int window, overlap;
  PostPolarisations polarisations;
  int threads = 1;
  std::string strategy;  ///< Rtcp.Flagging.postCorrelation.strategy: empty, rtcp's
};

double processCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// A subband's integrations [integration] and what was injected where
/// ([integration][baseline][channel]: Kind, + 8 when strong).
struct Scene {
  std::vector<std::unique_ptr<CorrelatedData>> integrations;
  std::vector<uint8_t> injected;
  int stations = 0;
  size_t cell(int64_t integration, int baseline, int channel) const {
    return (size_t(integration) * size_t(nrBaselines(stations)) + size_t(baseline)) * kChannels +
           size_t(channel);
  }
};

/// Per cross-correlation: a sky of amplitude 2–6 σ in XX and YY (a tenth in XY, YX) whose
/// phase turns with time and frequency; interference of one amplitude (2–20 σ, random phase
/// per cell; half in XY and YX): a tone in one channel for 40 integrations, a burst over
/// every channel in one integration, a signal drifting a channel every 2 integrations for 30,
/// and a tone in XX alone for 30. Channel 0 is flagged already (valid 0), as LOFAR's are.
Scene makeScene(int stations, int integrations, uint32_t seed) {
  Scene scene;
  scene.stations = stations;
  const int B = nrBaselines(stations);
  scene.injected.assign(size_t(integrations) * size_t(B) * kChannels, kClean);
  std::mt19937 random(seed);
  std::normal_distribution<float> gauss(0, std::sqrt(0.5f));
  std::uniform_real_distribution<float> uniform(0, 1);
  struct Baseline {
    float sky, rate, delay, rfi;
    int tone, burst, xTone;
  };
  std::vector<Baseline> baselines(static_cast<size_t>(B));
  for (Baseline& b : baselines)
    b = {2 + 4 * uniform(random),
         0.05f * uniform(random),
         0.1f * uniform(random),
         2 * std::pow(10.0f, uniform(random)),
         1 + int(uniform(random) * (kChannels - 2)),
         int(uniform(random) * kPattern),
         1 + int(uniform(random) * (kChannels - 2))};
  for (int i = 0; i < integrations; ++i) {
    auto d = std::make_unique<CorrelatedData>(stations, kChannels);
    d->integration = i;
    const int t = i % kPattern;
    for (int s2 = 0; s2 < stations; ++s2)
      for (int s1 = 0; s1 <= s2; ++s1) {
        const int b = baselineIndex(s1, s2);
        const Baseline& bl = baselines[size_t(b)];
        for (int c = 0; c < kChannels; ++c) {
          std::complex<float>* v = &d->visibility(b, c, 0);
          if (s1 == s2) {
            v[0] = v[3] = float(kSamples) * (bl.sky + 1);
            v[1] = v[2] = 0;
            continue;
          }
          const std::complex<float> sky = std::polar(bl.sky, kPi2 * (bl.rate * t + bl.delay * c));
          for (int p = 0; p < 4; ++p)
            v[p] = (p == 0 || p == 3 ? sky : 0.1f * sky) +
                   std::complex<float>(gauss(random), gauss(random));
          Kind kind = kClean;
          if (c == bl.tone && t >= 10 && t < 50) kind = kTone;
          if (t == bl.burst) kind = kBurst;
          if (t >= 55 && t < 85 && c == 20 + (t - 55) / 2) kind = kDrift;
          if (c == bl.xTone && t >= 60 && t < 90) kind = kXOnly;
          if (c > 0 && kind != kClean) {
            const std::complex<float> rfi = std::polar(bl.rfi, kPi2 * uniform(random));
            if (kind == kXOnly)
              v[0] += rfi;
            else
              for (int p = 0; p < 4; ++p) v[p] += (p == 0 || p == 3 ? 1.0f : 0.5f) * rfi;
            scene.injected[scene.cell(i, b, c)] = uint8_t(kind + (bl.rfi >= kStrong ? 8 : 0));
          }
          for (int p = 0; p < 4; ++p) v[p] *= float(kSamples);
        }
      }
    for (auto& n : d->validSamples) n = kSamples;
    for (int b = 0; b < B; ++b) {
      d->valid(b, 0) = 0;
      for (int p = 0; p < 4; ++p) d->visibility(b, 0, p) = 0;
    }
    scene.integrations.push_back(std::move(d));
  }
  return scene;
}

FlaggingSettings settingsOf(const Variant& variant) {
  FlaggingSettings settings;
  settings.online = settings.postCorrelation = true;
  settings.postWindow = variant.window;
  settings.postOverlap = variant.overlap;
  settings.postPolarisations = variant.polarisations;
  settings.postThreads = variant.threads;
  settings.strategy = variant.strategy;
  return settings;
}

/// The scene through the flagger: [integration][baseline][channel] flagged by it.
std::vector<bool> flagsOf(const Variant& variant, Scene& scene, double& cpuSeconds) {
  std::vector<bool> flags(scene.injected.size());
  ion::PostCorrelationFlagger flagger(settingsOf(variant), [&](std::unique_ptr<CorrelatedData> d) {
    for (int b = 0; b < nrBaselines(d->nrStations); ++b)
      for (int c = 1; c < d->nrChannels; ++c)
        flags[scene.cell(d->integration, b, c)] = d->valid(b, c) == 0;
  });
  const double start = processCpuSeconds();
  for (auto& d : scene.integrations) flagger.add(std::move(d));
  flagger.flush();
  cpuSeconds = processCpuSeconds() - start;
  return flags;
}

/// CPU seconds (every thread's) per subband-integration of 24 stations, over 4 windows.
double cpuSecondsPerIntegration(const Variant& variant) {
  const int integrations = 4 * variant.window;
  Scene scene = makeScene(24, integrations, 4);
  double seconds = 0;
  flagsOf(variant, scene, seconds);
  return seconds / integrations;
}

void printCost(double perIntegration, const std::string& prefix) {
  const int stations = 24;
  printFigure(prefix + "N24.C64.cpu_seconds_per_subband_integration", perIntegration);
  printFigure(prefix + "cpu_seconds_per_station_subband_second", perIntegration / stations);
  // LOFAR: 488 subbands, 1 s integrations: 488 subband-integrations per second.
  printFigure(prefix + "lofar_488_subbands_realtime_ratio_one_core", 1.0 / (488 * perIntegration));
}

void printQuality(const Variant& variant, const std::vector<bool>& reference,
                  std::vector<bool>* flagsOut) {
  Scene scene = makeScene(12, kPattern, 7);
  double seconds = 0;
  const std::vector<bool> flags = flagsOf(variant, scene, seconds);
  uint64_t found = 0, injected = 0, strongFound = 0, strong = 0, clean = 0, wrong = 0, agree = 0,
           cells = 0;
  uint64_t kindFound[5] = {}, kindStrong[5] = {};  // [Kind], of the strong interference
  for (size_t k = 0; k < flags.size(); ++k) {
    const size_t channel = k % kChannels, baseline = k / kChannels % size_t(nrBaselines(12));
    const auto [s1, s2] = baselineStations(int(baseline));
    if (channel == 0 || s1 == s2) continue;
    ++cells;
    agree += reference.empty() || flags[k] == reference[k];
    if (scene.injected[k] == kClean) {
      ++clean;
      wrong += flags[k];
      continue;
    }
    ++injected;
    found += flags[k];
    if (scene.injected[k] >= 8) {
      ++strong;
      strongFound += flags[k];
      ++kindStrong[scene.injected[k] - 8];
      kindFound[scene.injected[k] - 8] += flags[k];
    }
  }
  const std::string prefix = "flagger.post." + variant.name + ".";
  printFigure(prefix + "interference_flagged", double(found) / double(injected));
  printFigure(prefix + "strong_interference_flagged", double(strongFound) / double(strong));
  const char* kinds[5] = {"", "tone", "burst", "drift", "x_only_tone"};
  for (int kind = kTone; kind <= kXOnly; ++kind)
    printFigure(prefix + "strong_" + kinds[kind] + "_flagged",
                double(kindFound[kind]) / double(kindStrong[kind]));
  printFigure(prefix + "clean_flagged", double(wrong) / double(clean));
  printFigure(prefix + "agreement_with_lofar_w32_o4_all", double(agree) / double(cells));
  if (flagsOut) *flagsOut = flags;
}

}  // namespace

void printPostCorrelationFigures() {
  const std::string lofar = "lofar-default";
  const Variant previous{"lofar_w32_o4_all", 32, 4, PostPolarisations::kAll, 1, lofar};
  const std::vector<Variant> variants = {
      {"w32_o4_i", 32, 4, PostPolarisations::kStokesI, 1, ""},  // the defaults: rtcp's strategy
      {"w64_o4_i", 64, 4, PostPolarisations::kStokesI, 1, ""},
      {"w32_o4_i_2threads", 32, 4, PostPolarisations::kStokesI, 2, ""},
      {"w32_o4_all", 32, 4, PostPolarisations::kAll, 1, ""},  // its Stokes I made by AOFlagger
      {"lofar_w32_o4_i", 32, 4, PostPolarisations::kStokesI, 1, lofar},
      {"lofar_w64_o4_i", 64, 4, PostPolarisations::kStokesI, 1, lofar},
  };
  std::vector<bool> reference;
  printQuality(previous, {}, &reference);
  printCost(cpuSecondsPerIntegration(previous), "flagger.post." + previous.name + ".");
  for (const Variant& variant : variants) {
    printQuality(variant, reference, nullptr);
    const double perIntegration = cpuSecondsPerIntegration(variant);
    printCost(perIntegration, "flagger.post." + variant.name + ".");
    if (&variant == &variants.front()) printCost(perIntegration, "flagger.post.");
  }
}

}  // namespace rtcp::correlator::bench
