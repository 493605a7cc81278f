// The whole chain of one subband: against the chained reference twins, delay physics,
// lost packets, superstations.
#include <cppunit/extensions/HelperMacros.h>
#include <fftw3.h>

#include <cmath>
#include <mutex>
#include <numbers>
#include <random>

#include "ChainTestData.h"
#include "Reference.h"
#include "SubbandProcessor.h"
#include "rtcp/Baselines.h"
#include "rtcp/FftwPlanner.h"

namespace rtcp::correlator {

namespace {

using test::makeBlock;
using test::makeSettings;

std::vector<const StationBlock*> pointers(const std::vector<StationBlock>& blocks) {
  std::vector<const StationBlock*> result;
  for (const StationBlock& block : blocks) result.push_back(&block);
  return result;
}

/// The chain built from the reference twins (superstation merging written out here).
CorrelatedData referenceChain(const ObservationSettings& settings,
                              const std::vector<StationBlock>& blocks,
                              const std::vector<int>& members) {
  const int C = settings.channelsPerSubband, S = settings.spectraPerBlock;
  const int padded = CorrelatorKernel::paddedLength(S);
  const int nrStations = int(blocks.size());
  std::vector<AlignedBuffer<float>> data;
  std::vector<SpectrumMask> masks;
  for (const StationBlock& block : blocks) {
    const int n = block.header.nrSamples;
    std::vector<std::complex<float>> samples(2 * size_t(n)), spectra(2 * size_t(S) * C);
    reference::convertInput(block, 0, samples.data());
    std::vector<bool> valid(static_cast<size_t>(n));
    for (int t = 0; t < n; ++t) valid[size_t(t)] = block.isValid(0, t);
    masks.emplace_back(S);
    reference::flagSpectra(valid, C, S, masks.back());
    reference::filterBank(samples.data(), C, S, spectra.data());
    data.emplace_back(size_t(C) * 4 * padded);
    reference::correctDelayAndBandpass(
        spectra.data(), masks.back(), C, S, padded, settings.subbandWidth(),
        settings.subbands[0].frequency, settings.delayCompensation, settings.correctBandPass,
        block.delays[0].residualStart, block.delays[0].residualEnd, data.back().data());
  }
  std::vector<int> outputs;
  for (int s = 0; s < nrStations; ++s)
    if (members.empty() || s == members[0] ||
        std::find(members.begin(), members.end(), s) == members.end())
      outputs.push_back(s);
  for (size_t m = 1; m < members.size(); ++m) {
    for (size_t i = 0; i < data[0].size(); ++i)
      data[size_t(members[0])][i] += data[size_t(members[m])][i];
    masks[size_t(members[0])].intersect(masks[size_t(members[m])]);
  }
  if (!members.empty())
    for (int s = 0; s < S; ++s)
      if (!masks[size_t(members[0])].valid(s))
        for (int row = 0; row < 4 * C; ++row)
          data[size_t(members[0])][size_t(row) * padded + s] = 0;
  std::vector<const float*> inputs;
  for (int s : outputs) inputs.push_back(data[size_t(s)].data());
  CorrelatedData result(int(outputs.size()), C);
  reference::correlate(inputs, C, S, padded, result.visibilities.data());
  for (size_t b = 0; b < outputs.size(); ++b)
    for (size_t a = 0; a <= b; ++a)
      for (int c = 0; c < C; ++c) {
        const int baseline = baselineIndex(int(a), int(b));
        const bool edge = C > 1 && c == 0;
        result.valid(baseline, c) =
            edge ? 0 : uint32_t(masks[size_t(outputs[a])].countBoth(masks[size_t(outputs[b])]));
        if (edge)
          for (int pol = 0; pol < 4; ++pol) result.visibility(baseline, c, pol) = 0;
      }
  return result;
}

/// Spectra of a block of S spectra spoiled by losing input samples [first, first + count).
int spoiledSpectra(int channels, int spectra, int first, int count) {
  const int window = channels > 1 ? kFilterTaps : 1;  // in groups of C samples
  const int g0 = first / channels, g1 = (first + count - 1) / channels;
  const int lowest = std::max(0, g0 - (window - 1)), highest = std::min(spectra - 1, g1);
  return std::max(0, highest - lowest + 1);
}

/// Phase of a visibility, wrapped to (-pi, pi].
double wrap(double phase) { return std::remainder(phase, 2 * std::numbers::pi); }

/// A periodic band-limited complex signal of `length` samples (two polarisations) that can
/// be read at any fractional delay: e(t + shift) by an exact shift in the frequency domain.
class PeriodicSignal {
 public:
  PeriodicSignal(int length, std::mt19937& random)
      : length_(length), spectrum_(2 * size_t(length)) {
    std::normal_distribution<double> gauss;
    for (auto& value : spectrum_) value = {gauss(random), gauss(random)};
    for (int pol = 0; pol < 2; ++pol) spectrum_[size_t(pol) * length + length / 2] = 0;  // Nyquist
  }
  /// samples[time][pol] = e(time + shift), time in [0, length), rms about `scale`.
  std::vector<std::complex<double>> shifted(double shift, double scale) const {
    AlignedBuffer<std::complex<float>> buffer(static_cast<size_t>(length_));
    std::vector<std::complex<double>> samples(2 * size_t(length_));
    for (int pol = 0; pol < 2; ++pol) {
      for (int k = 0; k < length_; ++k) {
        const int frequency = k < length_ / 2 ? k : k - length_;  // signed
        buffer[size_t(k)] =
            std::complex<float>(spectrum_[size_t(pol) * length_ + k] *
                                std::polar(scale / std::sqrt(double(length_)),
                                           2 * std::numbers::pi * frequency * shift / length_));
      }
      auto* data = reinterpret_cast<fftwf_complex*>(buffer.data());
      fftwf_plan plan;
      {
        std::lock_guard lock(fftwPlannerMutex());
        plan = fftwf_plan_dft_1d(length_, data, data, FFTW_BACKWARD, FFTW_ESTIMATE);
      }
      fftwf_execute(plan);
      std::lock_guard lock(fftwPlannerMutex());
      fftwf_destroy_plan(plan);
      for (int t = 0; t < length_; ++t)
        samples[2 * size_t(t) + pol] = std::complex<double>(buffer[size_t(t)]);
    }
    return samples;
  }

 private:
  int length_;
  std::vector<std::complex<double>> spectrum_;  // [pol][frequency]
};

}  // namespace

class SubbandProcessorTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SubbandProcessorTest);
  CPPUNIT_TEST(matchesReferenceChain);
  CPPUNIT_TEST(matchesReferenceChainWithSuperstation);
  CPPUNIT_TEST(delayCompensationGivesZeroPhase);
  CPPUNIT_TEST(uncompensatedPhaseSlope);
  CPPUNIT_TEST(lostPacketCounts);
  CPPUNIT_TEST(superstationScales);
  CPPUNIT_TEST(superstationOrder);
  CPPUNIT_TEST(rejectsBadBlocks);
  CPPUNIT_TEST(timesEveryStep);
  CPPUNIT_TEST(chunkSizesGiveIdenticalVisibilities);
  CPPUNIT_TEST_SUITE_END();

 public:
  void compareWithReference(ObservationSettings settings, const std::vector<int>& members) {
    std::mt19937 random(21);
    for (int member : members)
      settings.tiedArrayStationNames.push_back(settings.stations[size_t(member)].name);
    std::vector<StationBlock> blocks;
    for (int s = 0; s < settings.nrStations(); ++s) {
      blocks.push_back(makeBlock(settings, s));
      test::randomiseSamples(blocks.back(), random);
      for (int loss = 0; loss < 2; ++loss) {
        const int start = int(random() % unsigned(blocks.back().header.nrSamples - 16));
        for (int t = start; t < start + 16; ++t) blocks.back().setValid(0, t, false);
      }
      blocks.back().delays[0].residualStart = (s - 1.3) * 1e-6;
      blocks.back().delays[0].residualEnd = (s - 1.1) * 1e-6;
    }
    SubbandProcessor processor(settings, 2);
    CorrelatedData output = processor.makeOutput();
    processor.process(pointers(blocks), 0, 0, output);
    const CorrelatedData expected = referenceChain(settings, blocks, members);
    CPPUNIT_ASSERT_EQUAL(expected.nrStations, output.nrStations);
    double scale = 0;
    for (const auto& v : expected.visibilities) scale = std::max(scale, double(std::abs(v)));
    for (size_t i = 0; i < expected.visibilities.size(); ++i)
      CPPUNIT_ASSERT(std::abs(output.visibilities[i] - expected.visibilities[i]) < 1e-5 * scale);
    for (size_t i = 0; i < expected.validSamples.size(); ++i)
      CPPUNIT_ASSERT_EQUAL(expected.validSamples[i], output.validSamples[i]);
    CPPUNIT_ASSERT_EQUAL(0, output.subband);  // the index of subband 150
  }

  /// Steps 1-4 are timed once per station, 5-7 once per subband, in execution order; RFI
  /// flagging per station and subband when it runs.
  void timesEveryStep() {
    const ObservationSettings settings = makeSettings(3, 16, 40, 8);
    std::vector<StationBlock> blocks;
    for (int s = 0; s < settings.nrStations(); ++s) blocks.push_back(makeBlock(settings, s));
    SubbandProcessor processor(settings, 2);
    CorrelatedData output = processor.makeOutput();
    for (int repeat = 0; repeat < 2; ++repeat) processor.process(pointers(blocks), 0, 0, output);
    const StepTimes& times = processor.stepTimes();
    CPPUNIT_ASSERT_EQUAL(size_t(8), times.size());
    CPPUNIT_ASSERT_EQUAL(std::string("rfi flags"), times.name(SubbandProcessor::kRfiFlags));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), times.calls(SubbandProcessor::kRfiFlags));  // off
    CPPUNIT_ASSERT_EQUAL(std::string("input conversion"),
                         times.name(SubbandProcessor::kInputConversion));
    CPPUNIT_ASSERT_EQUAL(std::string("beamformer"), times.name(SubbandProcessor::kBeamformer));
    for (size_t step = SubbandProcessor::kInputConversion;
         step <= SubbandProcessor::kDelayAndBandpass; ++step)
      CPPUNIT_ASSERT_EQUAL(uint64_t(2 * 3), times.calls(step));
    for (size_t step = SubbandProcessor::kBeamformer; step <= SubbandProcessor::kValidSamples;
         ++step)
      CPPUNIT_ASSERT_EQUAL(uint64_t(2), times.calls(step));
    CPPUNIT_ASSERT(times.seconds(SubbandProcessor::kFilterBank) > 0);
    CPPUNIT_ASSERT(times.seconds(SubbandProcessor::kCorrelator) > 0);
    // With online flagging: once per station, and once per subband for the zeroing.
    ObservationSettings flagging = settings;
    flagging.flagging.online = flagging.flagging.preCorrelation = true;
    SubbandProcessor flagger(flagging, 2);
    for (int repeat = 0; repeat < 2; ++repeat) flagger.process(pointers(blocks), 0, 0, output);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2 * (3 + 1)),
                         flagger.stepTimes().calls(SubbandProcessor::kRfiFlags));
  }

  /// Steps 1-4 in chunks of any multiple of 16 spectra give the visibilities of the whole
  /// block at once (the plain twin, spectraPerChunk 0) bit for bit: with lost samples,
  /// residual delays, per-polarisation corrections and a block length no chunk divides.
  void chunkSizesGiveIdenticalVisibilities() {
    std::mt19937 random(23);
    ObservationSettings settings = makeSettings(3, 16, 100);
    settings.delayCompensation = true;
    for (StationSettings& station : settings.stations) {
      station.delay = {1e-9 * double(random() % 5), -2e-9};
      station.phase0 = {0.3, -0.2};
    }
    std::vector<StationBlock> blocks;
    for (int s = 0; s < settings.nrStations(); ++s) {
      blocks.push_back(makeBlock(settings, s));
      test::randomiseSamples(blocks.back(), random);
      const int start = int(random() % unsigned(blocks.back().header.nrSamples - 40));
      for (int t = start; t < start + 40; ++t) blocks.back().setValid(0, t, false);
      blocks.back().delays[0].residualStart = (s - 1.3) * 1e-6;
      blocks.back().delays[0].residualEnd = (s - 1.1) * 1e-6;
    }
    auto run = [&](int spectraPerChunk) {
      SubbandProcessor processor(settings, 1, CorrelatorKernel::Isa::kAuto, spectraPerChunk);
      CorrelatedData output = processor.makeOutput();
      processor.process(pointers(blocks), 0, 0, output);
      return output;
    };
    const CorrelatedData whole = run(0);
    double scale = 0;
    for (const auto& v : whole.visibilities) scale = std::max(scale, double(std::abs(v)));
    CPPUNIT_ASSERT(scale > 0);
    for (int chunk : {16, 32, 48, 128}) {
      const CorrelatedData chunked = run(chunk);
      CPPUNIT_ASSERT_MESSAGE(std::to_string(chunk),
                             std::equal(chunked.visibilities.begin(), chunked.visibilities.end(),
                                        whole.visibilities.begin(), whole.visibilities.end()));
      CPPUNIT_ASSERT(std::equal(chunked.validSamples.begin(), chunked.validSamples.end(),
                                whole.validSamples.begin(), whole.validSamples.end()));
    }
    CPPUNIT_ASSERT_THROW(run(20), std::invalid_argument);
  }

  void matchesReferenceChain() {
    compareWithReference(makeSettings(3, 16, 40, 8), {});
    compareWithReference(makeSettings(2, 1, 200, 4), {});
  }

  void matchesReferenceChainWithSuperstation() {
    compareWithReference(makeSettings(5, 16, 40, 16), {3, 1, 4});
  }

  /// Two stations see the same sky signal; station 1 receives it tau earlier (DESIGN
  /// §2.3: x(t) = e(t + tau) exp(2 pi i f_subband tau)). Returns the cross visibilities.
  std::vector<std::complex<float>> delayedPair(double tau, bool compensate) {
    ObservationSettings settings = makeSettings(2, 64, 64, 16);
    settings.delayCompensation = compensate;
    const double fs = settings.subbandWidth();
    const int coarse = compensate ? int(std::lround(tau * fs)) : 0;
    std::mt19937 random(31);
    const int length = 8192;
    PeriodicSignal sky(length, random);
    std::vector<StationBlock> blocks;
    blocks.push_back(makeBlock(settings, 0));
    blocks.push_back(makeBlock(settings, 1));
    // Station 0 at the reference position; station 1's recording, read `coarse` samples
    // early: block sample t is station sample t - coarse (a periodic signal: t + length).
    test::encodeSamples(sky.shifted(0, 1000), blocks[0]);
    const auto recorded = sky.shifted(tau * fs, 1000);
    const std::complex<double> lo =
        std::polar(1.0, 2 * std::numbers::pi * settings.subbands[0].frequency * tau);
    std::vector<std::complex<double>> station1(recorded.size());
    for (int t = 0; t < length; ++t)
      for (int pol = 0; pol < 2; ++pol)
        station1[2 * size_t(t) + pol] =
            recorded[2 * size_t((t - coarse + length) % length) + pol] * lo;
    test::encodeSamples(station1, blocks[1]);
    blocks[1].delays[0].coarse = coarse;
    blocks[1].delays[0].residualStart = blocks[1].delays[0].residualEnd = tau - coarse / fs;
    SubbandProcessor processor(settings, 1);
    CorrelatedData output = processor.makeOutput();
    processor.process(pointers(blocks), 0, 0, output);
    std::vector<std::complex<float>> cross;
    for (int c = 0; c < 64; ++c) cross.push_back(output.visibility(baselineIndex(0, 1), c, 0));
    return cross;
  }

  void delayCompensationGivesZeroPhase() {
    const double fs = 195312.5;
    for (double samples : {3.3, -5.7, 0.49}) {
      const auto cross = delayedPair(samples / fs, true);
      for (int c = 1; c < 64; ++c)
        CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, std::arg(cross[size_t(c)]), 0.005);
    }
  }

  void uncompensatedPhaseSlope() {
    const double fs = 195312.5, tau = 3.3 / fs, channelWidth = fs / 64;
    const auto cross = delayedPair(tau, false);
    // x0 conj(x1) at sky frequency f: phase -2 pi f tau; slope -2 pi tau df per channel.
    // Within a channel the phase still spans 2 pi tau df (0.32 rad), which the random sky
    // weights unevenly: per channel about 0.32 / sqrt(12 x 64 spectra) = 0.012 rad of
    // scatter (4 sigma below); the mean slope over 62 steps is far tighter.
    const double expectedSlope = -2 * std::numbers::pi * tau * channelWidth;
    double sumSlope = 0;
    for (int c = 2; c < 64; ++c) {
      const double slope = wrap(std::arg(cross[size_t(c)]) - std::arg(cross[size_t(c - 1)]));
      CPPUNIT_ASSERT_DOUBLES_EQUAL(expectedSlope, slope, 0.05);
      sumSlope += slope;
      const double f = 150 * fs + (c - 32) * channelWidth;
      CPPUNIT_ASSERT_DOUBLES_EQUAL(
          0.0, wrap(std::arg(cross[size_t(c)]) + 2 * std::numbers::pi * f * tau), 0.05);
    }
    CPPUNIT_ASSERT_DOUBLES_EQUAL(expectedSlope, sumSlope / 62, 0.002);
  }

  void lostPacketCounts() {
    for (int channels : {16, 64})
      for (int first : {0, 15 * channels - 8, 15 * channels + 3 * channels,
                        15 * channels + 3 * channels + 8, 15 * channels + 20 * channels - 16}) {
        const int spectra = 20;
        ObservationSettings settings = makeSettings(3, channels, spectra, 16);
        std::vector<StationBlock> blocks;
        std::mt19937 random(41);
        for (int s = 0; s < 3; ++s) {
          blocks.push_back(makeBlock(settings, s));
          test::randomiseSamples(blocks.back(), random);
        }
        for (int t = first; t < first + 16; ++t) blocks[1].setValid(0, t, false);  // one packet
        SubbandProcessor processor(settings, 2);
        CorrelatedData output = processor.makeOutput();
        processor.process(pointers(blocks), 0, 0, output);
        const int spoiled = spoiledSpectra(channels, spectra, first, 16);
        // 16 aligned samples inside one group of C spoil 16 spectra; across two groups 17.
        if (first == 15 * channels + 3 * channels) CPPUNIT_ASSERT_EQUAL(16, spoiled);
        if (channels == 16 && first == 15 * channels + 3 * channels + 8)
          CPPUNIT_ASSERT_EQUAL(17, spoiled);
        if (first == 0) CPPUNIT_ASSERT_EQUAL(1, spoiled);
        for (int s2 = 0; s2 < 3; ++s2)
          for (int s1 = 0; s1 <= s2; ++s1) {
            const uint32_t expected = uint32_t(spectra - (s1 == 1 || s2 == 1 ? spoiled : 0));
            CPPUNIT_ASSERT_EQUAL(0u, output.valid(baselineIndex(s1, s2), 0));
            for (int c = 1; c < channels; ++c)
              CPPUNIT_ASSERT_EQUAL(expected, output.valid(baselineIndex(s1, s2), c));
          }
      }
  }

  void superstationScales() {
    // Stations 0..2 merged (N = 3), station 3 the same signal: auto x N^2, cross x N.
    ObservationSettings settings = makeSettings(4, 16, 32, 16);
    settings.tiedArrayStationNames = {"S0", "S1", "S2"};
    std::mt19937 random(51);
    StationBlock first = makeBlock(settings, 0);
    test::randomiseSamples(first, random);
    std::vector<StationBlock> blocks;
    for (int s = 0; s < 4; ++s) {
      blocks.push_back(makeBlock(settings, s));
      std::memcpy(blocks.back().samples.data(), first.samples.data(), first.samples.size());
    }
    SubbandProcessor processor(settings, 2);
    CPPUNIT_ASSERT_EQUAL(2, processor.nrOutputStations());
    CorrelatedData output = processor.makeOutput();
    processor.process(pointers(blocks), 0, 0, output);
    for (int c = 1; c < 16; ++c)
      for (int pol = 0; pol < 4; ++pol) {
        const std::complex<float> single = output.visibility(baselineIndex(1, 1), c, pol);
        const std::complex<float> merged = output.visibility(baselineIndex(0, 0), c, pol);
        const std::complex<float> cross = output.visibility(baselineIndex(0, 1), c, pol);
        CPPUNIT_ASSERT(std::abs(merged - 9.0f * single) < 1e-5f * std::abs(merged));
        CPPUNIT_ASSERT(std::abs(cross - 3.0f * single) < 1e-5f * std::abs(cross));
      }
    // A packet lost at one member flags the superstation's spectra.
    for (int t = 400; t < 416; ++t) blocks[2].setValid(0, t, false);
    processor.process(pointers(blocks), 0, 0, output);
    const uint32_t expected = uint32_t(32 - spoiledSpectra(16, 32, 400, 16));
    CPPUNIT_ASSERT_EQUAL(expected, output.valid(baselineIndex(0, 0), 5));
    CPPUNIT_ASSERT_EQUAL(expected, output.valid(baselineIndex(0, 1), 5));
    CPPUNIT_ASSERT_EQUAL(32u, output.valid(baselineIndex(1, 1), 5));
  }

  void superstationOrder() {
    ObservationSettings settings = makeSettings(4, 16, 8, 16);
    settings.tiedArrayStationNames = {"S2", "S0"};
    SubbandProcessor processor(settings, 1);
    CPPUNIT_ASSERT((std::vector<std::string>{"S1", "S2", "S3"}) == processor.outputStationNames());
    settings.tiedArrayStationNames = {"S2", "S9"};
    CPPUNIT_ASSERT_THROW(SubbandProcessor(settings, 1), std::invalid_argument);
  }

  void rejectsBadBlocks() {
    ObservationSettings settings = makeSettings(2, 16, 8, 16);
    SubbandProcessor processor(settings, 1);
    std::vector<StationBlock> blocks;
    blocks.push_back(makeBlock(settings, 0));
    blocks.push_back(makeBlock(settings, 1));
    CorrelatedData output = processor.makeOutput();
    blocks[1].header.block = 7;
    CPPUNIT_ASSERT_THROW(processor.process(pointers(blocks), 0, 0, output), std::invalid_argument);
    blocks[1] = StationBlock(1, 100, 16);
    CPPUNIT_ASSERT_THROW(processor.process(pointers(blocks), 0, 0, output), std::invalid_argument);
    blocks[1] = makeBlock(settings, 1);
    CPPUNIT_ASSERT_THROW(processor.process(pointers(blocks), 1, 0, output), std::invalid_argument);
    processor.process(pointers(blocks), 0, 0, output);
    // Ionproc fell behind: a block served flagged counts nothing.
    blocks[1].header.flaggedByIonproc = 1;
    processor.process(pointers(blocks), 0, 0, output);
    CPPUNIT_ASSERT_EQUAL(0u, output.valid(baselineIndex(0, 1), 3));
    CPPUNIT_ASSERT_EQUAL(8u, output.valid(baselineIndex(0, 0), 3));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SubbandProcessorTest);

}  // namespace rtcp::correlator
