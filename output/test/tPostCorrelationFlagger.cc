// The post-correlation flagger (PostCorrelationFlagger.h): AOFlagger's LOFAR strategy on
// windows of integrations. Injected interference in the visibilities (a narrow-band signal
// over a few integrations, a broadband one in one integration, one at a window's edge) is
// flagged, clean Gaussian visibilities hardly; every integration is handed on once, in
// order; a flagged visibility has count 0 and value 0; a missing strategy file is an error
// naming the key.
#include <cppunit/extensions/HelperMacros.h>

#include <iostream>
#include <random>
#include <set>

#include "PostCorrelationFlagger.h"
#include "rtcp/Baselines.h"

using namespace rtcp;
using namespace rtcp::ion;

namespace {

constexpr int kStations = 4, kChannels = 64, kIntegrations = 40;

FlaggingSettings postOn() {
  FlaggingSettings f;
  f.online = f.postCorrelation = true;
  return f;
}

struct Injected {
  std::set<std::tuple<int64_t, int, int>> cells;  ///< (integration, baseline, channel)
};

/// Gaussian visibilities (sums of 100 samples of unit power: value ~ 1 after / valid) with
/// interference on the cross-correlations.
std::vector<std::unique_ptr<CorrelatedData>> makeIntegrations(Injected& injected, bool rfi) {
  std::mt19937 random(1);
  std::normal_distribution<float> gauss(0, 1);
  std::vector<std::unique_ptr<CorrelatedData>> all;
  for (int i = 0; i < kIntegrations; ++i) {
    auto d = std::make_unique<CorrelatedData>(kStations, kChannels);
    d->integration = i;
    d->subband = 2;
    for (auto& v : d->visibilities) v = 100.0f * std::complex<float>(gauss(random), gauss(random));
    for (auto& n : d->validSamples) n = 100;
    for (int b = 0; b < nrBaselines(kStations); ++b) d->valid(b, 0) = 0;  // the edge channel
    if (rfi)
      for (int s2 = 1; s2 < kStations; ++s2)
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
        }
    all.push_back(std::move(d));
  }
  return all;
}

}  // namespace

class PostCorrelationFlaggerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PostCorrelationFlaggerTest);
  CPPUNIT_TEST(testInterferenceFlagged);
  CPPUNIT_TEST(testMissingStrategy);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testInterferenceFlagged() {
    for (bool rfi : {true, false}) {
      Injected injected;
      auto integrations = makeIntegrations(injected, rfi);
      std::vector<std::unique_ptr<CorrelatedData>> out;
      PostCorrelationFlagger flagger(
          postOn(), [&](std::unique_ptr<CorrelatedData> d) { out.push_back(std::move(d)); });
      for (auto& d : integrations) {
        flagger.add(std::move(d));
        // Latency: at most a window held.
        CPPUNIT_ASSERT(out.size() + 16 >= size_t(&d - &integrations[0] + 1));
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
                << "): " << hit << " of " << injected.cells.size() << " interfered, " << wrong
                << " of " << clean << " clean visibilities flagged; " << st.windows
                << " baseline windows in " << st.seconds << " s\n";
      CPPUNIT_ASSERT_EQUAL(uint64_t(hit + wrong), st.flagged);
      if (rfi) CPPUNIT_ASSERT(double(hit) >= 0.95 * double(injected.cells.size()));
      CPPUNIT_ASSERT(double(wrong) <= 0.02 * double(clean));
    }
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
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PostCorrelationFlaggerTest);
