// Pre-correlation flags in the beam former: the valid fractions carried from the
// delay-compensation grid to the final channels (ValidFractionMap, stationFractions), and
// through the whole BeamFormerProcessor a steady source at 8 stations, one of which hears a
// tone and broadband bursts: with flagging on the coherent and incoherent Stokes equal the
// interference-free run's within the noise, the valid fractions drop by exactly what the
// flagger flagged, and the tone's channel by the flagged station's share.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <iostream>
#include <numbers>
#include <random>

#include "BeamFormerProcessor.h"
#include "ChainTestData.h"
#include "ValidFractions.h"

namespace rtcp::correlator::beamformed {

namespace {

using Stream = std::vector<std::complex<double>>;  ///< samples[time][pol]

constexpr int kStations = 8, kSamples = 32768, kBlocks = 3, kDelayChannels = 64;
constexpr int kFinalChannels = 64, kIntegration = 4;
constexpr int kRfiStation = 3;
constexpr double kNoise = 900, kSource = 225;  ///< N and S per station and polarisation
/// The tone sits at the centre of delay channel 40 (baseband (40 - 32) fs / 64), which is
/// final channel 40; bursts take 1024 of every 16384 samples.
constexpr int kToneDelayChannel = 40, kToneFinalChannel = 40;
constexpr double kTonePower = 0.5 * kNoise, kBurstPower = 20 * kNoise;

bool inBurst(int64_t t) { return t % 16384 >= 4096 && t % 16384 < 5120; }

Stream gaussian(size_t samples, double power, std::mt19937& random) {
  std::normal_distribution<double> gauss(0, std::sqrt(power / 2));
  Stream stream(2 * samples);
  for (auto& v : stream) v = {gauss(random), gauss(random)};
  return stream;
}

/// Every station: its own noise plus the source at the SAP centre (the same samples at
/// each); with rfi, station kRfiStation also the tone and the bursts.
std::vector<Stream> skyStreams(bool rfi) {
  std::mt19937 random(17);
  const size_t total = size_t(kSamples) * kBlocks;
  const Stream source = gaussian(total, kSource, random);
  std::vector<Stream> streams;
  for (int s = 0; s < kStations; ++s) {
    streams.push_back(gaussian(total, kNoise, random));
    for (size_t i = 0; i < streams.back().size(); ++i) streams.back()[i] += source[i];
  }
  const Stream bursts = gaussian(total, kBurstPower, random);
  if (!rfi) return streams;
  Stream& station = streams[kRfiStation];
  const double step =
      2 * std::numbers::pi * (kToneDelayChannel - kDelayChannels / 2) / double(kDelayChannels);
  for (size_t t = 0; t < total; ++t)
    for (size_t pol = 0; pol < 2; ++pol) {
      station[2 * t + pol] += std::polar(std::sqrt(kTonePower), step * double(t));
      if (inBurst(int64_t(t))) station[2 * t + pol] += bursts[2 * t + pol];
    }
  return streams;
}

/// superstation: stations 3 and 4 merged into one (OLAP.tiedArrayStationNames).
ObservationSettings makeSettings(bool flagging, bool superstation = false) {
  ObservationSettings settings = test::makeSettings(kStations, 16, kSamples / 16);
  if (superstation)
    settings.tiedArrayStationNames = {settings.stations[3].name, settings.stations[4].name};
  settings.startTime = 1.7e9;
  settings.correctBandPass = false;
  settings.subbands[0].frequency = 150e6;
  settings.beams = {Direction{1.0, 0.9, "J2000"}};
  settings.flagging.online = flagging;
  settings.flagging.preCorrelation = flagging;
  settings.flagging.detectBrokenStations = flagging;
  return settings;
}

/// One run: per block the outputs (a coherent TAB at the source, the incoherent Stokes) and
/// each station's flagged samples in that block.
struct Run {
  std::vector<std::vector<BeamFormedData>> outputs;    ///< [block][tab]
  std::vector<std::vector<uint64_t>> flaggedPerBlock;  ///< [block][station]
  std::vector<StationFlagTotals> totals;
};

/// flysEye: one beam per station instead of the two TABs.
Run run(const std::vector<Stream>& streams, bool flagging, bool flysEye = false,
        bool superstation = false) {
  const ObservationSettings settings = makeSettings(flagging, superstation);
  BeamFormerParameters parameters;
  parameters.nrDelayChannels = kDelayChannels;
  parameters.coherent = {StokesKind::kI, kFinalChannels, kIntegration};
  parameters.incoherent = {StokesKind::kI, kFinalChannels, kIntegration};
  parameters.flysEye = flysEye;
  parameters.tabs = {{}};
  if (!flysEye)
    parameters.tabs = {
        {TabParameters{settings.beams[0], true, 0}, TabParameters{settings.beams[0], false, 0}}};
  BeamFormerProcessor processor(settings, parameters, 2);
  CPPUNIT_ASSERT_EQUAL(flagging, processor.flagsInterference());
  const int history = nrHistorySamples(settings);
  Run result;
  std::vector<uint64_t> before(kStations, 0);
  for (int b = 0; b < kBlocks; ++b) {
    std::vector<StationBlock> blocks;
    for (int s = 0; s < kStations; ++s) {
      StationBlock block = test::makeBlock(settings, s, b);
      Stream samples(2 * size_t(block.header.nrSamples));
      for (int t = 0; t < block.header.nrSamples; ++t) {
        const int64_t time = int64_t(b) * kSamples + t - history;
        if (time < 0) continue;
        for (size_t pol = 0; pol < 2; ++pol)
          samples[2 * size_t(t) + pol] = streams[size_t(s)][2 * size_t(time) + pol];
      }
      test::encodeSamples(samples, block);
      blocks.push_back(std::move(block));
    }
    std::vector<const StationBlock*> pointers;
    for (const StationBlock& block : blocks) pointers.push_back(&block);
    std::vector<BeamFormedData> outputs = processor.makeOutputs(0);
    processor.process(pointers, 0, 0, outputs);
    result.outputs.push_back(std::move(outputs));
    std::vector<uint64_t> flagged(kStations, 0);
    for (size_t s = 0; s < processor.flagTotals().size(); ++s) {
      flagged[s] = processor.flagTotals()[s].flaggedSamples - before[s];
      before[s] = processor.flagTotals()[s].flaggedSamples;
    }
    result.flaggedPerBlock.push_back(flagged);
  }
  result.totals = processor.flagTotals();
  return result;
}

/// Σ samples / Σ valid fractions of a TAB over blocks 1 .. (block 0's first spectra carry
/// the final filter bank's fresh history, valid fraction 0), and the standard deviation of
/// that mean estimated from the spread of the values.
struct WeightedMean {
  double mean = 0, sigma = 0;
};
WeightedMean weightedMean(const Run& run, int tab) {
  double sum = 0, weight = 0, squares = 0;
  size_t n = 0;
  for (int b = 1; b < kBlocks; ++b) {
    const BeamFormedData& data = run.outputs[size_t(b)][size_t(tab)];
    for (size_t i = 0; i < data.validFraction.size(); ++i) {
      sum += data.samples[i];
      weight += data.validFraction[i];
      squares += double(data.samples[i]) * data.samples[i];
      ++n;
    }
  }
  const double perValue = sum / double(n);
  const double spread = std::sqrt(squares / double(n) - perValue * perValue);
  return {sum / weight, spread / std::sqrt(double(n)) * (sum / weight) / perValue};
}

/// Mean valid fraction of a TAB in block b (channel c, or every channel for c < 0).
double meanValid(const Run& run, int b, int tab, int c = -1) {
  const BeamFormedData& data = run.outputs[size_t(b)][size_t(tab)];
  double sum = 0;
  size_t n = 0;
  for (int i = 0; i < data.nrSamples; ++i)
    for (int k = 0; k < data.nrChannels; ++k)
      if (c < 0 || k == c) sum += data.validFraction[size_t(i * data.nrChannels + k)], ++n;
  return sum / double(n);
}

}  // namespace

class BeamFormerFlagsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormerFlagsTest);
  CPPUNIT_TEST(channelShares);
  CPPUNIT_TEST(mapKeepsTheMean);
  CPPUNIT_TEST(fractionsOfStations);
  CPPUNIT_TEST(interferenceAtOneStation);
  CPPUNIT_TEST(flysEye);
  CPPUNIT_TEST(superstation);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// Final channel f of 16 covers delay channels 4f - 2 .. 4f + 2 of 64 (baseband
  /// (c - C/2) fs / C), the outer two by half; channel 0 wraps around the subband edge;
  /// one final channel takes every delay channel alike; equal grids map one to one.
  void channelShares() {
    const ValidFractionMap map(64, 16, 1024);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.25, map.weight(8, 32), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.125, map.weight(8, 30), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.125, map.weight(8, 34), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, map.weight(8, 29), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.125, map.weight(0, 62), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.25, map.weight(0, 0), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.125, map.weight(0, 2), 1e-12);
    const ValidFractionMap one(64, 1, 1024);
    for (int d = 0; d < 64; ++d) CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0 / 64, one.weight(0, d), 1e-12);
    const ValidFractionMap same(32, 32, 1024);
    for (int f = 0; f < 32; ++f)
      for (int d = 0; d < 32; ++d)
        CPPUNIT_ASSERT_DOUBLES_EQUAL(f == d ? 1.0 : 0.0, same.weight(f, d), 1e-12);
    // Finer final channels: each lies in one delay channel or straddles two by half.
    const ValidFractionMap finer(16, 64, 1024);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, finer.weight(32, 8), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, finer.weight(34, 8), 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.5, finer.weight(34, 9), 1e-12);
    CPPUNIT_ASSERT_THROW(ValidFractionMap(64, 16, 1000), std::invalid_argument);
  }

  /// Random cells: every final value is a weighted mean (within 0..1), each final channel's
  /// shares add up to one, and the mean over the block is kept, for coarser, equal and
  /// finer final grids in time and frequency.
  void mapKeepsTheMean() {
    std::mt19937 random(5);
    std::uniform_real_distribution<float> fraction(0, 1);
    const int samples = 4096;
    for (auto [cd, cf] : {std::pair{64, 1}, {64, 16}, {64, 64}, {16, 64}, {32, 256}, {256, 4}}) {
      const ValidFractionMap map(cd, cf, samples);
      for (int f = 0; f < cf; ++f) {
        double shares = 0;
        for (int d = 0; d < cd; ++d) shares += map.weight(f, d);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, shares, 1e-12);
      }
      std::vector<float> cells(samples), valid(samples), scratch;
      for (float& c : cells) c = fraction(random);
      map.map(cells.data(), valid.data(), scratch);
      double in = 0, out = 0;
      for (int i = 0; i < samples; ++i) {
        in += cells[size_t(i)];
        out += valid[size_t(i)];
        CPPUNIT_ASSERT(valid[size_t(i)] >= -1e-6f && valid[size_t(i)] <= 1 + 1e-6f);
      }
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(std::to_string(cd) + " -> " + std::to_string(cf),
                                           in / samples, out / samples, 1e-5);
    }
    // Time: a final spectrum of 64 samples averages the four delay spectra of 16 it spans.
    const ValidFractionMap map(16, 64, 256);
    std::vector<float> cells(256, 1.0f), valid(256), scratch;
    std::fill_n(cells.begin() + 16, 16, 0.0f);  // delay spectrum 1 flagged in every channel
    map.map(cells.data(), valid.data(), scratch);
    for (int f = 0; f < 64; ++f) {
      CPPUNIT_ASSERT_DOUBLES_EQUAL(0.75, valid[size_t(f)], 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, valid[size_t(64 + f)], 1e-6);
    }
  }

  /// The fraction of stations valid per cell: lost spectra (every channel) and flagged
  /// cells (one channel) count alike.
  void fractionsOfStations() {
    const int spectra = 100, channels = 4;
    std::vector<ChannelFlags> flags;
    for (int s = 0; s < 3; ++s) flags.emplace_back(channels, spectra);
    for (int c = 0; c < channels; ++c) flags[0].channel(c).set(70, false);  // lost
    flags[1].channel(2).set(70, false);                                     // flagged
    flags[2].channel(2).set(99, false);
    std::vector<const ChannelFlags*> stations;
    for (const ChannelFlags& f : flags) stations.push_back(&f);
    std::vector<float> cells(spectra * channels);
    stationFractions(stations, spectra, cells.data());
    for (int s = 0; s < spectra; ++s)
      for (int c = 0; c < channels; ++c) {
        double expected = 1;
        if (s == 70) expected = c == 2 ? 1.0 / 3 : 2.0 / 3;
        if (s == 99 && c == 2) expected = 2.0 / 3;
        CPPUNIT_ASSERT_DOUBLES_EQUAL(expected, cells[size_t(s * channels + c)], 1e-6);
      }
  }

  /// 8 stations, a steady source (S = N / 4) at the SAP centre; station 3 also hears a tone
  /// (N / 2, in delay channel 40 of 64, final channel 40 of 64) and broadband bursts (20 N,
  /// 1/16 of the time). The valid fractions of every block after the first are 1 minus
  /// the flagged samples over the 8 stations' samples, exactly; the tone's channel lacks
  /// station 3's share (1/8) beyond the others. Flagged, the incoherent Stokes (its sum
  /// divided by its valid fractions') equals the interference-free run's within 4 sigma of
  /// the noise; unflagged both are 10 sigma off. A flagged sample of one station is
  /// treated as lost for that station: the coherent sum goes on over the other 7, so a
  /// value with one station flagged holds n - 1 stations' noise and (n - 1)^2 of their
  /// source power at a valid fraction (n - 1) / n: divided by it, the noise is kept and
  /// the source's n^2 S loses n S, S / (n S + N) = 1/12 of the value here. The coherent
  /// TAB equals the clean run's less that share of the values with a flag (n times the
  /// valid fraction's mean drop), within 4 sigma: 0.65 % here (2.4 sigma).
  void interferenceAtOneStation() {
    const std::vector<Stream> clean = skyStreams(false), rfi = skyStreams(true);
    const Run reference = run(clean, false), flagged = run(rfi, true), unflagged = run(rfi, false);

    const double rfiFraction = double(flagged.totals[kRfiStation].flaggedSamples) /
                               double(flagged.totals[kRfiStation].validSamples);
    CPPUNIT_ASSERT_MESSAGE("station 3 flagged " + std::to_string(rfiFraction),
                           rfiFraction > 0.07 && rfiFraction < 0.2);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), flagged.totals[kRfiStation].brokenInterference);
    for (int s = 0; s < kStations; ++s)
      if (s != kRfiStation)
        CPPUNIT_ASSERT(double(flagged.totals[size_t(s)].flaggedSamples) <
                       0.01 * double(flagged.totals[size_t(s)].validSamples));

    for (int tab = 0; tab < 2; ++tab) {
      const std::string name = tab == 0 ? "coherent" : "incoherent";
      // Exactly what was flagged: every station's flagged samples of the block over the
      // block's 8 x kSamples station-samples (float sums: 1e-5).
      for (int b = 1; b < kBlocks; ++b) {
        uint64_t flaggedSamples = 0;
        for (uint64_t f : flagged.flaggedPerBlock[size_t(b)]) flaggedSamples += f;
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(
            name + " block " + std::to_string(b),
            1.0 - double(flaggedSamples) / (double(kStations) * kSamples),
            meanValid(flagged, b, tab), 1e-5);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, meanValid(reference, b, tab), 1e-6);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, meanValid(unflagged, b, tab), 1e-6);
        const double toneChannel = meanValid(flagged, b, tab, kToneFinalChannel);
        const double otherChannel = meanValid(flagged, b, tab, 3);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(name + ": the tone's channel", 1.0 / kStations,
                                             otherChannel - toneChannel, 0.02);
      }
      const WeightedMean expected = weightedMean(reference, tab);
      const WeightedMean withFlags = weightedMean(flagged, tab);
      const WeightedMean withoutFlags = weightedMean(unflagged, tab);
      double lost = 0;  // the valid fractions' mean drop over the blocks compared
      for (int b = 1; b < kBlocks; ++b) lost += (1 - meanValid(flagged, b, tab)) / (kBlocks - 1);
      const double sourceShare = kSource / (kStations * kSource + kNoise);
      const double predicted =
          tab == 0 ? expected.mean * (1 - sourceShare * kStations * lost) : expected.mean;
      std::cout << "\n"
                << name << ": clean " << expected.mean << " (sigma " << expected.sigma
                << "), flagged " << withFlags.mean << " (predicted " << predicted
                << "), not flagged " << withoutFlags.mean << "; valid fraction drop " << lost
                << ", station 3 flagged " << rfiFraction;
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(name + " flagged", predicted, withFlags.mean,
                                           4 * expected.sigma);
      CPPUNIT_ASSERT_MESSAGE(name + " not flagged: " + std::to_string(withoutFlags.mean) +
                                 " against " + std::to_string(expected.mean),
                             std::abs(withoutFlags.mean - expected.mean) > 10 * expected.sigma);
    }
  }

  /// Fly's eye: each station's beam carries its own flags only; station 3's valid
  /// fractions drop by its flagged fraction (of all 64 delay channels), the others' by
  /// theirs, and station 3's power over its valid fractions is the others' (the tone and
  /// the bursts taken out), within 4 sigma.
  void flysEye() {
    const Run flagged = run(skyStreams(true), true, true);
    CPPUNIT_ASSERT_EQUAL(size_t(kStations), flagged.outputs[0].size());
    for (int b = 1; b < kBlocks; ++b)
      for (int s = 0; s < kStations; ++s)
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(
            "station " + std::to_string(s) + " block " + std::to_string(b),
            1.0 - double(flagged.flaggedPerBlock[size_t(b)][size_t(s)]) / kSamples,
            meanValid(flagged, b, s), 1e-5);
    CPPUNIT_ASSERT(meanValid(flagged, 1, kRfiStation) < 0.95);
    const WeightedMean rfiStation = weightedMean(flagged, kRfiStation);
    const WeightedMean other = weightedMean(flagged, 0);
    std::cout << "\nfly's eye:";
    for (int s = 0; s < kStations; ++s) std::cout << " " << weightedMean(flagged, s).mean;
    std::cout << " (sigma " << other.sigma << ")";
    CPPUNIT_ASSERT_DOUBLES_EQUAL(other.mean, rfiStation.mean,
                                 4 * std::hypot(other.sigma, rfiStation.sigma));
  }

  /// Stations 3 (the interference) and 4 merged into a superstation: a sample either member
  /// flagged is flagged in the merged one, so over the 7 output stations the valid
  /// fractions drop by the union of the members' flags and the others': at least the larger
  /// member's, at most both.
  void superstation() {
    const Run flagged = run(skyStreams(true), true, false, true);
    const int outputStations = kStations - 1;
    for (int b = 1; b < kBlocks; ++b) {
      const std::vector<uint64_t>& f = flagged.flaggedPerBlock[size_t(b)];
      uint64_t others = 0;
      for (int s = 0; s < kStations; ++s)
        if (s != 3 && s != 4) others += f[size_t(s)];
      const double drop = 1 - meanValid(flagged, b, 1);
      const double samples = double(outputStations) * kSamples;
      CPPUNIT_ASSERT(drop > 0.05 / outputStations);
      CPPUNIT_ASSERT(drop >= (double(others + std::max(f[3], f[4])) - 0.5) / samples - 1e-6);
      CPPUNIT_ASSERT(drop <= (double(others + f[3] + f[4]) + 0.5) / samples + 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(drop, 1 - meanValid(flagged, b, 0), 1e-6);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormerFlagsTest);

}  // namespace rtcp::correlator::beamformed
