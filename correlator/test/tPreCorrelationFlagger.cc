// The pre-correlation RFI flagger (PreCorrelationFlagger.h): its optimised parts against
// the plain twins on random data, and its physics: injected interference (a narrow-band
// tone, an intermittent and a drifting narrow-band signal, broadband bursts) on Gaussian
// noise is flagged, clean noise hardly, broken stations are found, and through the chain
// the valid-sample counts drop by exactly what was flagged.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <iostream>
#include <limits>
#include <numbers>
#include <random>

#include "ChainTestData.h"
#include "CorrelatorKernel.h"
#include "DelayAndBandpassCorrection.h"
#include "OrderStatistics.h"
#include "PreCorrelationFlagger.h"
#include "Reference.h"
#include "SubbandProcessor.h"
#include "SumThreshold.h"
#include "ValidSampleCounter.h"
#include "rtcp/Baselines.h"

namespace rtcp::correlator {

namespace {

FlaggingSettings flaggingOn() {
  FlaggingSettings f;
  f.online = f.preCorrelation = f.detectBrokenStations = true;
  return f;
}

/// One station's samples in the kernel layout [channel][pol][reim][padded] with the
/// interference a test puts in; truth[c][s] marks the samples it touched.
struct StationData {
  StationData(int channels, int spectra)
      : nrChannels(channels),
        nrSpectra(spectra),
        padded(CorrelatorKernel::paddedLength(spectra)),
        samples(size_t(channels) * 4 * size_t(padded), 0.0f),
        truth(size_t(channels), std::vector<bool>(size_t(spectra), false)),
        valid(spectra) {}
  int nrChannels, nrSpectra, padded;
  std::vector<float> samples;
  std::vector<std::vector<bool>> truth;
  SpectrumMask valid;

  float* row(int c, int pol, int reim) {
    return samples.data() + (size_t(c) * 4 + 2 * size_t(pol) + size_t(reim)) * size_t(padded);
  }
  /// Complex Gaussian noise of `power` per polarisation in every channel.
  void noise(double power, std::mt19937& random) {
    std::normal_distribution<float> gauss(0, float(std::sqrt(power / 2)));
    for (int c = 0; c < nrChannels; ++c)
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < nrSpectra; ++s) row(c, r / 2, r % 2)[s] = gauss(random);
  }
  /// A signal of `power` per polarisation (random phase per sample: its own power, not
  /// correlated with the noise) in channel c, spectra [first, last).
  void add(int c, int first, int last, double power, std::mt19937& random) {
    std::uniform_real_distribution<double> phase(0, 2 * std::numbers::pi);
    const double amplitude = std::sqrt(power);
    for (int s = first; s < last; ++s) {
      for (int pol = 0; pol < 2; ++pol) {
        const double p = phase(random);
        row(c, pol, 0)[s] += float(amplitude * std::cos(p));
        row(c, pol, 1)[s] += float(amplitude * std::sin(p));
      }
      truth[size_t(c)][size_t(s)] = true;
    }
  }
  /// A steady carrier of `power` per polarisation in channel c: constant amplitude, its
  /// phase turning by `turn` radians a spectrum (its power the same in every spectrum).
  void carrier(int c, double power, double turn) {
    const double amplitude = std::sqrt(power);
    for (int s = 0; s < nrSpectra; ++s) {
      for (int pol = 0; pol < 2; ++pol) {
        row(c, pol, 0)[s] += float(amplitude * std::cos(turn * s + pol));
        row(c, pol, 1)[s] += float(amplitude * std::sin(turn * s + pol));
      }
      truth[size_t(c)][size_t(s)] = true;
    }
  }
  /// Every channel's noise scaled by gain[c] in power (a bandpass left in the data).
  void shape(const std::vector<double>& gain) {
    for (int c = 0; c < nrChannels; ++c)
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < nrSpectra; ++s)
          row(c, r / 2, r % 2)[s] *= float(std::sqrt(gain[size_t(c)]));
  }
  /// Lost spectra: zero, flagged in valid.
  void lose(int first, int last) {
    for (int s = first; s < last; ++s) {
      valid.set(s, false);
      for (int c = 0; c < nrChannels; ++c)
        for (int r = 0; r < 4; ++r) row(c, r / 2, r % 2)[s] = 0;
    }
  }
  std::vector<bool> validVector() const {
    std::vector<bool> v(size_t(nrSpectra), false);
    for (int s = 0; s < nrSpectra; ++s) v[size_t(s)] = valid.valid(s);
    return v;
  }
};

/// Fractions of the touched samples flagged and of the clean ones flagged (channel 0
/// left out; lost spectra left out).
struct Score {
  double detected = 1, falsePositives = 0;
  uint64_t touched = 0, clean = 0;
};

Score score(const StationData& d, const ChannelFlags& flags) {
  uint64_t hit = 0, touched = 0, wrong = 0, clean = 0;
  for (int c = 1; c < d.nrChannels; ++c)
    for (int s = 0; s < d.nrSpectra; ++s) {
      if (!d.valid.valid(s)) continue;
      const bool flagged = !flags.channel(c).valid(s);
      if (d.truth[size_t(c)][size_t(s)]) {
        ++touched;
        hit += flagged;
      } else {
        ++clean;
        wrong += flagged;
      }
    }
  Score result;
  result.touched = touched;
  result.clean = clean;
  if (touched) result.detected = double(hit) / double(touched);
  if (clean) result.falsePositives = double(wrong) / double(clean);
  return result;
}

Score flagAndScore(const StationData& d, const FlaggingSettings& settings) {
  PreCorrelationFlagger flagger(settings, d.nrChannels, d.nrSpectra, d.padded);
  auto workspace = flagger.makeWorkspace();
  ChannelFlags flags(d.nrChannels, d.nrSpectra);
  StationFlagStatistics statistics;
  flagger.flag(d.samples.data(), d.valid, flags, statistics, workspace);
  return score(d, flags);
}

/// Every kind of interference the tests inject, on noise of power 1 per polarisation,
/// 64 channels, 3072 spectra (COBALT's block).
StationData withInterference(std::mt19937& random) {
  StationData d(64, 3072);
  d.noise(1.0, random);
  d.add(20, 0, 3072, 0.3, random);     // a weak continuous tone: 0.3 of the noise
  d.add(41, 1000, 1400, 2.0, random);  // an intermittent narrow-band signal
  for (int c = 1; c < 64; ++c) d.add(c, 2000, 2010, 3.0, random);   // a 3.3 ms broadband burst
  for (int c = 1; c < 64; ++c) d.add(c, 2500, 2503, 30.0, random);  // a 1 ms spark
  for (int s = 0; s < 3072; ++s) d.add(5 + s / 128, s, s + 1, 4.0, random);  // drifting
  return d;
}

}  // namespace

class PreCorrelationFlaggerTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PreCorrelationFlaggerTest);
  CPPUNIT_TEST(sumThresholdAgainstTwin);
  CPPUNIT_TEST(columnsAgainstSeries);
  CPPUNIT_TEST(orderStatisticsAgainstSorting);
  CPPUNIT_TEST(clippedMomentsBothKernels);
  CPPUNIT_TEST(zeroFlaggedBothKernels);
  CPPUNIT_TEST(cellPowersAgainstTwin);
  CPPUNIT_TEST(flagsAgainstTwin);
  CPPUNIT_TEST(cellPowersFromTheDelayCorrection);
  CPPUNIT_TEST(validCountsAgainstTwin);
  CPPUNIT_TEST(interferenceFlagged);
  CPPUNIT_TEST(cleanNoiseHardlyFlagged);
  CPPUNIT_TEST(subbandFilledByFmFlagged);
  CPPUNIT_TEST(shortBlocksAndBandpassRippleHardlyFlagged);
  CPPUNIT_TEST(noChannelsFlagsInTime);
  CPPUNIT_TEST(brokenStations);
  CPPUNIT_TEST(chainCountsDropByWhatWasFlagged);
  CPPUNIT_TEST_SUITE_END();

 public:
  void sumThresholdAgainstTwin() {
    std::mt19937 random(3);
    std::exponential_distribution<double> value(1.0);
    std::bernoulli_distribution flagged(0.1);
    std::vector<uint8_t> scratch;
    for (size_t window : {1, 2, 3, 4, 8, 16, 64, 200}) {
      for (int trial = 0; trial < 20; ++trial) {
        const size_t n = 150;
        std::vector<double> values(n);
        std::vector<bool> flags(n);
        std::vector<float> floats(n);
        std::vector<uint8_t> bytes(n);
        for (size_t i = 0; i < n; ++i) {
          floats[i] = float(value(random) * (i % 37 == 5 ? 6 : 1));
          values[i] = floats[i];
          flags[i] = flagged(random);
          bytes[i] = flags[i];
        }
        const double threshold = 1.3;
        reference::sumThresholdPass(values, flags, window, threshold);
        sumThresholdPass({floats.data(), bytes.data(), n, 1}, window, float(threshold), scratch);
        for (size_t i = 0; i < n; ++i) CPPUNIT_ASSERT_EQUAL(bool(flags[i]), bool(bytes[i]));
      }
    }
  }

  /// sumThresholdColumns (every column at once, the lanes of a vector), both kernels,
  /// against sumThreshold on each column alone, on random exponential values with a few
  /// strong ones and random flags, and on values just around the longer windows'
  /// thresholds (1.47 .. 2.5: groups where some window lengths are skipped, some not); column
  /// counts that fill the vectors and ones that do not.
  void columnsAgainstSeries() {
    std::mt19937 random(13);
    std::exponential_distribution<float> value(1.0);
    std::uniform_real_distribution<float> nearThresholds(0.5f, 2.2f);
    std::bernoulli_distribution flagged(0.05), strong(0.02);
    std::vector<uint8_t> passScratch;
    ColumnScratch scratch;
    size_t before = 0, after = 0;
    for (ColumnKernel kernel : {ColumnKernel::kBest, ColumnKernel::kPlain})
      for (bool near : {false, true})
        for (size_t columns : {1, 16, 37, 64})
          for (size_t rows : {1, 5, 48, 63}) {
            std::vector<float> values(rows * columns);
            std::vector<uint8_t> flags(rows * columns);
            for (size_t i = 0; i < values.size(); ++i) {
              values[i] =
                  near ? nearThresholds(random) : value(random) * (strong(random) ? 8.0f : 1.0f);
              flags[i] = flagged(random);
              before += flags[i];
            }
            // thresholds 1 + 2 · 1.5^log2 M / M: 3, 2.5, 2.13, 1.84, 1.63, 1.47
            const RobustStatistics statistics{1.0f, 0.5f, rows * columns};
            std::vector<uint8_t> expected = flags;
            for (size_t l = 0; l < columns; ++l)
              sumThreshold({values.data() + l, expected.data() + l, rows, columns}, statistics,
                           4.0f, 32, passScratch);
            sumThresholdColumns(values.data(), flags.data(), rows, columns, statistics, 4.0f, 32,
                                scratch, kernel);
            for (size_t i = 0; i < flags.size(); ++i) {
              CPPUNIT_ASSERT_EQUAL_MESSAGE(std::to_string(columns) + " columns, " +
                                               std::to_string(rows) + " rows, value " +
                                               std::to_string(i) + (near ? ", near" : "") +
                                               (kernel == ColumnKernel::kPlain ? ", plain" : ""),
                                           expected[i], flags[i]);
              after += flags[i];
            }
          }
    CPPUNIT_ASSERT(after > before + before / 2);  // the strong values and their windows
  }

  /// gatherKeys, selectRanks and columnMedians (bisection on the float keys; both kernels) against
  /// sorting, on values with negatives, zeros, duplicates, infinities and flags, and a
  /// column all flagged.
  void orderStatisticsAgainstSorting() {
    std::mt19937 random(14);
    std::normal_distribution<float> gauss(0, 3);
    std::bernoulli_distribution flagged(0.1), special(0.05);
    const float specials[] = {0.0f,
                              -0.0f,
                              1.0f,
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(),
                              1e-40f};
    auto draw = [&] {
      return special(random) ? specials[random() % std::size(specials)] : gauss(random);
    };
    auto sorted = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    SelectionScratch selection;
    std::vector<uint32_t>& keys = selection.keys;
    for (ColumnKernel kernel : {ColumnKernel::kBest, ColumnKernel::kPlain})
      for (size_t n : {1, 2, 7, 17, 100, 3024}) {
        std::vector<float> values(n), kept;
        std::vector<uint8_t> flags(n);
        for (size_t i = 0; i < n; ++i) {
          values[i] = draw();
          flags[i] = n > 1 && flagged(random);
          if (!flags[i]) kept.push_back(values[i]);
        }
        const size_t count = gatherKeys(values.data(), flags.data(), n, 1, keys, kernel);
        CPPUNIT_ASSERT_EQUAL(kept.size(), count);
        const std::vector<float> order = sorted(kept);
        const size_t ranks[] = {0, count / 10, count / 2, count - 1};
        float selected[4];
        selectRanks(keys.data(), count, ranks, selected, selection, kernel);
        for (size_t j = 0; j < 4; ++j)
          CPPUNIT_ASSERT_EQUAL(order[ranks[j]], selected[j]);  // -0 == +0: sort ties them
      }
    MedianScratch scratch;
    for (ColumnKernel kernel : {ColumnKernel::kBest, ColumnKernel::kPlain})
      for (size_t columns : {1, 16, 37, 64})
        for (size_t rows : {1, 4, 48}) {
          std::vector<float> values(rows * columns), medians(columns);
          std::vector<uint8_t> flags(rows * columns);
          for (size_t i = 0; i < values.size(); ++i) {
            values[i] = draw();
            flags[i] = flagged(random) || i % columns == columns - 1;  // the last column: none
          }
          columnMedians(values.data(), flags.data(), rows, columns, medians.data(), scratch,
                        kernel);
          for (size_t l = 0; l < columns; ++l) {
            std::vector<float> kept;
            for (size_t i = 0; i < rows; ++i)
              if (!flags[i * columns + l]) kept.push_back(values[i * columns + l]);
            const float expected = kept.empty() ? 0.0f : sorted(kept)[kept.size() / 2];
            CPPUNIT_ASSERT_EQUAL(expected, medians[l]);
          }
        }
  }

  /// detail::clippedMoments (robustStatistics's σ, winsorized and normal), both kernels, on
  /// random keys with negatives, zeros and duplicates, clipped to two of their values or
  /// not at all; counts below, at and past the 8 lanes: the sums bit for bit equal, the
  /// squares within 1e-14 of themselves (the AVX-512 kernel fuses its multiply-adds), and
  /// both against the moments summed in long double.
  void clippedMomentsBothKernels() {
    std::mt19937 random(15);
    std::normal_distribution<float> gauss(2, 3);
    std::bernoulli_distribution special(0.05);
    const float infinity = std::numeric_limits<float>::infinity();
    for (size_t count : {1, 5, 8, 9, 17, 100, 3025}) {
      std::vector<uint32_t> keys(count);
      for (uint32_t& key : keys)
        key = keyOf(special(random) ? (random() % 2 ? 0.0f : -0.0f) : gauss(random));
      std::vector<float> order(count);
      std::transform(keys.begin(), keys.end(), order.begin(), keyValue);
      std::sort(order.begin(), order.end());
      const std::pair<float, float> clips[] = {{-infinity, infinity},
                                               {order[count / 10], order[count - 1 - count / 10]}};
      for (auto [low, high] : clips) {
        double sum[2], squares[2];
        int k = 0;
        for (ColumnKernel kernel : {ColumnKernel::kBest, ColumnKernel::kPlain}) {
          detail::clippedMoments(keys.data(), count, low, high, sum[k], squares[k], kernel);
          ++k;
        }
        const std::string where = std::to_string(count) + " keys, clipped to " +
                                  std::to_string(low) + " .. " + std::to_string(high);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(where, sum[0], sum[1]);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(where, squares[1], squares[0], 1e-14 * squares[1]);
        long double exact = 0, deviations = 0;
        for (uint32_t key : keys) exact += std::clamp(keyValue(key), low, high);
        const long double mean = exact / count;
        for (uint32_t key : keys)
          deviations += std::pow(std::clamp(keyValue(key), low, high) - mean, 2);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(where, double(exact), sum[1],
                                             1e-12 * double(std::abs(exact)) + 1e-12);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(where, double(deviations), squares[1],
                                             1e-12 * double(deviations) + 1e-12);
      }
    }
  }

  /// zeroFlagged, both kernels (AVX-512 masked stores of up to 16, std::fill_n), on random
  /// samples with lost spectra and flagged runs of every length from 1 to 70 (across mask
  /// words, to the block's end): exactly the samples of the spectra that arrived and were
  /// flagged become 0, in all four rows of each channel; every other sample (lost ones,
  /// the padding past the block) is left as it was.
  void zeroFlaggedBothKernels() {
    std::mt19937 random(16);
    std::uniform_real_distribution<float> sample(1.0f, 2.0f);
    std::bernoulli_distribution lost(0.1), run(0.08);
    std::uniform_int_distribution<int> length(1, 70);
    const int channels = 5;
    size_t zeroed = 0;
    for (int spectra : {1, 16, 63, 200, 768}) {
      const int padded = CorrelatorKernel::paddedLength(spectra);
      PreCorrelationFlagger flagger(flaggingOn(), channels, spectra, padded);
      SpectrumMask valid(spectra);
      for (int s = 0; s < spectra; ++s) valid.set(s, !lost(random));
      ChannelFlags flags(channels, spectra);
      for (int c = 0; c < channels; ++c) {
        SpectrumMask& mask = flags.channel(c);
        mask.copyFrom(valid);
        for (int s = 0; s < spectra; ++s)
          if (run(random)) mask.clear(s, std::min(spectra, s + length(random)));
        if (c == channels - 1) mask.clear(std::max(0, spectra - 20), spectra);  // to the end
      }
      std::vector<float> before(size_t(channels) * 4 * size_t(padded));
      for (float& x : before) x = sample(random);
      std::vector<float> best = before, plain = before;
      flagger.zeroFlagged(best.data(), valid, flags, ColumnKernel::kBest);
      flagger.zeroFlagged(plain.data(), valid, flags, ColumnKernel::kPlain);
      for (size_t i = 0; i < before.size(); ++i) {
        const int c = int(i / (4 * size_t(padded))), s = int(i % size_t(padded));
        const bool flagged = s < spectra && valid.valid(s) && !flags.channel(c).valid(s);
        const std::string where = std::to_string(spectra) + " spectra, channel " +
                                  std::to_string(c) + ", spectrum " + std::to_string(s);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(where, flagged ? 0.0f : before[i], plain[i]);
        CPPUNIT_ASSERT_EQUAL_MESSAGE(where + ", AVX-512", plain[i], best[i]);
        zeroed += flagged;
      }
    }
    CPPUNIT_ASSERT(zeroed > 1000);
  }

  void cellPowersAgainstTwin() {
    std::mt19937 random(4);
    for (int cell : {1, 7, 16, 100}) {
      StationData d(16, 400);
      d.noise(2.0, random);
      d.lose(30, 50);
      FlaggingSettings settings = flaggingOn();
      settings.spectraPerCell = cell;
      settings.preCorrelationNoChannels = true;
      PreCorrelationFlagger flagger(settings, d.nrChannels, d.nrSpectra, d.padded);
      std::vector<float> power(size_t(d.nrChannels) * size_t(flagger.nrCells()));
      std::vector<float> spectra(size_t(d.nrSpectra));
      flagger.cellPowers(d.samples.data(), power, spectra);
      for (int c = 1; c < d.nrChannels; ++c)
        for (int k = 0; k < flagger.nrCells(); ++k) {
          double sum = 0;
          for (int s = k * cell; s < std::min(d.nrSpectra, (k + 1) * cell); ++s)
            for (int r = 0; r < 4; ++r) sum += std::pow(double(d.row(c, r / 2, r % 2)[s]), 2);
          CPPUNIT_ASSERT_DOUBLES_EQUAL(
              sum, power[size_t(c) * size_t(flagger.nrCells()) + size_t(k)], 1e-5 * sum + 1e-6);
        }
      for (int s = 0; s < d.nrSpectra; ++s) {
        double sum = 0;
        for (int c = 1; c < d.nrChannels; ++c)
          for (int r = 0; r < 4; ++r) sum += std::pow(double(d.row(c, r / 2, r % 2)[s]), 2);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(sum, spectra[size_t(s)], 1e-5 * sum + 1e-6);
      }
    }
  }

  /// The whole flag() against the twin, for every type, both statistics, lost spectra,
  /// cells that do not divide the block (of 24 spectra; of 16: four to a mask word; of 21:
  /// 48 cells, whole vectors of cells), C = 1.
  void flagsAgainstTwin() {
    std::mt19937 random(5);
    const PreFlaggerType types[] = {PreFlaggerType::kThreshold,
                                    PreFlaggerType::kIntegratedThreshold,
                                    PreFlaggerType::kIntegratedSumThreshold,
                                    PreFlaggerType::kIntegratedThreshold2D,
                                    PreFlaggerType::kIntegratedSumThreshold2D,
                                    PreFlaggerType::kSumThreshold};
    for (int channels : {1, 16}) {
      StationData d(channels, 1000);
      d.noise(1.0, random);
      d.add(channels > 1 ? 7 : 0, 0, 1000, 1.0, random);
      for (int c = 0; c < channels; ++c) d.add(c, 500, 520, 5.0, random);
      d.lose(100, 140);
      for (PreFlaggerType type : types)
        for (FlaggerStatistics kind : {FlaggerStatistics::kWinsorized, FlaggerStatistics::kNormal})
          for (bool noChannels : {false, true})
            for (int cell : {24, 16, 21}) {  // 1000 = 41 x 24 + 16 = 62 x 16 + 8 = 47 x 21 + 13
              FlaggingSettings settings = flaggingOn();
              settings.preType = type;
              settings.preStatistics = kind;
              settings.preCorrelationNoChannels = noChannels;
              settings.spectraPerCell = cell;
              PreCorrelationFlagger flagger(settings, d.nrChannels, d.nrSpectra, d.padded);
              auto workspace = flagger.makeWorkspace();
              ChannelFlags flags(d.nrChannels, d.nrSpectra);
              StationFlagStatistics statistics;
              flagger.flag(d.samples.data(), d.valid, flags, statistics, workspace);
              const auto expected = reference::flagStation(
                  d.samples.data(), d.nrChannels, d.nrSpectra, d.padded, d.validVector(), settings);
              uint64_t flagged = 0;
              for (int c = 0; c < d.nrChannels; ++c)
                for (int s = 0; s < d.nrSpectra; ++s) {
                  CPPUNIT_ASSERT_EQUAL_MESSAGE(
                      preFlaggerTypeName(type) + " channel " + std::to_string(c) + " spectrum " +
                          std::to_string(s),
                      bool(expected[size_t(c)][size_t(s)]), flags.channel(c).valid(s));
                  if (c >= flagger.firstChannel())
                    flagged += d.valid.valid(s) && !expected[size_t(c)][size_t(s)];
                }
              CPPUNIT_ASSERT_EQUAL(flagged, statistics.flaggedSamples);
            }
    }
  }

  /// flagCells() on the cell powers the delay correction summed while writing the samples
  /// (the chain's way) gives the very flags and statistics of flag() on those samples: every
  /// kind of interference, lost spectra, in the chain's chunks of 256 spectra.
  void cellPowersFromTheDelayCorrection() {
    std::mt19937 random(15);
    StationData d = withInterference(random);
    d.lose(700, 730);
    // the samples as the filter bank's spectra[spectrum][channel][pol]; without delay and
    // bandpass the correction writes them back unchanged
    std::vector<std::complex<float>> spectra(size_t(d.nrSpectra) * size_t(d.nrChannels) * 2);
    for (int s = 0; s < d.nrSpectra; ++s)
      for (int c = 0; c < d.nrChannels; ++c)
        for (int pol = 0; pol < 2; ++pol)
          spectra[(size_t(s) * size_t(d.nrChannels) + size_t(c)) * 2 + size_t(pol)] = {
              d.row(c, pol, 0)[s], d.row(c, pol, 1)[s]};
    const FlaggingSettings settings = flaggingOn();
    PreCorrelationFlagger flagger(settings, d.nrChannels, d.nrSpectra, d.padded);
    CPPUNIT_ASSERT(flagger.takesCellPowers());
    auto workspace = flagger.makeWorkspace();
    DelayAndBandpassCorrection correction(d.nrChannels, d.nrSpectra, d.padded, 195312.5, false,
                                          false);
    DelayAndBandpassCorrection::Phasors phasors;
    correction.start(150 * 195312.5, 0, 0, phasors);
    std::vector<float> corrected(d.samples.size(), 0.0f);
    for (int first = 0; first < d.nrSpectra; first += 256)
      correction.apply(spectra.data() + size_t(first) * size_t(d.nrChannels) * 2, d.valid, first,
                       std::min(256, d.nrSpectra - first), phasors, corrected.data(),
                       {workspace.power.data(), size_t(flagger.nrCells())});
    for (int c = 0; c < d.nrChannels; ++c)
      for (int r = 0; r < 4; ++r)
        for (int s = 0; s < d.nrSpectra; ++s)
          CPPUNIT_ASSERT_EQUAL(
              d.row(c, r / 2, r % 2)[s],
              corrected[(size_t(c) * 4 + size_t(r)) * size_t(d.padded) + size_t(s)]);
    ChannelFlags fused(d.nrChannels, d.nrSpectra), plain(d.nrChannels, d.nrSpectra);
    StationFlagStatistics fusedStatistics, plainStatistics;
    flagger.flagCells(d.valid, fused, fusedStatistics, workspace);
    flagger.flag(d.samples.data(), d.valid, plain, plainStatistics, workspace);
    uint64_t flagged = 0;
    for (int c = 0; c < d.nrChannels; ++c) {
      CPPUNIT_ASSERT(fused.channel(c).equals(plain.channel(c)));
      flagged += uint64_t(d.valid.count() - plain.channel(c).count());
    }
    CPPUNIT_ASSERT(flagged > 7000);  // the interference was found
    CPPUNIT_ASSERT_EQUAL(plainStatistics.flaggedSamples, fusedStatistics.flaggedSamples);
    CPPUNIT_ASSERT_EQUAL(plainStatistics.flaggedCells, fusedStatistics.flaggedCells);
    CPPUNIT_ASSERT_EQUAL(plainStatistics.power, fusedStatistics.power);
  }

  void validCountsAgainstTwin() {
    std::mt19937 random(6);
    std::bernoulli_distribution valid(0.8);
    const int stations = 4, channels = 8, spectra = 200;
    std::vector<ChannelFlags> flags;
    for (int st = 0; st < stations; ++st) flags.emplace_back(channels, spectra);
    const std::vector<bool> row(size_t(spectra), false);
    const std::vector<std::vector<bool>> station(size_t(channels), row);
    std::vector<std::vector<std::vector<bool>>> plain(size_t(stations), station);
    for (int st = 0; st < stations; ++st)
      for (int c = 0; c < channels; ++c)
        for (int s = 0; s < spectra; ++s) {
          // even channels from 2 as channel 1 (the counter's shortcut), the others random;
          // channels flagged whole (the other shortcut): 5 everywhere, 3 at station 1, and
          // at station 3 its first channel (and so the even ones)
          const bool whole = c == 5 || (c == 3 && st == 1) || (c == 1 && st == 3);
          const bool v = !whole && (c > 1 && c % 2 == 0 ? bool(plain[size_t(st)][1][size_t(s)])
                                                        : valid(random));
          flags[size_t(st)].channel(c).set(s, v);
          plain[size_t(st)][size_t(c)][size_t(s)] = v;
        }
    std::vector<const ChannelFlags*> pointers;
    for (const ChannelFlags& f : flags) pointers.push_back(&f);
    CorrelatedData block(stations, channels), expected(stations, channels);
    ValidSampleCounter(stations, channels).count(pointers, block);
    reference::countValidSamples(plain, expected);
    for (size_t i = 0; i < block.validSamples.size(); ++i)
      CPPUNIT_ASSERT_EQUAL(expected.validSamples[i], block.validSamples[i]);
  }

  /// ≥ 95 % of every injected kind flagged; the clean cells ≤ 1 % flagged.
  void interferenceFlagged() {
    std::mt19937 random(7);
    StationData d = withInterference(random);
    const Score s = flagAndScore(d, flaggingOn());
    std::cout << "\npre-correlation flagger, SUM_THRESHOLD: " << 100 * s.detected << " % of "
              << s.touched << " interfered samples flagged, " << 100 * s.falsePositives << " % of "
              << s.clean << " clean ones\n";
    CPPUNIT_ASSERT(s.detected >= 0.95);
    CPPUNIT_ASSERT(s.falsePositives <= 0.01);
    // Each kind on its own.
    auto only = [&](auto inject) {
      std::mt19937 r(8);
      StationData e(64, 3072);
      e.noise(1.0, r);
      inject(e, r);
      return flagAndScore(e, flaggingOn());
    };
    const Score tone = only([](StationData& e, std::mt19937& r) { e.add(20, 0, 3072, 0.3, r); });
    const Score burst = only([](StationData& e, std::mt19937& r) {
      for (int c = 1; c < 64; ++c) e.add(c, 2000, 2010, 3.0, r);
    });
    const Score drift = only([](StationData& e, std::mt19937& r) {
      for (int s = 0; s < 3072; ++s) e.add(5 + s / 128, s, s + 1, 4.0, r);
    });
    CPPUNIT_ASSERT(tone.detected >= 0.95 && tone.falsePositives <= 0.01);
    CPPUNIT_ASSERT(burst.detected >= 0.95 && burst.falsePositives <= 0.01);
    CPPUNIT_ASSERT(drift.detected >= 0.95 && drift.falsePositives <= 0.01);
  }

  /// Gaussian noise alone: the false-positive rate over 8 blocks (stated in the README).
  void cleanNoiseHardlyFlagged() {
    std::mt19937 random(9);
    uint64_t flagged = 0, total = 0;
    for (int trial = 0; trial < 8; ++trial) {
      StationData d(64, 3072);
      d.noise(1.0, random);
      const Score s = flagAndScore(d, flaggingOn());
      flagged += uint64_t(std::llround(s.falsePositives * double(s.clean)));
      total += s.clean;
    }
    const double rate = double(flagged) / double(total);
    std::cout << "\npre-correlation flagger on clean noise: " << flagged << " of " << total
              << " samples flagged (" << 100 * rate << " %)\n";
    CPPUNIT_ASSERT(rate <= 0.002);
  }

  /// An FM transmitter filling half a subband with carriers steady over the block (as the
  /// real IE613 capture's subband 29, where 8 of 15 channels are above twice the quiet ones
  /// and the loudest 300 times): its channels, 3 to 150 times the noise above it, flagged,
  /// the quiet ones kept. The channels' winsorized spread would hide all but the loudest
  /// two. 16 channels of one cell of 16 spectra (ie613_flagging_test's blocks: a channel's
  /// power has σ = 18 % of its level) and 64 channels of 3072 spectra, 20 blocks each.
  void subbandFilledByFmFlagged() {
    std::mt19937 random(12);
    const double hump[] = {3.0, 6.0, 40.0, 150.0, 15.0, 4.0, 3.0};  // × the noise
    for (const auto& [channels, spectra] : {std::pair{16, 16}, std::pair{64, 3072}}) {
      double hit = 0, touched = 0, wrong = 0, clean = 0;
      for (int trial = 0; trial < 20; ++trial) {
        StationData d(channels, spectra);
        d.noise(1.0, random);
        const int first = 1 + trial % (channels - 7);
        for (int i = 0; i < 7; ++i) d.carrier(first + i, hump[i], 0.3 + 0.1 * i);
        const Score s = flagAndScore(d, flaggingOn());
        hit += s.detected * double(s.touched);
        touched += double(s.touched);
        wrong += s.falsePositives * double(s.clean);
        clean += double(s.clean);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(channels) + " channels, trial " +
                                   std::to_string(trial) + ": " + std::to_string(s.detected),
                               s.detected >= 6.0 / 7);
      }
      std::cout << "\npre-correlation flagger, FM filling half of " << channels << " channels of "
                << spectra << " spectra: " << 100 * hit / touched << " % of its samples flagged, "
                << 100 * wrong / clean << " % of the clean ones\n";
      CPPUNIT_ASSERT(hit >= 0.99 * touched);
      CPPUNIT_ASSERT(wrong <= 0.02 * clean);
    }
  }

  /// Blocks of one cell (16 channels × 16 spectra: a channel's power has σ = 18 % of its
  /// level) and long blocks with the bandpass the correction leaves (16 channels × 12288
  /// spectra, σ = 0.6 %; ±0.16 dB: correlator/README.md): the clean rate stays below 0.2 %.
  void shortBlocksAndBandpassRippleHardlyFlagged() {
    std::mt19937 random(13);
    uint64_t flagged = 0, total = 0;
    for (int trial = 0; trial < 400; ++trial) {
      StationData d(16, 16);
      d.noise(1.0, random);
      const Score s = flagAndScore(d, flaggingOn());
      flagged += uint64_t(std::llround(s.falsePositives * double(s.clean)));
      total += s.clean;
    }
    // A ripple of period two channels; three channels high, the rest flat (one-sided: the
    // spread below the median does not see it, the bandpass's flatness in the noise does).
    std::vector<double> ripple(16), bump(16, 1.0);
    for (int c = 0; c < 16; ++c) ripple[size_t(c)] = std::pow(10.0, (c % 2 ? 0.016 : -0.016));
    for (int c = 6; c < 9; ++c) bump[size_t(c)] = std::pow(10.0, 0.016);
    uint64_t rippleFlagged = 0, rippleTotal = 0;
    for (int trial = 0; trial < 4; ++trial) {
      StationData d(16, 12288);
      d.noise(1.0, random);
      d.shape(trial % 2 ? bump : ripple);
      const Score s = flagAndScore(d, flaggingOn());
      rippleFlagged += uint64_t(std::llround(s.falsePositives * double(s.clean)));
      rippleTotal += s.clean;
    }
    std::cout << "\npre-correlation flagger, blocks of 16 spectra: " << flagged << " of " << total
              << " clean samples flagged; 16 channels of 12288 spectra with 0.16 dB of bandpass: "
              << rippleFlagged << " of " << rippleTotal << "\n";
    CPPUNIT_ASSERT(double(flagged) <= 0.002 * double(total));
    CPPUNIT_ASSERT(double(rippleFlagged) <= 0.002 * double(rippleTotal));
  }

  void noChannelsFlagsInTime() {
    std::mt19937 random(10);
    StationData d(64, 3072);
    d.noise(1.0, random);
    for (int c = 1; c < 64; ++c) d.add(c, 700, 702, 2.0, random);
    FlaggingSettings settings;
    settings.online = settings.preCorrelationNoChannels = true;
    const Score s = flagAndScore(d, settings);
    CPPUNIT_ASSERT(s.detected >= 0.95);
    CPPUNIT_ASSERT(s.falsePositives <= 0.001);
  }

  /// A station sending zeros or only a tone has no signal; one full of interference is
  /// flagged as such; the others stay.
  void brokenStations() {
    std::mt19937 random(11);
    const FlaggingSettings settings = flaggingOn();
    std::vector<StationData> stations;
    for (int s = 0; s < 5; ++s) stations.emplace_back(32, 768);
    for (int s = 0; s < 3; ++s) stations[size_t(s)].noise(1.0, random);
    stations[3].add(9, 0, 768, 50.0, random);  // station 3: a tone, nothing else
    // station 4: zeros
    PreCorrelationFlagger flagger(settings, 32, 768, stations[0].padded);
    auto workspace = flagger.makeWorkspace();
    std::vector<StationFlagStatistics> statistics(stations.size());
    for (size_t s = 0; s < stations.size(); ++s) {
      ChannelFlags flags(32, 768);
      flagger.flag(stations[s].samples.data(), stations[s].valid, flags, statistics[s], workspace);
    }
    auto broken = findBrokenStations(statistics, settings);
    CPPUNIT_ASSERT(broken[0] == BrokenStation::kNo && broken[1] == BrokenStation::kNo);
    CPPUNIT_ASSERT(broken[2] == BrokenStation::kNo);
    CPPUNIT_ASSERT(broken[3] == BrokenStation::kNoSignal);
    CPPUNIT_ASSERT(broken[4] == BrokenStation::kNoSignal);
    // Interference over most of the block.
    statistics[1].flaggedCells = statistics[1].cells * 3 / 4;
    broken = findBrokenStations(statistics, settings);
    CPPUNIT_ASSERT(broken[1] == BrokenStation::kInterference);
    // A station lost whole is not judged.
    statistics[2].cells = 0;
    CPPUNIT_ASSERT(findBrokenStations(statistics, settings)[2] == BrokenStation::kNo);
  }

  /// Through SubbandProcessor: a tone in one station and a burst in another are flagged;
  /// each baseline's count in channel c is what both stations' flags leave, the counts of
  /// an autocorrelation drop by exactly the samples flagged, and the flagged samples
  /// entered no visibility (the tone's channel keeps the noise's power).
  void chainCountsDropByWhatWasFlagged() {
    const int channels = 16, spectra = 768;
    ObservationSettings settings = test::makeSettings(3, channels, spectra);
    settings.flagging = flaggingOn();
    std::mt19937 random(12);
    const size_t samples = size_t(nrHistorySamples(settings)) + size_t(spectra) * channels;
    std::vector<StationBlock> blocks;
    const int toneChannel = 11;
    const double toneFrequency = double(toneChannel - channels / 2) / channels;  // of fs
    for (int s = 0; s < 3; ++s) {
      StationBlock block = test::makeBlock(settings, s);
      std::vector<std::complex<double>> x = test::noise(samples, 400.0, random);
      if (s == 1)
        for (size_t t = 0; t < samples; ++t)
          for (int pol = 0; pol < 2; ++pol)
            x[2 * t + size_t(pol)] +=
                std::polar(60.0, 2 * std::numbers::pi * toneFrequency * double(t));
      if (s == 2)
        for (size_t t = 6000; t < 6300; ++t)
          for (int pol = 0; pol < 2; ++pol) x[2 * t + size_t(pol)] *= 6.0;
      test::encodeSamples(x, block);
      blocks.push_back(std::move(block));
    }
    std::vector<const StationBlock*> pointers;
    for (const StationBlock& b : blocks) pointers.push_back(&b);
    SubbandProcessor processor(settings, 2);
    CorrelatedData output = processor.makeOutput();
    processor.process(pointers, 0, 0, output);

    const auto& flags = processor.channelFlags();
    CPPUNIT_ASSERT(flags[1].channel(toneChannel).count() < spectra / 20);
    const int burstSpectra = spectra - flags[2].channel(3).count();
    CPPUNIT_ASSERT(burstSpectra >= 300 / channels && burstSpectra < 60);
    for (int s = 0; s < 3; ++s) {
      uint64_t dropped = 0;
      for (int c = 1; c < channels; ++c) {
        const uint32_t auto_ = output.valid(baselineIndex(s, s), c);
        CPPUNIT_ASSERT_EQUAL(uint32_t(flags[size_t(s)].channel(c).count()), auto_);
        dropped += uint64_t(spectra) - auto_;
        for (int s2 = s; s2 < 3; ++s2)
          CPPUNIT_ASSERT_EQUAL(
              uint32_t(flags[size_t(s)].channel(c).countBoth(flags[size_t(s2)].channel(c))),
              output.valid(baselineIndex(s, s2), c));
      }
      CPPUNIT_ASSERT_EQUAL(processor.flagTotals()[size_t(s)].flaggedSamples, dropped);
    }
    // The tone's channel at station 1: what is left is noise (0.93 x 400 / 16 per channel
    // and polarisation), not the tone (3600, 150 times more): no tone sample entered.
    const int auto1 = baselineIndex(1, 1);
    const double clean = std::abs(output.visibility(auto1, 4, 0)) / output.valid(auto1, 4);
    const uint32_t left = output.valid(auto1, toneChannel);
    if (left > 0) {
      const double power = std::abs(output.visibility(auto1, toneChannel, 0)) / left;
      CPPUNIT_ASSERT_MESSAGE(std::to_string(power / clean), power < 2 * clean);
    }
    CPPUNIT_ASSERT_EQUAL(
        0.0, std::abs(output.visibility(auto1, toneChannel, 0)) * (left == 0 ? 1.0 : 0.0));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PreCorrelationFlaggerTest);

}  // namespace rtcp::correlator
