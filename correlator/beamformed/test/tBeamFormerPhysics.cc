// The beam former's physics on simulated station samples: coherent against incoherent
// beams, coherent dedispersion, Stokes conventions, fly's eye and lost samples.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <random>

#include "BeamFormerProcessor.h"
#include "ChainTestData.h"
#include "CoherentDedispersion.h"
#include "FftPlan.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/DelayModel.h"

namespace rtcp::correlator::beamformed {

namespace {

constexpr double kPi = std::numbers::pi;
constexpr double kDegree = kPi / 180;
using Stream = std::vector<std::complex<double>>;  ///< samples[time][pol]

/// nrStations within 1.5 km of a core position, one subband at `frequency`, one SAP,
/// blocks of `samples` samples (16 correlator channels: the blocks carry 240 samples of
/// filter history first, which the beam former skips).
ObservationSettings makeSettings(int nrStations, int samples, double frequency) {
  ObservationSettings settings = test::makeSettings(nrStations, 16, samples / 16);
  settings.startTime = 1.7e9;
  settings.correctBandPass = false;
  settings.subbands[0].frequency = frequency;
  settings.beams = {Direction{1.0, 0.9, "J2000"}};
  settings.referencePhaseCenter = {3826577.0, 461022.0, 5064892.0};
  std::mt19937 random(7);
  std::uniform_real_distribution<double> offset(-1500, 1500);
  for (StationSettings& station : settings.stations)
    for (int i = 0; i < 3; ++i)
      station.position[size_t(i)] = settings.referencePhaseCenter[size_t(i)] + offset(random);
  return settings;
}

/// Runs the blocks numbered `numbers` of the streams (streams[s]: station s's samples from
/// block 0's start), in that order, through a processor; lost(s, t) marks sample t of
/// station s lost.
std::vector<std::vector<BeamFormedData>> runBlocks(const ObservationSettings& settings,
                                                   const BeamFormerParameters& parameters,
                                                   const std::vector<Stream>& streams,
                                                   const std::vector<int>& numbers,
                                                   std::function<bool(int, int64_t)> lost = {}) {
  BeamFormerProcessor processor(settings, parameters, 2);
  const int history = nrHistorySamples(settings);
  const int64_t samples = settings.samplesPerBlock();
  std::vector<std::vector<BeamFormedData>> result;
  for (int b : numbers) {
    std::vector<StationBlock> blocks;
    for (int s = 0; s < settings.nrStations(); ++s) {
      StationBlock block = test::makeBlock(settings, s, b);
      Stream samplesOfBlock(2 * size_t(block.header.nrSamples));
      for (int t = 0; t < block.header.nrSamples; ++t) {
        const int64_t time = b * samples + t - history;
        if (time < 0) continue;
        const bool isLost = lost && lost(s, time);
        for (int pol = 0; pol < 2; ++pol)
          samplesOfBlock[2 * size_t(t) + size_t(pol)] =
              isLost ? 0.0 : streams[size_t(s)][2 * size_t(time) + size_t(pol)];
        if (isLost) block.setValid(0, t, false);
      }
      test::encodeSamples(samplesOfBlock, block);
      blocks.push_back(std::move(block));
    }
    std::vector<const StationBlock*> pointers;
    for (const StationBlock& block : blocks) pointers.push_back(&block);
    std::vector<BeamFormedData> outputs = processor.makeOutputs(0);
    processor.process(pointers, 0, 0, outputs);
    result.push_back(std::move(outputs));
  }
  return result;
}

/// Blocks 0 .. nrBlocks - 1 of the streams through a processor (runBlocks).
std::vector<std::vector<BeamFormedData>> run(const ObservationSettings& settings,
                                             const BeamFormerParameters& parameters,
                                             const std::vector<Stream>& streams, int nrBlocks,
                                             std::function<bool(int, int64_t)> lost = {}) {
  std::vector<int> numbers(static_cast<size_t>(nrBlocks));
  for (int b = 0; b < nrBlocks; ++b) numbers[size_t(b)] = b;
  return runBlocks(settings, parameters, streams, numbers, std::move(lost));
}

/// One station's stream of `total` samples at subband rate fs around `frequency` (Hz): a
/// pulse (flat spectrum, 0.5 per polarisation) that reaches the subband centre at sample
/// `arrival`, dispersed at `dm` (frequency f at its group delay k DM (1/f^2 - 1/f_sb^2)
/// after that). With undispersedChannels C > 0: in each of C channels the undispersed
/// pulse, delayed by its channel centre's dispersion delay (the delays between channels
/// that coherent dedispersion keeps).
Stream pulseStream(double fs, double frequency, int total, int64_t arrival, double dm,
                   int undispersedChannels = 0) {
  // The dispersion's phase about a frequency f0 (its delay at f0 taken out).
  auto dispersion = [&](double f, double f0) {
    return 2 * kPi * kDispersionConstant * dm * (f - f0) * (f - f0) / (f0 * f0 * f);
  };
  const double width = undispersedChannels > 0 ? fs / undispersedChannels : fs;
  FftPlan inverse(total, 2, 1, 0, 2, 1, FFTW_BACKWARD);
  AlignedBuffer<std::complex<float>> spectrum(2 * size_t(total));
  for (int k = 0; k < total; ++k) {
    const double baseband = (k < total / 2 ? k : k - total) * fs / total;
    const double f = frequency + baseband;
    const double f0 = frequency + std::round(baseband / width) * width;
    const double phase = -2 * kPi * double(k) * double(arrival) / total + dispersion(f, frequency) -
                         (undispersedChannels > 0 ? dispersion(f, f0) : 0);
    spectrum[2 * size_t(k)] = spectrum[2 * size_t(k) + 1] =
        std::complex<float>(std::polar(0.5, phase));
  }
  inverse.execute(spectrum.data());
  return Stream(spectrum.begin(), spectrum.end());
}

/// The output sample (over every block) with the most of component 0 in channel c of TAB
/// `tab`.
int peakSample(const std::vector<std::vector<BeamFormedData>>& blocks, int tab, int c) {
  double peak = -1;
  int at = -1, index = 0;
  for (const auto& outputs : blocks) {
    const BeamFormedData& data = outputs[size_t(tab)];
    for (int i = 0; i < data.nrSamples; ++i, ++index)
      if (data.sample(0, i, c) > peak) peak = data.sample(0, i, c), at = index;
  }
  return at;
}

/// Mean of component `component` of a TAB over every block, sample and channel.
double mean(const std::vector<std::vector<BeamFormedData>>& blocks, int tab, int component = 0) {
  double sum = 0;
  size_t n = 0;
  for (const auto& outputs : blocks) {
    const BeamFormedData& data = outputs[size_t(tab)];
    for (int i = 0; i < data.nrSamples; ++i)
      for (int c = 0; c < data.nrChannels; ++c, ++n) sum += data.sample(component, i, c);
  }
  return sum / double(n);
}

Stream gaussian(size_t samples, double power, std::mt19937& random) {
  std::normal_distribution<double> gauss(0, std::sqrt(power / 2));
  Stream stream(2 * samples);
  for (auto& v : stream) v = {gauss(random), gauss(random)};
  return stream;
}

}  // namespace

class BeamFormerPhysicsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormerPhysicsTest);
  CPPUNIT_TEST(coherentAgainstIncoherent);
  CPPUNIT_TEST(dedispersion);
  CPPUNIT_TEST(pulseTimes);
  CPPUNIT_TEST(gapsAreFlagged);
  CPPUNIT_TEST(leadInRebuildsTheState);
  CPPUNIT_TEST(delaysFromSettings);
  CPPUNIT_TEST(polarisation);
  CPPUNIT_TEST(flysEye);
  CPPUNIT_TEST(lostSamples);
  CPPUNIT_TEST(sharedValidFractions);
  CPPUNIT_TEST(parametersFromSettings);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// n stations see a steady source (power S per polarisation) 0.3 degrees from the SAP
  /// centre with independent noise N: the TAB on the source gives n (n S + N), the
  /// incoherent sum n (S + N), so their ratio is (n S + N) / (S + N); a TAB 2 degrees off
  /// the source adds it out of phase (ratio near 1).
  void coherentAgainstIncoherent() {
    const int n = 8, samples = 4096, blocks = 4;
    ObservationSettings settings = makeSettings(n, samples, 150e6);
    const Direction source{1.0, 0.9 + 0.3 * kDegree, "J2000"};
    BeamFormerParameters parameters;
    parameters.coherent = {StokesKind::kI, 1, 64};
    parameters.incoherent = {StokesKind::kI, 1, 64};
    parameters.tabs = {{TabParameters{source, true, 0},
                        TabParameters{Direction{1.0, 0.9 + 2.3 * kDegree, "J2000"}, true, 0},
                        TabParameters{settings.beams[0], false, 0}}};
    const double signal = 900, noise = 900;  // S = N, in squared sample units
    std::mt19937 random(11);
    std::vector<Stream> streams(static_cast<size_t>(n));
    for (auto& s : streams) s = gaussian(size_t(samples) * blocks, noise, random);
    DelayModel model(settings);
    for (int b = 0; b < blocks; ++b) {
      const double middle =
          double(settings.blockStartSample(b) + samples / 2) / settings.subbandWidth();
      const auto toSource = model.delays(source, middle),
                 toCentre = model.delays(settings.beams[0], middle);
      const Stream sky = gaussian(size_t(samples), signal, random);
      for (int s = 0; s < n; ++s) {
        const std::complex<double> phase =
            std::polar(1.0, 2 * kPi * 150e6 * (toSource[size_t(s)] - toCentre[size_t(s)]));
        for (size_t t = 0; t < 2 * size_t(samples); ++t)
          streams[size_t(s)][size_t(b) * 2 * samples + t] += sky[t] * phase;
      }
    }
    const auto outputs = run(settings, parameters, streams, blocks);
    const double incoherent = mean(outputs, 2);
    const double onSource = mean(outputs, 0) / incoherent;
    const double offSource = mean(outputs, 1) / incoherent;
    const double expected = (n * signal + noise) / (signal + noise);
    const double perSample = 2.0 * n * (signal + noise);  // 2 polarisations
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("incoherent power", 64 * perSample, incoherent,
                                         0.03 * 64 * perSample);
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("on source", expected, onSource, 0.03 * expected);
    CPPUNIT_ASSERT_MESSAGE("off source " + std::to_string(offSource), offSource < 1.5);
  }

  /// A pulse dispersed at DM 2 (50 MHz, 16 channels: 20 output samples of smearing per
  /// channel) arriving across a block edge. Dedispersed, each channel holds the undispersed
  /// pulse delayed by its centre's dispersion delay k DM / f0^2 (the delays between
  /// channels remain): its shape, energy and peak (after the latency). Not dedispersed,
  /// the width the DM predicts. The energy comes out whole across the block edge.
  void dedispersion() {
    const int samples = 8192, blocks = 4, channels = 16;
    const double frequency = 50e6, dm = 2;
    ObservationSettings settings = makeSettings(1, samples, frequency);
    const double fs = settings.subbandWidth(), width = fs / channels;
    const int64_t arrival = 2 * samples;  // at the subband centre: a block edge
    // dispersed: the pulse with the group delay k DM (1/f^2 - 1/f_sb^2) after `arrival`;
    // else the undispersed pulse delayed in each channel by its centre's dispersion delay.
    auto pulse = [&](bool dispersed) {
      return std::vector<Stream>{
          pulseStream(fs, frequency, samples * blocks, arrival, dm, dispersed ? 0 : channels)};
    };
    BeamFormerParameters parameters;
    parameters.coherent = {StokesKind::kI, channels, 1};
    parameters.tabs = {{TabParameters{settings.beams[0], true, dm}}};
    const auto dedispersed = run(settings, parameters, pulse(true), blocks);
    const int latency = BeamFormerProcessor(settings, parameters).dedispersionLatency();
    CPPUNIT_ASSERT(latency > 0 && latency % channels == 0);
    parameters.coherentDedispersion = false;
    const auto smeared = run(settings, parameters, pulse(true), blocks);
    const auto expected = run(settings, parameters, pulse(false), blocks);

    // Per channel: the series over all blocks, its energy, peak, equivalent width (energy
    // over peak) and the fraction of the energy within 40 output samples of the peak that
    // lies within one sample of it.
    struct Profile {
      double energy = 0, peak = 0, width = 0, core = 0;
      int at = 0;
    };
    auto profile = [&](const std::vector<std::vector<BeamFormedData>>& out, int c) {
      Profile p;
      std::vector<double> series;
      for (const auto& block : out)
        for (int s = 0; s < block[0].nrSamples; ++s) series.push_back(block[0].sample(0, s, c));
      for (size_t i = 0; i < series.size(); ++i) {
        p.energy += series[i];
        if (series[i] > p.peak) p.peak = series[i], p.at = int(i);
      }
      p.width = p.energy / p.peak;
      double near = 0, all = 0;
      for (int i = std::max(0, p.at - 40); i < std::min(int(series.size()), p.at + 41); ++i) {
        all += series[size_t(i)];
        if (std::abs(i - p.at) <= 1) near += series[size_t(i)];
      }
      p.core = near / all;
      return p;
    };
    for (int c = 2; c < channels - 1; ++c) {
      const Profile d = profile(dedispersed, c), s = profile(smeared, c), e = profile(expected, c);
      const double f0 = frequency + (c - channels / 2) * width;
      const double predicted =
          kDispersionConstant * dm *
          (1 / ((f0 - width / 2) * (f0 - width / 2)) - 1 / ((f0 + width / 2) * (f0 + width / 2))) *
          width;  // output samples (one per 1 / width seconds)
      const std::string what = "channel " + std::to_string(c);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(what + ": peak", e.at + latency / channels, d.at);
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": width", e.width, d.width, 0.05 * e.width);
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": core", e.core, d.core, 0.02);
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": energy", e.energy, d.energy, 0.005 * e.energy);
      // Smeared: the DM's sweep across the channel (its edges a little tapered by the
      // channel's response).
      CPPUNIT_ASSERT_MESSAGE(what + ": smeared width " + std::to_string(s.width) +
                                 " against predicted " + std::to_string(predicted),
                             s.width > 0.75 * predicted && s.width < 1.1 * predicted);
      CPPUNIT_ASSERT_MESSAGE(what + ": smeared, " + std::to_string(s.core) +
                                 " of the energy within a sample of the peak",
                             s.core < 4.0 / predicted);
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": energy", e.energy, s.energy, 0.005 * e.energy);
      // The peak at the channel centre's delay after the subband centre's (and the
      // filter bank's own 7 output samples).
      const double delay =
          kDispersionConstant * dm * (1 / (f0 * f0) - 1 / (frequency * frequency)) * width;
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(
          what + ": arrival", double(arrival) / channels + delay + 7, double(e.at), 1.0);
    }
  }

  /// Where a pulse lands (the output's time stamps): a pulse reaching the subband centre at
  /// stream sample `arrival`, dispersed at DM 2 (50 MHz), through a dedispersed coherent
  /// TAB of 16 channels and 2 spectra an output sample: in each channel, the output sample
  /// with the peak, placed at i C T - delayOf() from its block's start,
  /// is within an output sample of the arrival its channel centre's dispersion delay
  /// predicts; without the delay it would be the latency (9 output samples) late. An
  /// undispersed pulse in an incoherent TAB of 4 channels (the filter bank's delay only)
  /// and in a coherent TAB of 1 channel (no delay) likewise.
  void pulseTimes() {
    const int samples = 8192, blocks = 4, channels = 16;
    const double frequency = 50e6, dm = 2;
    const ObservationSettings settings = makeSettings(1, samples, frequency);
    const double fs = settings.subbandWidth();
    const int64_t arrival = 2 * samples + 1000;
    auto check = [&](const std::vector<std::vector<BeamFormedData>>& out, int tab, int delay, int c,
                     double predicted, const std::string& what) {
      const int perSample = samples / out[0][size_t(tab)].nrSamples;
      const int i = peakSample(out, tab, c);
      const double middle = double(i) * perSample + perSample / 2.0 - delay;
      CPPUNIT_ASSERT_MESSAGE(what + ": the peak's output sample " + std::to_string(i) + " is at " +
                                 std::to_string(middle) + ", predicted " +
                                 std::to_string(predicted),
                             std::abs(middle - predicted) <= perSample);
    };

    BeamFormerParameters parameters;
    parameters.coherent = {StokesKind::kI, channels, 2};
    parameters.incoherent = {StokesKind::kI, 4, 1};
    parameters.tabs = {
        {TabParameters{settings.beams[0], true, dm}, TabParameters{settings.beams[0], false, 0}}};
    const BeamFormerProcessor processor(settings, parameters);
    const int latency = processor.dedispersionLatency();
    CPPUNIT_ASSERT_EQUAL(288, latency);  // half the lowest channel's 318 samples + 128
    const int delays[2] = {processor.delayOf(0, 0), processor.delayOf(0, 1)};
    CPPUNIT_ASSERT_EQUAL(latency + 15 * channels / 2, delays[0]);
    CPPUNIT_ASSERT_EQUAL(15 * 4 / 2, delays[1]);
    const auto dispersed = run(settings, parameters,
                               {pulseStream(fs, frequency, samples * blocks, arrival, dm)}, blocks);
    for (int c = 1; c < channels; ++c) {
      const double f0 = frequency + (c - channels / 2) * fs / channels;
      const double delay = kDispersionConstant * dm * (1 / (f0 * f0) - 1 / (frequency * frequency));
      check(dispersed, 0, delays[0], c, double(arrival) + delay * fs,
            "dedispersed, channel " + std::to_string(c));
    }

    parameters.coherent = {StokesKind::kI, 1, 8};
    parameters.tabs[0][0].dispersionMeasure = 0;
    CPPUNIT_ASSERT_EQUAL(0, BeamFormerProcessor(settings, parameters).delayOf(0, 0));
    const auto undispersed = run(
        settings, parameters, {pulseStream(fs, frequency, samples * blocks, arrival, 0)}, blocks);
    check(undispersed, 0, 0, 0, double(arrival), "one channel");
    for (int c = 1; c < 4; ++c)
      check(undispersed, 1, delays[1], c, double(arrival),
            "incoherent, channel " + std::to_string(c));
  }

  /// A subband whose blocks do not follow each other on one processor (block 2 went to
  /// another rank) starts its histories afresh, and what that spoils is flagged: in block 3,
  /// as in block 0, the dedispersed TAB's first latency samples and the final filter
  /// banks' first 15 spectra have valid fraction 0; block 1, which follows block 0, is
  /// whole.
  void gapsAreFlagged() {
    const int samples = 8192;
    const ObservationSettings settings = makeSettings(2, samples, 50e6);
    std::mt19937 random(17);
    std::vector<Stream> streams;
    for (int s = 0; s < 2; ++s) streams.push_back(gaussian(size_t(samples) * 4, 900, random));
    BeamFormerParameters parameters;
    parameters.coherent = {StokesKind::kI, 16, 2};
    parameters.incoherent = {StokesKind::kI, 4, 1};
    parameters.tabs = {
        {TabParameters{settings.beams[0], true, 2.0}, TabParameters{settings.beams[0], false, 0}}};
    const auto out = runBlocks(settings, parameters, streams, {0, 1, 3});
    const int latency = BeamFormerProcessor(settings, parameters).dedispersionLatency();
    CPPUNIT_ASSERT(latency > 240);
    for (size_t k = 0; k < 3; ++k) {
      const bool fresh = k != 1;
      const BeamFormedData &coherent = out[k][0], &incoherent = out[k][1];
      for (int i = 0; i < coherent.nrSamples; ++i)
        for (int c = 0; c < 16; ++c)
          CPPUNIT_ASSERT_EQUAL_MESSAGE(
              "block " + std::to_string(coherent.block) + ", coherent sample " + std::to_string(i),
              fresh && i * 32 < latency ? 0.0f : 1.0f,
              coherent.validFraction[size_t(i) * 16 + size_t(c)]);
      for (int i = 0; i < incoherent.nrSamples; ++i)
        CPPUNIT_ASSERT_EQUAL_MESSAGE("block " + std::to_string(incoherent.block) +
                                         ", incoherent sample " + std::to_string(i),
                                     fresh && i < 15 ? 0.0f : 1.0f,
                                     incoherent.validFraction[size_t(i) * 4 + 1]);
    }
  }

  /// A processor that starts beamFormerLeadInBlocks() blocks before block 4 (a dump's
  /// replay) gives blocks 4 and 5 of one that started at block 0 (the live observation)
  /// bit for bit, samples and valid fractions of every TAB: a coherent TAB dedispersed at
  /// DM 14 (a latency of 1248 samples: the overlap-save's 2496 samples reach two blocks
  /// of 2048 back), one not, incoherent Stokes of 3 stations summed on 2 threads. One block
  /// less of lead-in, or none, gives other samples at block 4.
  void leadInRebuildsTheState() {
    const int samples = 2048;
    ObservationSettings settings = makeSettings(3, samples, 50e6);
    BeamFormedSettings& bf = settings.beamFormed;
    bf.coherentEnabled = bf.incoherentEnabled = true;
    bf.coherent = {StokesKind::kIQUV, 16, 2, 0};
    bf.incoherent = {StokesKind::kI, 4, 1, 0};
    bf.saps.resize(1);
    for (const auto& [dm, coherent] : {std::pair{14.0, true}, {0.0, true}, {0.0, false}}) {
      rtcp::TabSettings tab;
      tab.direction = settings.beams[0];
      tab.dispersionMeasure = dm;
      tab.coherent = coherent;
      bf.saps[0].tabs.push_back(tab);
    }
    const BeamFormerParameters parameters = BeamFormerParameters::from(bf);
    CPPUNIT_ASSERT_EQUAL(1248, dedispersionLatency(settings));
    const int64_t leadIn = beamFormerLeadInBlocks(settings);
    CPPUNIT_ASSERT_EQUAL(int64_t(3), leadIn);  // the filter bank's 240 samples, the 2496
    std::mt19937 random(29);
    std::vector<Stream> streams;
    for (int s = 0; s < 3; ++s) streams.push_back(gaussian(size_t(samples) * 6, 900, random));
    const auto live = runBlocks(settings, parameters, streams, {0, 1, 2, 3, 4, 5});
    auto replayFrom = [&](int first) {
      std::vector<int> numbers;
      for (int b = first; b < 6; ++b) numbers.push_back(b);
      auto blocks = runBlocks(settings, parameters, streams, numbers);
      blocks.erase(blocks.begin(), blocks.end() - 2);
      return blocks;
    };
    auto same = [&](const std::vector<std::vector<BeamFormedData>>& replay) {
      for (size_t k = 0; k < 2; ++k)
        for (size_t t = 0; t < 3; ++t) {
          const BeamFormedData &a = live[4 + k][t], &b = replay[k][t];
          if (a.block != b.block || a.samples.size() != b.samples.size() ||
              !std::equal(a.samples.begin(), a.samples.end(), b.samples.begin()) ||
              !std::equal(a.validFraction.begin(), a.validFraction.end(), b.validFraction.begin()))
            return false;
        }
      return true;
    };
    CPPUNIT_ASSERT(same(replayFrom(4 - int(leadIn))));
    CPPUNIT_ASSERT(!same(replayFrom(4 - int(leadIn) + 1)));
    CPPUNIT_ASSERT(!same(replayFrom(4)));
  }

  /// The processor's delays are what storage-sink derives from the settings alone
  /// (rtcp/BeamFormedTiming.h): the observation's dedispersion latency for dedispersed
  /// TABs, the final filter bank's group delay (half its window less one output sample's
  /// channels: half its history) for every TAB.
  void delaysFromSettings() {
    ObservationSettings settings = makeSettings(2, 8192, 50e6);
    BeamFormedSettings& bf = settings.beamFormed;
    bf.coherentEnabled = bf.incoherentEnabled = true;
    bf.coherent = {StokesKind::kI, 16, 2, 0};
    bf.incoherent = {StokesKind::kIQUV, 4, 1, 0};
    bf.saps.resize(1);
    for (double dm : {2.0, 0.0, 5.0}) {
      rtcp::TabSettings tab;
      tab.direction = settings.beams[0];
      tab.dispersionMeasure = dm;
      bf.saps[0].tabs.push_back(tab);
    }
    bf.saps[0].tabs.back().coherent = false;
    for (bool dedisperse : {true, false}) {
      bf.coherentDedispersion = dedisperse;
      const BeamFormerProcessor processor(settings, BeamFormerParameters::from(bf));
      CPPUNIT_ASSERT_EQUAL(dedispersionLatency(settings), processor.dedispersionLatency());
      CPPUNIT_ASSERT_EQUAL(dedisperse ? 288 : 0, processor.dedispersionLatency());
      for (int t = 0; t < 3; ++t)
        CPPUNIT_ASSERT_EQUAL(beamFormedDelay(settings, bf.saps[0].tabs[size_t(t)]),
                             int64_t(processor.delayOf(0, t)));
      CPPUNIT_ASSERT_EQUAL(dedisperse ? 288 + 120 : 120, processor.delayOf(0, 0));
      CPPUNIT_ASSERT_EQUAL(120, processor.delayOf(0, 1));
      CPPUNIT_ASSERT_EQUAL(30, processor.delayOf(0, 2));
    }
    const PolyphaseFilterBank bank(16, 64);
    CPPUNIT_ASSERT_EQUAL(bank.nrHistorySamples() / 2, finalFilterBankDelay(16));
    CPPUNIT_ASSERT_EQUAL(0, finalFilterBankDelay(1));
  }

  /// COBALT's conventions: I = XX* + YY*, Q = XX* - YY*, U = 2 Re(XY*), V = 2 Im(XY*);
  /// XXYY's components give the same Stokes.
  void polarisation() {
    const int samples = 4096, blocks = 2;
    ObservationSettings settings = makeSettings(1, samples, 150e6);
    struct Case {
      std::complex<double> y;  ///< Y = y X
      int component;           ///< the Stokes parameter that equals I
      double sign;
    };
    const std::complex<double> i(0, 1);
    for (Case test :
         {Case{-i, 3, 1}, Case{i, 3, -1}, Case{0, 1, 1}, Case{1, 2, 1}, Case{-1.0, 2, -1}}) {
      std::mt19937 random(5);
      Stream stream = gaussian(size_t(samples) * blocks, 900, random);
      const Stream noise = gaussian(size_t(samples) * blocks, 9, random);
      for (size_t t = 0; t < stream.size(); t += 2) stream[t + 1] = test.y * stream[t];
      for (size_t t = 0; t < stream.size(); ++t) stream[t] += noise[t];
      BeamFormerParameters parameters;
      parameters.coherent = {StokesKind::kIQUV, 4, 16};
      parameters.tabs = {{TabParameters{settings.beams[0], true, 0}}};
      const auto iquv = run(settings, parameters, {stream}, blocks);
      const double stokesI = mean(iquv, 0);
      for (int p = 1; p < 4; ++p) {
        const double expected = p == test.component ? test.sign : 0;
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("Stokes " + std::to_string(p), expected,
                                             mean(iquv, 0, p) / stokesI, 0.03);
      }
      parameters.coherent = {StokesKind::kXXYY, 4, 1};
      const auto xxyy = run(settings, parameters, {stream}, blocks);
      for (int b = 0; b < blocks; ++b) {
        const BeamFormedData &voltages = xxyy[size_t(b)][0], &stokes = iquv[size_t(b)][0];
        for (int s = 0; s < stokes.nrSamples; ++s)
          for (int c = 0; c < 4; ++c) {
            double sums[4] = {};
            for (int k = 0; k < 16; ++k) {
              const std::complex<double> x(voltages.sample(0, s * 16 + k, c),
                                           voltages.sample(1, s * 16 + k, c));
              const std::complex<double> y(voltages.sample(2, s * 16 + k, c),
                                           voltages.sample(3, s * 16 + k, c));
              sums[0] += std::norm(x) + std::norm(y);
              sums[1] += std::norm(x) - std::norm(y);
              sums[2] += 2 * (x * std::conj(y)).real();
              sums[3] += 2 * (x * std::conj(y)).imag();
            }
            for (int p = 0; p < 4; ++p)
              CPPUNIT_ASSERT_DOUBLES_EQUAL(sums[p], stokes.sample(p, s, c),
                                           1e-4 * std::abs(sums[0]));
          }
      }
    }
  }

  /// Fly's eye: one beam per station, each with that station's own power.
  void flysEye() {
    const int samples = 4096, blocks = 2;
    ObservationSettings settings = makeSettings(3, samples, 150e6);
    const double powers[3] = {400, 800, 1600};
    std::mt19937 random(9);
    std::vector<Stream> streams;
    for (double power : powers)
      streams.push_back(gaussian(size_t(samples) * blocks, power, random));
    BeamFormerParameters parameters;
    parameters.flysEye = true;
    parameters.coherent = {StokesKind::kI, 1, 64};
    parameters.tabs = {{}};
    const auto outputs = run(settings, parameters, streams, blocks);
    CPPUNIT_ASSERT_EQUAL(size_t(3), outputs[0].size());
    for (int s = 0; s < 3; ++s)
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("station " + std::to_string(s), 2 * powers[s] * 64,
                                           mean(outputs, s), 0.03 * 2 * powers[s] * 64);
    // The TABs as BeamFormedSettings lists them: one per antenna field, by station index.
    BeamFormedSettings listed;
    listed.coherentEnabled = listed.flysEye = true;
    listed.coherent.timeIntegrationFactor = 64;
    for (int station : {2, 0}) {
      rtcp::TabSettings tab;
      tab.origin = TabOrigin::kFlysEye;
      tab.station = station;
      tab.direction = settings.beams[0];
      listed.saps.resize(1);
      listed.saps[0].tabs.push_back(tab);
    }
    const auto byStation = run(settings, BeamFormerParameters::from(listed), streams, blocks);
    CPPUNIT_ASSERT_EQUAL(size_t(2), byStation[0].size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(mean(outputs, 2), mean(byStation, 0), 1e-3 * mean(outputs, 2));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(mean(outputs, 0), mean(byStation, 1), 1e-3 * mean(outputs, 0));
  }

  /// BeamFormedSettings (the parset's) map onto the processor's parameters.
  void parametersFromSettings() {
    BeamFormedSettings settings;
    settings.coherentEnabled = settings.incoherentEnabled = true;
    settings.coherent = {StokesKind::kIQUV, 16, 4, 0};
    settings.incoherent = {StokesKind::kI, 1, 8, 0};
    settings.coherentDedispersion = false;
    settings.saps.resize(2);
    rtcp::TabSettings tab;
    tab.direction = Direction{0.1, 0.2, "J2000"};
    tab.dispersionMeasure = 12.5;
    settings.saps[1].tabs.push_back(tab);
    tab.coherent = false;
    settings.saps[1].tabs.push_back(tab);
    BeamFormerParameters parameters = BeamFormerParameters::from(settings);
    CPPUNIT_ASSERT_EQUAL(64, parameters.nrDelayChannels);  // not derived: COBALT's default
    settings.nrDelayCompensationChannels = 128;
    parameters = BeamFormerParameters::from(settings);
    CPPUNIT_ASSERT_EQUAL(128, parameters.nrDelayChannels);
    CPPUNIT_ASSERT(parameters.coherent.kind == StokesKind::kIQUV);
    CPPUNIT_ASSERT_EQUAL(16, parameters.coherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(4, parameters.coherent.timeIntegration);
    CPPUNIT_ASSERT_EQUAL(8, parameters.incoherent.timeIntegration);
    CPPUNIT_ASSERT(!parameters.coherentDedispersion && !parameters.flysEye);
    CPPUNIT_ASSERT_EQUAL(size_t(2), parameters.tabs.size());
    CPPUNIT_ASSERT(parameters.tabs[0].empty());
    CPPUNIT_ASSERT_EQUAL(size_t(2), parameters.tabs[1].size());
    CPPUNIT_ASSERT(parameters.tabs[1][0].coherent && !parameters.tabs[1][1].coherent);
    CPPUNIT_ASSERT_EQUAL(12.5, parameters.tabs[1][0].dispersionMeasure);
    CPPUNIT_ASSERT(parameters.tabs[1][0].direction == tab.direction);
  }

  /// Lost samples: their spectra (64 samples) zeroed, the valid fraction says how many
  /// station samples are behind each output, and the sums divided by it keep their means.
  void lostSamples() {
    const int n = 4, samples = 4096;
    ObservationSettings settings = makeSettings(n, samples, 150e6);
    std::mt19937 random(13);
    std::vector<Stream> streams;
    for (int s = 0; s < n; ++s) streams.push_back(gaussian(size_t(samples), 900, random));
    BeamFormerParameters parameters;
    parameters.coherent = {StokesKind::kI, 1, 64};
    parameters.incoherent = {StokesKind::kI, 1, 64};
    parameters.tabs = {
        {TabParameters{settings.beams[0], true, 0}, TabParameters{settings.beams[0], false, 0}}};
    auto lost = [](int s, int64_t t) {
      return (s == 1 && t >= 1000 && t < 1300) || (s == 2 && t >= 2048 && t < 2200);
    };
    const auto whole = run(settings, parameters, streams, 1);
    const auto partial = run(settings, parameters, streams, 1, lost);
    for (int tab = 0; tab < 2; ++tab) {
      const BeamFormedData& data = partial[0][size_t(tab)];
      double sum = 0, weight = 0, wholeSum = 0;
      for (int i = 0; i < data.nrSamples; ++i) {  // output sample i = spectrum i of 64
        const int lostStations = (i >= 1000 / 64 && i <= 1299 / 64) + (i >= 32 && i <= 2199 / 64);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(double(n - lostStations) / n, data.validFraction[size_t(i)],
                                     1e-6);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, whole[0][size_t(tab)].validFraction[size_t(i)], 1e-6);
        sum += data.sample(0, i, 0);
        weight += data.validFraction[size_t(i)];
        wholeSum += whole[0][size_t(tab)].sample(0, i, 0);
      }
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("tab " + std::to_string(tab), wholeSum / data.nrSamples,
                                           sum / weight, 0.03 * wholeSum / data.nrSamples);
    }
  }

  /// The coherent TABs of a SAP share their valid fractions (the processor computes them once
  /// for the dedispersed TABs and once for the others): each TAB's, with samples lost in two
  /// stations over three blocks, is what the processor gives that TAB alone.
  void sharedValidFractions() {
    const int n = 4, samples = 8192, blocks = 3;
    ObservationSettings settings = makeSettings(n, samples, 50e6);
    std::mt19937 random(17);
    std::vector<Stream> streams;
    for (int s = 0; s < n; ++s) streams.push_back(gaussian(size_t(samples) * blocks, 900, random));
    BeamFormerParameters parameters;
    parameters.coherent = {StokesKind::kI, 16, 4};
    parameters.incoherent = {StokesKind::kI, 16, 4};
    for (double dm : {2.0, 0.0, 2.0, 0.0})
      parameters.tabs.resize(1), parameters.tabs[0].push_back({settings.beams[0], true, dm});
    auto lost = [](int s, int64_t t) {
      return (s == 1 && t >= 7000 && t < 9500) || (s == 2 && t >= 20000 && t < 20100);
    };
    const auto together = run(settings, parameters, streams, blocks, lost);
    std::vector<float> dedispersed, plain;  // block 1 of TABs 0 and 1
    for (int tab = 0; tab < 4; ++tab) {
      BeamFormerParameters alone = parameters;
      alone.tabs[0] = {parameters.tabs[0][size_t(tab)]};
      const auto expected = run(settings, alone, streams, blocks, lost);
      for (int b = 0; b < blocks; ++b) {
        const AlignedBuffer<float>& got = together[size_t(b)][size_t(tab)].validFraction;
        const AlignedBuffer<float>& want = expected[size_t(b)][0].validFraction;
        CPPUNIT_ASSERT_EQUAL(want.size(), got.size());
        for (size_t i = 0; i < want.size(); ++i)
          CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE("TAB " + std::to_string(tab) + " block " +
                                                   std::to_string(b) + " value " +
                                                   std::to_string(i),
                                               want[i], got[i], 1e-7);
        if (b == 1 && tab < 2) (tab == 0 ? dedispersed : plain).assign(want.begin(), want.end());
      }
    }
    // Samples were lost in block 1, and the dedispersed TABs see it later than the others.
    CPPUNIT_ASSERT(*std::min_element(plain.begin(), plain.end()) < 1);
    CPPUNIT_ASSERT(*std::min_element(dedispersed.begin(), dedispersed.end()) < 1);
    CPPUNIT_ASSERT(dedispersed != plain);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormerPhysicsTest);

}  // namespace rtcp::correlator::beamformed
