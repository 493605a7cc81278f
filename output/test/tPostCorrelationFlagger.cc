// The post-correlation flagger (PostCorrelationFlagger.h): AOFlagger's rtcp online strategy
// (parsets/rtcp-online.lua) or its LOFAR strategy on windows of integrations. Injected
// interference in the visibilities (a narrow-band signal over a few integrations, a broadband
// one in one integration, one at a window's edge) is flagged, clean Gaussian visibilities
// hardly, with every polarisation, XX and YY, or Stokes I seen; lost cells (integrations, a
// few channels) stay flagged and hardly flag their neighbours; every integration is handed
// on once, in order; a flagged visibility has count 0 and value 0; three threads flag as
// one; rtcp's strategy is found in the data directory and AOFlagger's LOFAR one by name, and
// a missing strategy file is an error naming the key. The coherence check
// (IncoherentStations.h): stations sending noise without the sky, correlated from samples
// here, are found and flagged whole; nothing is decided without a sky to see.
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <iostream>
#include <random>
#include <set>

#include "IncoherentStations.h"
#include "PostCorrelationFlagger.h"
#include "rtcp/Baselines.h"

using namespace rtcp;
using namespace rtcp::ion;

namespace {

constexpr int kStations = 4, kChannels = 64, kIntegrations = 40;

/// Post-correlation flagging on, as a parset's defaults have it (rtcp's strategy, Stokes I).
FlaggingSettings postOn() {
  FlaggingSettings f;
  f.online = f.postCorrelation = true;
  f.postPolarisations = PostPolarisations::kStokesI;
  return f;
}

struct Injected {
  std::set<std::tuple<int64_t, int, int>> cells;  ///< (integration, baseline, channel)
};

/// Gaussian visibilities (sums of 100 samples of unit power: value ~ 1 after / valid) with
/// interference on the cross-correlations.
std::vector<std::unique_ptr<CorrelatedData>> makeIntegrations(Injected& injected, bool rfi,
                                                              int stations = kStations) {
  std::mt19937 random(1);
  std::normal_distribution<float> gauss(0, 1);
  std::vector<std::unique_ptr<CorrelatedData>> all;
  for (int i = 0; i < kIntegrations; ++i) {
    auto d = std::make_unique<CorrelatedData>(stations, kChannels);
    d->integration = i;
    d->subband = 2;
    for (auto& v : d->visibilities) v = 100.0f * std::complex<float>(gauss(random), gauss(random));
    for (auto& n : d->validSamples) n = 100;
    for (int b = 0; b < nrBaselines(stations); ++b) d->valid(b, 0) = 0;  // the edge channel
    if (rfi)
      for (int s2 = 1; s2 < stations; ++s2)
        for (int s1 = 0; s1 < s2; ++s1) {
          const int b = baselineIndex(s1, s2);
          auto inject = [&](int c, float amplitude) {
            for (int p = 0; p < 4; ++p) d->visibility(b, c, p) += 100.0f * amplitude;
            injected.cells.insert({i, b, c});
          };
          if (i >= 20 && i < 24) inject(30, 40);  // narrow-band, four integrations
          if (i == 8)                             // broadband, one integration
            for (int c = 1; c < kChannels; ++c) inject(c, 30);
          if (i == 12) inject(50, 60);  // at a window's edge (16 - 4)
          if (i == 28) inject(40, 60);  // at a window's edge (32 - 4)
        }
    all.push_back(std::move(d));
  }
  return all;
}

/// The injected interference flagged (at least 95 %), clean visibilities hardly (at most
/// 2 %), with and without interference; every integration handed on once, in order, at
/// most a window after it came; flagged visibilities zero; autocorrelations left alone.
void checkInterferenceFlagged(const FlaggingSettings& settings) {
  for (bool rfi : {true, false}) {
    Injected injected;
    auto integrations = makeIntegrations(injected, rfi);
    std::vector<std::unique_ptr<CorrelatedData>> out;
    PostCorrelationFlagger flagger(
        settings, [&](std::unique_ptr<CorrelatedData> d) { out.push_back(std::move(d)); });
    for (auto& d : integrations) {
      flagger.add(std::move(d));
      CPPUNIT_ASSERT(out.size() + size_t(settings.postWindow) >= size_t(&d - &integrations[0] + 1));
    }
    flagger.flush();
    CPPUNIT_ASSERT_EQUAL(size_t(kIntegrations), out.size());
    uint64_t hit = 0, wrong = 0, clean = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      CorrelatedData& d = *out[i];
      CPPUNIT_ASSERT_EQUAL(int64_t(i), d.integration);
      for (int s2 = 0; s2 < kStations; ++s2)
        for (int s1 = 0; s1 <= s2; ++s1) {
          const int b = baselineIndex(s1, s2);
          for (int c = 1; c < kChannels; ++c) {
            const bool flagged = d.valid(b, c) == 0;
            if (flagged) CPPUNIT_ASSERT(d.visibility(b, c, 0) == std::complex<float>(0, 0));
            if (s1 == s2) {
              CPPUNIT_ASSERT(!flagged);  // autocorrelations are left alone
              continue;
            }
            if (injected.cells.count({d.integration, b, c}))
              hit += flagged;
            else {
              ++clean;
              wrong += flagged;
            }
          }
        }
    }
    const auto st = flagger.statistics();
    std::cout << "\npost-correlation flagger (AOFlagger, " << flagger.strategyFile()
              << ", polarisations " << postPolarisationsName(settings.postPolarisations)
              << ", windows of " << settings.postWindow << " overlapping by "
              << settings.postOverlap << "): " << hit << " of " << injected.cells.size()
              << " interfered, " << wrong << " of " << clean << " clean visibilities flagged; "
              << st.windows << " baseline windows in " << st.seconds << " s\n";
    CPPUNIT_ASSERT_EQUAL(uint64_t(hit + wrong), st.flagged);
    if (rfi) CPPUNIT_ASSERT(double(hit) >= 0.95 * double(injected.cells.size()));
    CPPUNIT_ASSERT(double(wrong) <= 0.02 * double(clean));
  }
}

/// Integrations correlated from complex Gaussian samples (n a channel): every station hears
/// the sky (power `sky` per polarisation, common to all) plus its own noise (power 1), but
/// those in `noiseOnly` hear noise alone, of the same total power.
std::vector<std::unique_ptr<CorrelatedData>> correlateSamples(int stations, double sky,
                                                              const std::set<int>& noiseOnly,
                                                              int integrations, int seed) {
  const int channels = 16, n = 100;
  std::mt19937 random{uint32_t(seed)};
  std::normal_distribution<double> gauss(0, std::sqrt(0.5));
  auto draw = [&](double power) {
    return std::sqrt(power) * std::complex<double>(gauss(random), gauss(random));
  };
  std::vector<std::unique_ptr<CorrelatedData>> all;
  std::vector<std::complex<double>> x(size_t(stations) * 2);
  for (int i = 0; i < integrations; ++i) {
    auto d = std::make_unique<CorrelatedData>(stations, channels);
    d->integration = i;
    d->subband = 0;
    std::vector<std::complex<double>> sums(d->visibilities.size());
    for (int c = 0; c < channels; ++c)
      for (int t = 0; t < n; ++t) {
        const std::complex<double> common[2] = {draw(sky), draw(sky)};
        for (int s = 0; s < stations; ++s)
          for (int p = 0; p < 2; ++p)
            x[size_t(2 * s + p)] = noiseOnly.count(s) ? draw(1 + sky) : common[p] + draw(1);
        for (int q = 0; q < stations; ++q)
          for (int p = 0; p <= q; ++p)
            for (int pol = 0; pol < 4; ++pol)
              sums[(size_t(baselineIndex(p, q)) * channels + size_t(c)) * 4 + size_t(pol)] +=
                  x[size_t(2 * p + pol / 2)] * std::conj(x[size_t(2 * q + pol % 2)]);
      }
    for (size_t k = 0; k < sums.size(); ++k) d->visibilities[k] = std::complex<float>(sums[k]);
    for (auto& v : d->validSamples) v = n;
    all.push_back(std::move(d));
  }
  return all;
}

std::vector<bool> incoherentIn(const std::vector<std::unique_ptr<CorrelatedData>>& window) {
  std::vector<CorrelatedData*> pointers;
  for (const auto& d : window) pointers.push_back(d.get());
  return findIncoherentStations(coherenceSignificance(pointers), window.front()->nrStations);
}

}  // namespace

class PostCorrelationFlaggerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PostCorrelationFlaggerTest);
  CPPUNIT_TEST(testInterferenceFlagged);
  CPPUNIT_TEST(testLostCellsAreNotData);
  CPPUNIT_TEST(testThreadsFlagAsOne);
  CPPUNIT_TEST(testMissingStrategy);
  CPPUNIT_TEST(testIncoherentStationsFound);
  CPPUNIT_TEST(testNoSkyNothingDecided);
  CPPUNIT_TEST(testIncoherentStationFlaggedWhole);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// The defaults (rtcp's strategy on Stokes I, windows of 32 overlapping by 4), windows of
  /// 16 by 4 (the integration 12 is at a window's edge), XX and YY, every polarisation; and
  /// AOFlagger's LOFAR strategy on every polarisation (the previous default).
  void testInterferenceFlagged() {
    FlaggingSettings settings = postOn();
    CPPUNIT_ASSERT_EQUAL(32, settings.postWindow);
    CPPUNIT_ASSERT(settings.postPolarisations == PostPolarisations::kStokesI);
    checkInterferenceFlagged(settings);
    settings.postWindow = 16;
    checkInterferenceFlagged(settings);
    settings = postOn();
    settings.postPolarisations = PostPolarisations::kParallel;
    checkInterferenceFlagged(settings);
    settings.postPolarisations = PostPolarisations::kAll;
    checkInterferenceFlagged(settings);
    settings.strategy = "lofar-default";
    checkInterferenceFlagged(settings);
  }

  /// Clean visibilities with cells lost (valid 0, visibility 0: integrations 10-12 and
  /// channels 20-23 of every baseline): they stay flagged, and rtcp's strategy, which keeps
  /// them out of its statistics and fits, flags at most 2 % of the cells beside them (the
  /// integrations and channels next to the lost ones) and of the rest. LOFAR's strategy
  /// clears the input flags and sees the zeros as data (it flags them as outliers first, so
  /// it flags their neighbours hardly more: 7 and 5 of 1128): printed beside.
  void testLostCellsAreNotData() {
    for (const std::string strategy : {"", "lofar-default"}) {
      FlaggingSettings settings = postOn();
      settings.strategy = strategy;
      Injected injected;
      auto integrations = makeIntegrations(injected, false);
      auto lost = [](int64_t i, int c) { return (i >= 10 && i <= 12) || (c >= 20 && c <= 23); };
      auto beside = [](int64_t i, int c) { return i == 9 || i == 13 || c == 19 || c == 24; };
      for (auto& d : integrations)
        for (int b = 0; b < nrBaselines(kStations); ++b)
          for (int c = 1; c < kChannels; ++c)
            if (lost(d->integration, c)) {
              d->valid(b, c) = 0;
              for (int p = 0; p < 4; ++p) d->visibility(b, c, p) = 0;
            }
      std::vector<std::unique_ptr<CorrelatedData>> out;
      PostCorrelationFlagger flagger(
          settings, [&](std::unique_ptr<CorrelatedData> d) { out.push_back(std::move(d)); });
      for (auto& d : integrations) flagger.add(std::move(d));
      flagger.flush();
      uint64_t besideFlagged = 0, besideCells = 0, restFlagged = 0, restCells = 0;
      for (const auto& d : out)
        for (int s2 = 1; s2 < kStations; ++s2)
          for (int s1 = 0; s1 < s2; ++s1)
            for (int c = 1; c < kChannels; ++c) {
              const bool flagged = d->valid(baselineIndex(s1, s2), c) == 0;
              if (lost(d->integration, c)) {
                CPPUNIT_ASSERT(flagged);
              } else if (beside(d->integration, c)) {
                ++besideCells;
                besideFlagged += flagged;
              } else {
                ++restCells;
                restFlagged += flagged;
              }
            }
      std::cout << "\nlost cells, " << flagger.strategyFile() << ": flagged " << besideFlagged
                << " of " << besideCells << " cells beside them, " << restFlagged << " of "
                << restCells << " further away\n";
      if (strategy.empty()) {
        CPPUNIT_ASSERT(double(besideFlagged) <= 0.02 * double(besideCells));
        CPPUNIT_ASSERT(double(restFlagged) <= 0.02 * double(restCells));
      }
    }
  }

  /// The baselines of a window shared out over 3 threads: the same flags and counts as one.
  void testThreadsFlagAsOne() {
    auto flagged = [](int threads, PostCorrelationFlagger::Statistics& st) {
      FlaggingSettings settings = postOn();
      settings.postThreads = threads;
      Injected injected;
      auto integrations = makeIntegrations(injected, true, 8);
      std::vector<bool> flags;
      PostCorrelationFlagger flagger(settings, [&](std::unique_ptr<CorrelatedData> d) {
        for (uint32_t n : d->validSamples) flags.push_back(n == 0);
      });
      for (auto& d : integrations) flagger.add(std::move(d));
      flagger.flush();
      st = flagger.statistics();
      return flags;
    };
    PostCorrelationFlagger::Statistics one, three;
    const std::vector<bool> flagsOne = flagged(1, one), flagsThree = flagged(3, three);
    CPPUNIT_ASSERT(flagsOne == flagsThree);
    CPPUNIT_ASSERT(one.flagged > 0);
    CPPUNIT_ASSERT_EQUAL(one.flagged, three.flagged);
    CPPUNIT_ASSERT_EQUAL(one.windows, three.windows);
    CPPUNIT_ASSERT_EQUAL(one.visibilities, three.visibilities);
    CPPUNIT_ASSERT(one.stationFlagged == three.stationFlagged);
    CPPUNIT_ASSERT(one.stationVisibilities == three.stationVisibilities);
  }

  void testMissingStrategy() {
    FlaggingSettings settings = postOn();
    settings.strategy = "/nonexistent/strategy.lua";
    try {
      PostCorrelationFlagger flagger(settings, [](std::unique_ptr<CorrelatedData>) {});
      CPPUNIT_FAIL("expected an error");
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      CPPUNIT_ASSERT_MESSAGE(
          message, message.find("Rtcp.Flagging.postCorrelation.strategy") != std::string::npos);
      CPPUNIT_ASSERT(message.find("/nonexistent/strategy.lua") != std::string::npos);
    }
    // rtcp's own strategy where the data directory says; AOFlagger's LOFAR strategy by name.
    settings.strategy.clear();
    CPPUNIT_ASSERT(
        PostCorrelationFlagger(settings, {}).strategyFile().ends_with("/rtcp-online.lua"));
    settings.strategy = "lofar-default";
    CPPUNIT_ASSERT(
        PostCorrelationFlagger(settings, {}).strategyFile().ends_with("/lofar-default.lua"));
    settings.strategy.clear();
    const char* old = std::getenv("RTCP_DATA_DIR");
    const std::string saved = old ? old : "";
    setenv("RTCP_DATA_DIR", "/nonexistent", 1);
    try {
      PostCorrelationFlagger flagger(settings, [](std::unique_ptr<CorrelatedData>) {});
      CPPUNIT_FAIL("expected an error");
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      CPPUNIT_ASSERT_MESSAGE(message,
                             message.find("/nonexistent/rtcp-online.lua") != std::string::npos);
      CPPUNIT_ASSERT(message.find("Rtcp.Flagging.postCorrelation.strategy") != std::string::npos);
    }
    if (saved.empty())
      unsetenv("RTCP_DATA_DIR");
    else
      setenv("RTCP_DATA_DIR", saved.c_str(), 1);
  }

  /// A sky of 0.2 of the noise's power (ρ = 0.17): one noise-only station of 4, two of 6,
  /// found in a window of 8 integrations; healthy baselines far above the threshold, the
  /// noise-only ones below it.
  void testIncoherentStationsFound() {
    const auto four = correlateSamples(4, 0.2, {2}, 8, 21);
    std::vector<CorrelatedData*> pointers;
    for (const auto& d : four) pointers.push_back(d.get());
    const std::vector<double> z = coherenceSignificance(pointers);
    std::cout << "\ncoherence significance, station 2 noise only:";
    for (int q = 1; q < 4; ++q)
      for (int p = 0; p < q; ++p)
        std::cout << " " << p << "-" << q << " " << z[size_t(baselineIndex(p, q))];
    std::cout << "\n";
    for (int q = 1; q < 4; ++q)
      for (int p = 0; p < q; ++p) {
        const double zpq = z[size_t(baselineIndex(p, q))];
        if (p == 2 || q == 2)
          CPPUNIT_ASSERT(std::abs(zpq) < kNoCoherence);
        else
          CPPUNIT_ASSERT(zpq > kSkyCoherence);
      }
    CPPUNIT_ASSERT((incoherentIn(four) == std::vector<bool>{false, false, true, false}));
    const auto six = correlateSamples(6, 0.2, {0, 4}, 8, 22);
    CPPUNIT_ASSERT(
        (incoherentIn(six) == std::vector<bool>{true, false, false, false, true, false}));
  }

  /// Noise alone everywhere, or a sky too weak to see: nobody is judged; two stations:
  /// nobody either (which of them would it be?).
  void testNoSkyNothingDecided() {
    CPPUNIT_ASSERT((incoherentIn(correlateSamples(4, 0.0, {}, 8, 23)) == std::vector<bool>(4)));
    CPPUNIT_ASSERT((incoherentIn(correlateSamples(4, 0.01, {1}, 8, 24)) == std::vector<bool>(4)));
    CPPUNIT_ASSERT((incoherentIn(correlateSamples(2, 0.2, {1}, 8, 25)) == std::vector<bool>(2)));
  }

  /// Through the flagger with only the broken-station switch on (no AOFlagger): the
  /// noise-only station's baselines and autocorrelation are flagged in every integration,
  /// nothing else; the statistics count it per station.
  void testIncoherentStationFlaggedWhole() {
    FlaggingSettings settings;
    settings.online = settings.detectBrokenStations = true;
    std::vector<std::unique_ptr<CorrelatedData>> out;
    PostCorrelationFlagger flagger(
        settings, [&](std::unique_ptr<CorrelatedData> d) { out.push_back(std::move(d)); });
    CPPUNIT_ASSERT(flagger.strategyFile().empty());
    for (auto& d : correlateSamples(4, 0.2, {3}, 24, 26)) flagger.add(std::move(d));
    flagger.flush();
    CPPUNIT_ASSERT_EQUAL(size_t(24), out.size());
    for (const auto& d : out)
      for (int q = 0; q < 4; ++q)
        for (int p = 0; p <= q; ++p)
          for (int c = 0; c < d->nrChannels; ++c) {
            const bool flagged = d->valid(baselineIndex(p, q), c) == 0;
            CPPUNIT_ASSERT_EQUAL(q == 3, flagged);
            if (flagged)
              CPPUNIT_ASSERT(d->visibility(baselineIndex(p, q), c, 0) == std::complex<float>());
          }
    const auto st = flagger.statistics();
    CPPUNIT_ASSERT((st.incoherent == std::vector<uint64_t>{0, 0, 0, 24}));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.flagged);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PostCorrelationFlaggerTest);
