// The view across subbands (SubbandLevelFlagger.h) on synthetic per-subband levels: a
// subband filled by interference is flagged, and nothing else: not a steep bandpass edge
// (in the band and at its ends), a smooth slope, a broadband bright source, a narrow
// carrier's few dB, nor a station whose levels scatter widely. rowPower against its plain
// twin on random samples of every bit mode, with random gaps.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "SubbandLevelFlagger.h"
#include "rtcp/RspPacket.h"

namespace rtcp::ion {
namespace {

constexpr double kSubbandHz = 200e6 / 1024;

/// A band of n subbands from `first`: frequencies, and powers from levels in dB with a
/// scatter of `noiseDb` (a block's power estimate and the bandpass's ripple).
struct Band {
  std::vector<double> frequencies, powers;
  Band(int n, int first, double noiseDb, uint32_t seed, auto levelDb) {
    std::mt19937 random(seed);
    std::normal_distribution<double> noise(0, noiseDb);
    for (int i = 0; i < n; ++i) {
      frequencies.push_back(100e6 + (first + i) * kSubbandHz);
      powers.push_back(std::pow(10, (levelDb(i) + noise(random)) / 10));
    }
  }
  void raise(int i, double db) { powers[size_t(i)] *= std::pow(10, db / 10); }
};

SubbandLevelFlagging defaults() {
  SubbandLevelFlagging s;
  s.on = true;
  return s;
}

std::vector<int> flaggedOf(const SubbandLevelVerdict& v) {
  std::vector<int> result;
  for (size_t i = 0; i < v.flagged.size(); ++i)
    if (v.flagged[i]) result.push_back(int(i));
  return result;
}

std::string describe(const SubbandLevelVerdict& v) {
  std::ostringstream text;
  text << "threshold " << v.thresholdDb << " dB, flagged:";
  for (int i : flaggedOf(v)) text << ' ' << i;
  return text.str();
}

class SubbandLevelFlaggerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SubbandLevelFlaggerTest);
  CPPUNIT_TEST(testBrightSubbandFlagged);
  CPPUNIT_TEST(testSteepBandpassEdgeNotFlagged);
  CPPUNIT_TEST(testSmoothSlopeNotFlagged);
  CPPUNIT_TEST(testBroadbandSourceNotFlagged);
  CPPUNIT_TEST(testNarrowCarrierLeftToTheChannelFlagger);
  CPPUNIT_TEST(testThresholdFollowsTheSpread);
  CPPUNIT_TEST(testOrderGapsAndMissingSubbands);
  CPPUNIT_TEST(testTooFewSubbandsJudgeNothing);
  CPPUNIT_TEST(testRowPowerEqualsReference);
  CPPUNIT_TEST(testLevelStride);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testBrightSubbandFlagged() {
    // IE613's FM band: flat, three subbands filled by transmitters (31-33 dB above), two of
    // them neighbours, one next to the observed band's first subband.
    Band band(120, 12, 0.1, 1, [](int) { return 8.0; });
    band.raise(1, 30);
    band.raise(28, 33);
    band.raise(29, 31);
    band.raise(60, 20);
    const SubbandLevelVerdict v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v) == (std::vector<int>{1, 28, 29, 60}));
    CPPUNIT_ASSERT_EQUAL(15.0, v.thresholdDb);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(33, v.residualDb[28], 0.5);
    CPPUNIT_ASSERT(v.sigmaDb > 0.05 && v.sigmaDb < 0.2);
  }

  void testSteepBandpassEdgeNotFlagged() {
    // 40 dB down over 4 subbands in the band, and a band that starts on a falling edge and
    // ends on a rising one (a cut the running median cannot see beyond).
    auto edge = [](int i) {
      if (i < 40) return 20.0;
      if (i < 44) return 20.0 - 10 * (i - 39);
      return -20.0;
    };
    Band inBand(100, 0, 0.1, 2, edge);
    SubbandLevelVerdict v = judgeSubbandLevels(inBand.frequencies, inBand.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v).empty());
    Band ends(60, 0, 0.1, 3, [](int i) {
      return i < 5 ? 40.0 - 8 * i : i >= 55 ? 0.0 + 8 * (i - 54) : 0.0;
    });
    v = judgeSubbandLevels(ends.frequencies, ends.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v).empty());
    // A bright subband just inside such an edge is still seen.
    inBand.raise(30, 25);
    v = judgeSubbandLevels(inBand.frequencies, inBand.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v) == (std::vector<int>{30}));
  }

  void testSmoothSlopeNotFlagged() {
    // The HBA filter's rise and fall (0.2 dB per subband), a hump 12 dB high over the band,
    // with a station's subband ripple of 0.3 dB.
    Band band(488, 12, 0.3, 4, [](int i) {
      const double x = (i - 200) / 150.0;
      return 3 + 12 * std::exp(-x * x);
    });
    const SubbandLevelVerdict v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v).empty());
    double largest = 0;
    for (double r : v.residualDb) largest = std::max(largest, r);
    CPPUNIT_ASSERT_MESSAGE(std::to_string(largest), largest < 2);
  }

  void testBroadbandSourceNotFlagged() {
    // A source 20 dB over the sky's noise with a spectral index of -0.8, on a flat band:
    // broadband, so every subband rises alike (a power law across the band).
    Band band(200, 100, 0.1, 5, [](int i) {
      const double nu = 100e6 + (100 + i) * kSubbandHz;
      return 10 * std::log10(1 + 100 * std::pow(nu / 150e6, -0.8));
    });
    SubbandLevelVerdict v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v).empty());
    // Interference on top of it is still seen.
    band.raise(150, 30);
    v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v) == (std::vector<int>{150}));
  }

  void testNarrowCarrierLeftToTheChannelFlagger() {
    // IE613's carriers that leave most channels clean raise their subband 4-9 dB.
    Band band(100, 12, 0.1, 6, [](int) { return 8.0; });
    band.raise(8, 9.3);
    band.raise(16, 6);
    band.raise(25, 5.5);
    const SubbandLevelVerdict v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v).empty());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(9.3, v.residualDb[8], 0.5);
  }

  void testThresholdFollowsTheSpread() {
    // Levels scattered by 4 dB: sigmas x sigma (about 24 dB) is the threshold, not 15 dB.
    Band band(200, 0, 4, 7, [](int) { return 0.0; });
    band.raise(70, 18);
    band.raise(120, 45);
    const SubbandLevelVerdict v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT_MESSAGE(describe(v), v.thresholdDb > 20 && v.thresholdDb < 30);
    CPPUNIT_ASSERT_MESSAGE(describe(v), flaggedOf(v) == (std::vector<int>{120}));
  }

  void testOrderGapsAndMissingSubbands() {
    // IE613's test selection: subbands 12-71, 150-179, 334-338, 430-434, given out of
    // frequency order, some without data; its FM subband 40 at 33 dB.
    std::vector<int> numbers;
    for (int s = 430; s < 435; ++s) numbers.push_back(s);
    for (int s = 12; s < 72; ++s) numbers.push_back(s);
    for (int s = 334; s < 339; ++s) numbers.push_back(s);
    for (int s = 150; s < 180; ++s) numbers.push_back(s);
    std::vector<double> frequencies, powers;
    for (int s : numbers) {
      frequencies.push_back(100e6 + s * kSubbandHz);
      const double db = s < 41 ? 8 : s < 72 ? 8 + 0.2 * (s - 41) : 15 - (s - 150) * 0.015;
      powers.push_back(std::pow(10, (db + (s == 40 ? 33 : 0) + 0.1 * std::sin(s)) / 10));
    }
    powers[3] = 0;              // subband 433: nothing arrived
    powers[20] = std::nan("");  // subband 27
    const SubbandLevelVerdict v = judgeSubbandLevels(frequencies, powers, defaults());
    std::vector<int> flagged;
    for (int i : flaggedOf(v)) flagged.push_back(numbers[size_t(i)]);
    CPPUNIT_ASSERT_MESSAGE(describe(v), flagged == (std::vector<int>{40}));
    CPPUNIT_ASSERT_EQUAL(0.0, v.residualDb[3]);
  }

  void testTooFewSubbandsJudgeNothing() {
    Band band(kMinSubbandsToJudge - 1, 0, 0.1, 8, [](int) { return 0.0; });
    band.raise(1, 40);
    const SubbandLevelVerdict v = judgeSubbandLevels(band.frequencies, band.powers, defaults());
    CPPUNIT_ASSERT(flaggedOf(v).empty());
    CPPUNIT_ASSERT_EQUAL(0.0, v.thresholdDb);
  }

  void testLevelStride() {
    CPPUNIT_ASSERT_EQUAL(int64_t(1), levelWordStride(256));  // IE613's blocks
    CPPUNIT_ASSERT_EQUAL(int64_t(1), levelWordStride(64 * 64 * 2 - 1));
    CPPUNIT_ASSERT_EQUAL(int64_t(2), levelWordStride(64 * 64 * 2));
    CPPUNIT_ASSERT_EQUAL(int64_t(16), levelWordStride(196608));  // 1 s of 64 channels
    CPPUNIT_ASSERT(196608 / 64 / levelWordStride(196608) >= kMinLevelWords);
  }

  void testRowPowerEqualsReference() {
    std::mt19937 random(9);
    for (int bits : {16, 8, 4}) {
      const int64_t count = 1000;  // not a whole number of words
      std::vector<uint8_t> row(size_t(count * bytesPerDualPolSample(bits)));
      for (uint8_t& b : row) b = uint8_t(random());
      std::vector<uint64_t> valid(size_t((count + 63) / 64));
      for (size_t w = 0; w < valid.size(); ++w)  // whole words, gaps, none
        valid[w] = w % 4 == 0   ? ~uint64_t(0)
                   : w % 4 == 1 ? (uint64_t(random()) << 32 | random())
                   : w % 4 == 2 ? 0
                                : ~uint64_t(0) >> 3;
      valid.back() = ~uint64_t(0);  // bits past the row's end are not counted
      const RowPower fast = rowPower(row.data(), valid.data(), count, bits);
      const RowPower plain = rowPowerReference(row.data(), valid.data(), count, bits);
      CPPUNIT_ASSERT_EQUAL(plain.samples, fast.samples);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(std::to_string(bits) + " bits", plain.sum, fast.sum);
      CPPUNIT_ASSERT(fast.samples > count / 3 && fast.samples < count);
      // Every third word only (words 0, 3, 6, ... ; the last partial one among them).
      const RowPower fast3 = rowPower(row.data(), valid.data(), count, bits, 3);
      const RowPower plain3 = rowPowerReference(row.data(), valid.data(), count, bits, 3);
      CPPUNIT_ASSERT_EQUAL(plain3.samples, fast3.samples);
      CPPUNIT_ASSERT_EQUAL(plain3.sum, fast3.sum);
      CPPUNIT_ASSERT(fast3.samples > 0 && fast3.samples < fast.samples / 2);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SubbandLevelFlaggerTest);

}  // namespace
}  // namespace rtcp::ion
