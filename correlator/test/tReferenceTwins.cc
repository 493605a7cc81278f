// Each optimised step of the signal chain against its plain reference twin, on random data.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <numbers>
#include <random>
#include <utility>

#include "Beamformer.h"
#include "CellPowers.h"
#include "ChainTestData.h"
#include "CorrelatorKernel.h"
#include "DelayAndBandpassCorrection.h"
#include "DelayTiles.h"
#include "InputConverter.h"
#include "PolarisationCorrection.h"
#include "PolyphaseFilterBank.h"
#include "Reference.h"
#include "SpectrumFlagger.h"
#include "ValidSampleCounter.h"
#include "rtcp/Baselines.h"

namespace rtcp::correlator {

namespace {

/// Largest |a - b| relative to the largest |b|.
template <typename T>
double relativeError(const T* a, const T* b, size_t n) {
  double error = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    error = std::max(error, double(std::abs(a[i] - b[i])));
    scale = std::max(scale, double(std::abs(b[i])));
  }
  return scale > 0 ? error / scale : error;
}

std::vector<CorrelatorKernel::Isa> supportedIsas() {
  std::vector<CorrelatorKernel::Isa> isas = {CorrelatorKernel::Isa::kGeneric};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    isas.push_back(CorrelatorKernel::Isa::kAvx2);
  if (__builtin_cpu_supports("avx512f")) isas.push_back(CorrelatorKernel::Isa::kAvx512);
  return isas;
}

}  // namespace

class ReferenceTwinsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ReferenceTwinsTest);
  CPPUNIT_TEST(inputConverter);
  CPPUNIT_TEST(inputConverterRejectsOtherBitMode);
  CPPUNIT_TEST(spectrumFlagger);
  CPPUNIT_TEST(filterBank);
  CPPUNIT_TEST(delayAndBandpass);
  CPPUNIT_TEST(inputConverterRange);
  CPPUNIT_TEST(spectrumMaskBits16);
  CPPUNIT_TEST(delayAndBandpassInChunks);
  CPPUNIT_TEST(delayTilesCellPowers);
  CPPUNIT_TEST(polarisationCorrectionInChunks);
  CPPUNIT_TEST(polarisationCorrection);
  CPPUNIT_TEST(beamformer);
  CPPUNIT_TEST(validSampleCounter);
  CPPUNIT_TEST(correlatorKernel);
  CPPUNIT_TEST_SUITE_END();

 public:
  void inputConverter() {
    std::mt19937 random(1);
    for (int bits : {16, 8, 4}) {
      const ObservationSettings settings = test::makeSettings(1, 16, 7, bits);
      StationBlock block = test::makeBlock(settings, 0);
      test::randomiseSamples(block, random);
      int expectedFlagged = 0;
      for (int t = 0; t < block.header.nrSamples; ++t)
        if (random() % 7 == 0) {
          block.setValid(0, t, false);
          ++expectedFlagged;
        }
      const size_t n = 2 * size_t(block.header.nrSamples);
      std::vector<std::complex<float>> fast(n, {99, 99}), slow(n);
      const int flagged = InputConverter(bits).convert(block, 0, fast.data());
      reference::convertInput(block, 0, slow.data());
      CPPUNIT_ASSERT_EQUAL(expectedFlagged, flagged);
      for (size_t i = 0; i < n; ++i) CPPUNIT_ASSERT(fast[i] == slow[i]);
      // The most negative value of the bit mode (sample 0 of the valid ones) decodes right.
      int t = 0;
      while (!block.isValid(0, t)) ++t;
      uint8_t* extreme = block.sample(0, t);
      for (int i = 0; i < bytesPerDualPolSample(bits); ++i)
        extreme[i] = bits == 16 ? (i % 2 ? 0x80 : 0) : bits == 8 ? 0x80 : 0x88;
      InputConverter(bits).convert(block, 0, fast.data());
      const float lowest = -float(maxSampleValue(bits) + 1);
      CPPUNIT_ASSERT(fast[2 * size_t(t)] == std::complex<float>(lowest, lowest));
      CPPUNIT_ASSERT(fast[2 * size_t(t) + 1] == std::complex<float>(lowest, lowest));
    }
  }

  void inputConverterRejectsOtherBitMode() {
    const ObservationSettings settings = test::makeSettings(1, 16, 4, 8);
    StationBlock block = test::makeBlock(settings, 0);
    std::vector<std::complex<float>> out(2 * size_t(block.header.nrSamples));
    CPPUNIT_ASSERT_THROW(InputConverter(16).convert(block, 0, out.data()), std::invalid_argument);
    CPPUNIT_ASSERT_THROW(InputConverter(12), std::invalid_argument);
  }

  void spectrumFlagger() {
    std::mt19937 random(2);
    for (int channels : {1, 16, 64, 256}) {
      const int spectra = 40;
      SpectrumFlagger flagger(channels, spectra);
      const int n = flagger.nrInputSamples();
      std::vector<bool> valid(size_t(n), true);
      std::vector<uint64_t> bits((size_t(n) + 63) / 64, ~uint64_t(0));
      for (int loss = 0; loss < 3; ++loss) {  // a few lost packets of 16 samples
        const int start = int(random() % unsigned(n - 16));
        for (int t = start; t < start + 16; ++t) {
          valid[size_t(t)] = false;
          bits[size_t(t) / 64] &= ~(uint64_t(1) << (t % 64));
        }
      }
      SpectrumMask fast(spectra), slow(spectra);
      flagger.flag(bits.data(), fast);
      reference::flagSpectra(valid, channels, spectra, slow);
      for (int s = 0; s < spectra; ++s) CPPUNIT_ASSERT_EQUAL(slow.valid(s), fast.valid(s));
      CPPUNIT_ASSERT(fast.count() < spectra);
    }
  }

  /// The filter bank, every FIR form the CPU runs, against the reference (2e-6) and the plain
  /// form (1e-6) on random noise. (The AVX2 and AVX-512 forms give the very same bits where
  /// GCC fuses the AVX-512 form's multiply-adds, as it does when it optimises; the
  /// unoptimised sanitizer build does not, so that is not asserted.)
  void filterBank() {
    std::mt19937 random(3);
    for (int channels : {1, 2, 4, 16, 64, 256}) {
      const int spectra = channels == 256 ? 4 : 27;
      const size_t n = size_t(PolyphaseFilterBank(channels, spectra).nrHistorySamples()) +
                       size_t(spectra) * channels;
      const auto input = test::noise(n, 1.0, random);
      AlignedBuffer<std::complex<float>> in(2 * n);
      for (size_t i = 0; i < 2 * n; ++i) in[i] = std::complex<float>(input[i]);
      std::vector<std::complex<float>> slow(2 * size_t(spectra) * channels);
      reference::filterBank(in.data(), channels, spectra, slow.data());
      std::vector<std::complex<float>> plain;
      for (PolyphaseFilterBank::Isa isa : supportedIsas()) {
        PolyphaseFilterBank bank(channels, spectra, isa);
        AlignedBuffer<std::complex<float>> fast(slow.size());
        bank.filter(in.data(), spectra, fast.data());
        const std::string where =
            std::to_string(channels) + " channels, " + CorrelatorKernel::toString(isa);
        const double error = relativeError(fast.data(), slow.data(), fast.size());
        CPPUNIT_ASSERT_MESSAGE(where + ": " + std::to_string(error), error < 2e-6);
        if (plain.empty()) plain.assign(fast.data(), fast.data() + fast.size());  // kGeneric first
        const double fromPlain = relativeError(fast.data(), plain.data(), fast.size());
        CPPUNIT_ASSERT_MESSAGE(where + " against plain: " + std::to_string(fromPlain),
                               fromPlain < 1e-6);
      }
    }
  }

  /// The delay and bandpass correction, every form the CPU runs (AVX-512 or AVX2 tiles,
  /// plain), against the reference and the plain form on random noise: channels in groups
  /// of four and fewer, spectra in whole tiles and a tail, flagged ones in both halves of a
  /// tile and in the tail.
  void delayAndBandpass() {
    std::mt19937 random(4);
    const double fs = 195312.5;
    for (int channels : {1, 2, 6, 16, 64, 256}) {
      for (bool compensate : {false, true}) {
        const int spectra = 37, padded = CorrelatorKernel::paddedLength(spectra);
        const auto input = test::noise(size_t(spectra) * channels, 1.0, random);
        std::vector<std::complex<float>> in(input.begin(), input.end());
        SpectrumMask valid(spectra);
        for (int flagged : {5, 13, 26, 36})  // both halves of a 16-spectrum tile, and the tail
          valid.set(flagged, false);
        const size_t floats = size_t(channels) * 4 * padded;
        std::vector<float> slow(floats, 0), plain;
        const double frequency = 150 * fs, tau0 = 1.3e-6, tau1 = -2.1e-6;
        const bool bandpass = (channels & (channels - 1)) == 0;  // it needs a power of two
        reference::correctDelayAndBandpass(in.data(), valid, channels, spectra, padded, fs,
                                           frequency, compensate, bandpass, tau0, tau1,
                                           slow.data());
        for (DelayAndBandpassCorrection::Isa isa : supportedIsas()) {
          DelayAndBandpassCorrection correction(channels, spectra, padded, fs, compensate, bandpass,
                                                isa);
          std::vector<float> fast(floats, 0);
          correction.apply(in.data(), valid, frequency, tau0, tau1, fast.data());
          if (plain.empty()) plain = fast;  // supportedIsas: kGeneric first
          const std::string where = std::to_string(channels) + " channels, " +
                                    CorrelatorKernel::toString(isa) +
                                    (compensate ? ", delays" : "");
          CPPUNIT_ASSERT_MESSAGE(where, relativeError(fast.data(), slow.data(), floats) < 1e-5);
          CPPUNIT_ASSERT_MESSAGE(where, relativeError(fast.data(), plain.data(), floats) < 1e-5);
          for (size_t c = 0; c < size_t(channels); ++c)  // the flagged spectra, the padding
            for (size_t r = 0; r < 4; ++r)
              for (int s = 0; s < padded; ++s)
                if (s >= spectra || !valid.valid(s))
                  CPPUNIT_ASSERT_EQUAL(0.0f, fast[(c * 4 + r) * size_t(padded) + size_t(s)]);
        }
      }
    }
  }

  /// A range of samples converts to the same values as the whole block, flags included.
  void inputConverterRange() {
    std::mt19937 random(6);
    for (int bits : {16, 8, 4}) {
      const ObservationSettings settings = test::makeSettings(1, 16, 20, bits);
      StationBlock block = test::makeBlock(settings, 0);
      test::randomiseSamples(block, random);
      for (int t = 0; t < block.header.nrSamples; ++t)
        if (random() % 5 == 0) block.setValid(0, t, false);
      const int n = block.header.nrSamples;
      std::vector<std::complex<float>> whole(2 * size_t(n));
      InputConverter converter(bits);
      converter.convert(block, 0, whole.data());
      for (auto [first, count] :
           {std::pair{0, n}, {1, 63}, {63, 2}, {64, 128}, {100, 211}, {n - 70, 70}, {17, 0}}) {
        std::vector<std::complex<float>> part(2 * size_t(count) + 2, {99, 99});
        int expectedFlagged = 0;
        for (int t = first; t < first + count; ++t) expectedFlagged += !block.isValid(0, t);
        CPPUNIT_ASSERT_EQUAL(expectedFlagged,
                             converter.convert(block, 0, first, count, part.data()));
        for (size_t i = 0; i < 2 * size_t(count); ++i)
          CPPUNIT_ASSERT(part[i] == whole[2 * size_t(first) + i]);
        CPPUNIT_ASSERT(part[2 * size_t(count)] == std::complex<float>(99, 99));  // no overrun
      }
      std::vector<std::complex<float>> out(2 * size_t(n));
      CPPUNIT_ASSERT_THROW(converter.convert(block, 0, n - 10, 11, out.data()),
                           std::invalid_argument);
      CPPUNIT_ASSERT_THROW(converter.convert(block, 0, -1, 5, out.data()), std::invalid_argument);
    }
  }

  void spectrumMaskBits16() {
    std::mt19937 random(7);
    SpectrumMask mask(150);
    for (int s = 0; s < 150; ++s) mask.set(s, random() % 3 != 0);
    for (int first = 0; first < 150; ++first) {
      uint32_t expected = 0;
      for (int k = 0; k < 16 && first + k < 150; ++k)
        expected |= uint32_t(mask.valid(first + k)) << k;
      CPPUNIT_ASSERT_EQUAL(expected, mask.bits16(first));
    }
  }

  /// Chunks of a multiple of 16 spectra give the whole block's output bit for bit; other
  /// chunks (one spectrum at a time in the tail) agree to rounding.
  void delayAndBandpassInChunks() {
    std::mt19937 random(8);
    const double fs = 195312.5;
    for (int channels : {2, 16, 64}) {
      const int spectra = 100, padded = CorrelatorKernel::paddedLength(spectra);
      const auto input = test::noise(size_t(spectra) * channels, 1.0, random);
      std::vector<std::complex<float>> in(input.begin(), input.end());
      SpectrumMask valid(spectra);
      for (int s : {3, 17, 18, 64, 99}) valid.set(s, false);
      DelayAndBandpassCorrection correction(channels, spectra, padded, fs, true, true);
      const size_t floats = size_t(channels) * 4 * padded;
      std::vector<float> whole(floats, 0);
      const double frequency = 150 * fs, tau0 = 1.3e-6, tau1 = -2.1e-6;
      correction.apply(in.data(), valid, frequency, tau0, tau1, whole.data());
      for (int chunk : {16, 48, 64, 20, 7}) {
        std::vector<float> chunked(floats, 0);
        DelayAndBandpassCorrection::Phasors phasors;
        correction.start(frequency, tau0, tau1, phasors);
        for (int first = 0; first < spectra; first += chunk) {
          const int count = std::min(chunk, spectra - first);
          correction.apply(in.data() + size_t(first) * 2 * channels, valid, first, count, phasors,
                           chunked.data());
        }
        const std::string what =
            std::to_string(channels) + " channels, chunks of " + std::to_string(chunk);
        if (chunk % 16 == 0)
          CPPUNIT_ASSERT_MESSAGE(what, chunked == whole);
        else
          CPPUNIT_ASSERT_MESSAGE(what, relativeError(chunked.data(), whole.data(), floats) < 1e-6);
      }
      DelayAndBandpassCorrection::Phasors phasors;
      CPPUNIT_ASSERT_THROW(correction.apply(in.data(), valid, 0, 10, phasors, whole.data()),
                           std::invalid_argument);  // not started
      correction.start(frequency, tau0, tau1, phasors);
      CPPUNIT_ASSERT_THROW(correction.apply(in.data(), valid, 90, 11, phasors, whole.data()),
                           std::invalid_argument);
    }
  }

  /// The pre-correlation flagger's cell powers summed by the delay correction while it
  /// writes (CellPowers.h) against channelCellPowers on what it wrote, bit for bit: both
  /// tiles (AVX-512, AVX2) alone, and apply() in chunks over channel counts that leave
  /// channels to the plain path and a block whose last cell is short; a chunk not starting
  /// at a cell is refused.
  void delayTilesCellPowers() {
    std::mt19937 random(10);
    std::normal_distribution<float> gauss(0, 3);
    std::uniform_real_distribution<float> angle(0, 2 * float(std::numbers::pi));
    const size_t stride = 20, rowStride = 48;  // a tile's spectra: 16 x 4 channels x 2 pols
    std::vector<float> in(16 * stride * 4);
    for (float& v : in) v = gauss(random);
    float baseRe[4], baseIm[4], powerRe[64], powerIm[64];
    for (int c = 0; c < 4; ++c) {
      baseRe[c] = std::cos(angle(random)) * 1.1f;
      baseIm[c] = std::sin(angle(random)) * 1.1f;
      for (int k = 0; k < 16; ++k) {
        const float a = angle(random);
        powerRe[16 * c + k] = std::cos(a);
        powerIm[16 * c + k] = std::sin(a);
      }
    }
    using Tile = void (*)(const float*, size_t, const float*, const float*, const float*,
                          const float*, uint32_t, float*, size_t, float*, size_t);
    std::vector<Tile> tiles;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      tiles.push_back(tiles::rotateTileAvx2);
    if (__builtin_cpu_supports("avx512f")) tiles.push_back(tiles::rotateTileAvx512);
    for (Tile tile : tiles)
      for (uint32_t valid : {0xffffu, 0xa5f0u, 0u}) {
        std::vector<float> out(16 * rowStride, 0);
        float powers[4 * 3], expected = 0;
        tile(in.data(), stride, baseRe, baseIm, powerRe, powerIm, valid, out.data(), rowStride,
             powers, 3);
        for (int c = 0; c < 4; ++c) {
          channelCellPowers(out.data() + size_t(c) * 4 * rowStride, rowStride, 16, 16, &expected);
          CPPUNIT_ASSERT_EQUAL(expected, powers[3 * c]);
          CPPUNIT_ASSERT(valid == 0 ? expected == 0 : expected > 0);
        }
      }

    const double fs = 195312.5, frequency = 150 * fs, tau0 = 1.3e-6, tau1 = -2.1e-6;
    for (int channels : {1, 6, 16, 64})
      for (int spectra : {100, 768}) {
        const int padded = CorrelatorKernel::paddedLength(spectra), cells = (spectra + 15) / 16;
        const auto input = test::noise(size_t(spectra) * size_t(channels), 1.0, random);
        const std::vector<std::complex<float>> spectraIn(input.begin(), input.end());
        SpectrumMask valid(spectra);
        for (int s : {3, 17, 18, 64, 99}) valid.set(s, false);
        const bool powerOfTwo = (channels & (channels - 1)) == 0;  // the bandpass needs it
        DelayAndBandpassCorrection correction(channels, spectra, padded, fs, true, powerOfTwo);
        for (int chunk : {16, 48, 256, 0}) {
          const int step = chunk ? chunk : spectra;
          std::vector<float> out(size_t(channels) * 4 * size_t(padded), 0);
          std::vector<float> powers(size_t(channels) * size_t(cells), -1), expected(powers.size());
          DelayAndBandpassCorrection::Phasors phasors;
          correction.start(frequency, tau0, tau1, phasors);
          for (int first = 0; first < spectra; first += step)
            correction.apply(spectraIn.data() + size_t(first) * 2 * size_t(channels), valid, first,
                             std::min(step, spectra - first), phasors, out.data(),
                             {powers.data(), size_t(cells)});
          for (int c = 0; c < channels; ++c)
            channelCellPowers(out.data() + size_t(c) * 4 * size_t(padded), size_t(padded), spectra,
                              16, expected.data() + size_t(c) * size_t(cells));
          CPPUNIT_ASSERT_MESSAGE(std::to_string(channels) + " channels, " +
                                     std::to_string(spectra) + " spectra, chunks of " +
                                     std::to_string(chunk),
                                 powers == expected);
        }
        std::vector<float> out(size_t(channels) * 4 * size_t(padded)),
            powers(size_t(channels) * 64);
        DelayAndBandpassCorrection::Phasors phasors;
        correction.start(frequency, tau0, tau1, phasors);
        CPPUNIT_ASSERT_THROW(correction.apply(spectraIn.data(), valid, 8, 16, phasors, out.data(),
                                              {powers.data(), 64}),
                             std::invalid_argument);
      }
  }

  void polarisationCorrectionInChunks() {
    std::mt19937 random(9);
    const int channels = 16, padded = 112;
    PolarisationCorrection correction(channels, padded, 195312.5, {2e-9, -3e-9}, {0.1, -0.4});
    CPPUNIT_ASSERT(correction.active());
    std::normal_distribution<float> gauss;
    std::vector<float> whole(size_t(channels) * 4 * padded);
    for (float& v : whole) v = gauss(random);
    std::vector<float> chunked = whole;
    correction.apply(150 * 195312.5, whole.data());
    std::vector<std::complex<float>> rotations;
    correction.rotations(150 * 195312.5, rotations);
    for (int first = 0; first < padded; first += 32)
      correction.apply(rotations, chunked.data(), first, std::min(32, padded - first));
    CPPUNIT_ASSERT(chunked == whole);
    // X of channel 0 turned by -(2 pi f_0 d_X + phi_X)
    const double f0 = 150 * 195312.5 - 8 * 195312.5 / channels;
    const std::complex<double> expected =
        std::polar(1.0, -(2 * std::numbers::pi * f0 * 2e-9 + 0.1));
    CPPUNIT_ASSERT(std::abs(rotations[0] - std::complex<float>(expected)) < 1e-6f);
  }

  void polarisationCorrection() {
    std::mt19937 random(10);
    const double fs = 195312.5;
    std::normal_distribution<float> gauss;
    std::uniform_real_distribution<double> delay(-5e-9, 5e-9), phase(-3, 3);
    for (int channels : {1, 2, 16, 64, 256}) {
      const int padded = CorrelatorKernel::paddedLength(channels >= 64 ? 21 : 100);
      const std::array<double, 2> delays = {delay(random), delay(random)};
      const std::array<double, 2> phases = {phase(random), phase(random)};
      std::vector<float> fast(size_t(channels) * 4 * padded);
      for (float& v : fast) v = gauss(random);
      std::vector<float> slow = fast;
      const double frequency = 301 * fs;
      PolarisationCorrection(channels, padded, fs, delays, phases).apply(frequency, fast.data());
      reference::correctPolarisations(channels, padded, fs, frequency, delays, phases, slow.data());
      const double error = relativeError(fast.data(), slow.data(), fast.size());
      CPPUNIT_ASSERT_MESSAGE(std::to_string(channels) + " channels: " + std::to_string(error),
                             error < 1e-6);
    }
  }

  /// Superstations of every shape, on random samples and flags; the padding stays zero.
  void beamformer() {
    std::mt19937 random(11);
    std::normal_distribution<float> gauss;
    const std::vector<std::string> names = {"A", "B", "C", "D", "E", "F"};
    const std::vector<std::vector<std::string>> memberLists = {
        {}, {"C"}, {"C", "A"}, {"F", "B", "D"}, {"B", "C", "D", "E", "F", "A"}};
    for (int channels : {1, 16})
      for (const std::vector<std::string>& members : memberLists) {
        const int spectra = 37, padded = CorrelatorKernel::paddedLength(spectra);
        reference::Stations input;
        input.names = names;
        for (size_t s = 0; s < names.size(); ++s) {
          std::vector<float> samples(size_t(channels) * 4 * padded, 0);
          for (int row = 0; row < 4 * channels; ++row)
            for (int t = 0; t < spectra; ++t) samples[size_t(row) * padded + t] = gauss(random);
          std::vector<bool> valid(spectra);
          for (int t = 0; t < spectra; ++t) valid[size_t(t)] = random() % 5 != 0;
          input.samples.push_back(std::move(samples));
          input.valid.push_back(std::move(valid));
        }
        std::vector<std::vector<float>> samples = input.samples;
        std::vector<SpectrumMask> masks;
        std::vector<float*> samplePointers;
        std::vector<SpectrumMask*> maskPointers;
        for (size_t s = 0; s < names.size(); ++s) {
          masks.emplace_back(spectra);
          for (int t = 0; t < spectra; ++t) masks.back().set(t, input.valid[s][size_t(t)]);
        }
        for (size_t s = 0; s < names.size(); ++s) {
          samplePointers.push_back(samples[s].data());
          maskPointers.push_back(&masks[s]);
        }
        const Beamformer beamformer(names, members);
        beamformer.merge(samplePointers, maskPointers, channels, padded);
        const reference::Stations slow = reference::mergeStations(input, members, padded);
        const std::string what =
            std::to_string(members.size()) + " members, " + std::to_string(channels) + " channels";
        CPPUNIT_ASSERT_MESSAGE(what, beamformer.outputNames(names) == slow.names);
        CPPUNIT_ASSERT_EQUAL(int(slow.names.size()), beamformer.nrOutputStations());
        for (size_t o = 0; o < slow.names.size(); ++o) {
          const size_t s = size_t(beamformer.outputStations()[o]);
          for (int t = 0; t < spectra; ++t)
            CPPUNIT_ASSERT_EQUAL(bool(slow.valid[o][size_t(t)]), masks[s].valid(t));
          CPPUNIT_ASSERT_MESSAGE(what, relativeError(samples[s].data(), slow.samples[o].data(),
                                                     samples[s].size()) < 1e-6);
        }
      }
  }

  void validSampleCounter() {
    std::mt19937 random(12);
    std::normal_distribution<float> gauss;
    for (int stations : {1, 3, 5})
      for (int channels : {1, 16}) {
        const int spectra = 150;  // masks of several words
        std::vector<std::vector<bool>> valid(static_cast<size_t>(stations),
                                             std::vector<bool>(spectra));
        std::vector<SpectrumMask> masks;
        for (int s = 0; s < stations; ++s) masks.emplace_back(spectra);
        for (int s = 0; s < stations; ++s)
          for (int t = 0; t < spectra; ++t) {
            valid[size_t(s)][size_t(t)] = random() % 4 != 0;
            masks[size_t(s)].set(t, valid[size_t(s)][size_t(t)]);
          }
        CorrelatedData fast(stations, channels), slow(stations, channels);
        for (size_t i = 0; i < fast.visibilities.size(); ++i)
          fast.visibilities[i] = slow.visibilities[i] = {gauss(random), gauss(random)};
        std::vector<const SpectrumMask*> pointers;
        for (const SpectrumMask& mask : masks) pointers.push_back(&mask);
        ValidSampleCounter(stations, channels).count(pointers, fast);
        reference::countValidSamples(valid, slow);
        for (size_t i = 0; i < fast.validSamples.size(); ++i)
          CPPUNIT_ASSERT_EQUAL(slow.validSamples[i], fast.validSamples[i]);
        for (size_t i = 0; i < fast.visibilities.size(); ++i)
          CPPUNIT_ASSERT(fast.visibilities[i] == slow.visibilities[i]);
        CPPUNIT_ASSERT_THROW(ValidSampleCounter(stations + 1, channels).count(pointers, fast),
                             std::invalid_argument);
      }
  }

  void correlatorKernel() {
    struct Case {
      int stations, channels, samples;
    };
    std::vector<Case> cases;
    for (int stations : {1, 2, 3, 17})
      for (int channels : {1, 16, 64, 256})
        cases.push_back({stations, channels, channels >= 64 ? 21 : 100});
    // Blocks longer than the kernel's span of time (768), several blocks of first stations.
    cases.push_back({34, 3, 1700});
    cases.push_back({19, 1, 3072});
    std::mt19937 random(5);
    for (const auto& [stations, channels, samples] : cases) {
      AlignedBuffer<float> data;
      std::vector<std::complex<float>> slow, fast;
      for (CorrelatorKernel::Isa isa : supportedIsas()) {
        CorrelatorKernel kernel(stations, channels, samples, isa);
        if (data.size() == 0) {
          data = AlignedBuffer<float>(stations * kernel.floatsPerStation());
          std::normal_distribution<float> gauss;
          for (int s = 0; s < stations; ++s)
            for (int row = 0; row < 4 * channels; ++row)
              for (int t = 0; t < samples; ++t)  // the padding stays zero
                data[s * kernel.floatsPerStation() + size_t(row) * kernel.paddedSamples() + t] =
                    gauss(random);
          std::vector<const float*> pointers;
          for (int s = 0; s < stations; ++s)
            pointers.push_back(&data[s * kernel.floatsPerStation()]);
          slow.resize(size_t(nrBaselines(stations)) * channels * 4);
          reference::correlate(pointers, channels, samples, kernel.paddedSamples(), slow.data());
        }
        fast.assign(slow.size(), {7, 7});
        kernel.correlate(data.data(), fast.data());
        const double error = relativeError(fast.data(), slow.data(), fast.size());
        CPPUNIT_ASSERT_MESSAGE(CorrelatorKernel::toString(isa) + " " + std::to_string(stations) +
                                   " stations " + std::to_string(channels) +
                                   " channels: " + std::to_string(error),
                               error < 1e-5);
      }
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ReferenceTwinsTest);

}  // namespace rtcp::correlator
