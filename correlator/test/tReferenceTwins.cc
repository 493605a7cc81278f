// Each optimised step of the signal chain against its plain reference twin, on random data.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <random>

#include "ChainTestData.h"
#include "CorrelatorKernel.h"
#include "DelayAndBandpassCorrection.h"
#include "InputConverter.h"
#include "PolyphaseFilterBank.h"
#include "Reference.h"
#include "SpectrumFlagger.h"
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

  void filterBank() {
    std::mt19937 random(3);
    for (int channels : {1, 2, 4, 16, 64, 256}) {
      const int spectra = channels == 256 ? 4 : 24;
      PolyphaseFilterBank bank(channels, spectra);
      const size_t n = size_t(bank.nrHistorySamples()) + size_t(spectra) * channels;
      const auto input = test::noise(n, 1.0, random);
      AlignedBuffer<std::complex<float>> in(2 * n), fast(2 * size_t(spectra) * channels);
      for (size_t i = 0; i < 2 * n; ++i) in[i] = std::complex<float>(input[i]);
      std::vector<std::complex<float>> slow(fast.size());
      bank.filter(in.data(), spectra, fast.data());
      reference::filterBank(in.data(), channels, spectra, slow.data());
      const double error = relativeError(fast.data(), slow.data(), fast.size());
      CPPUNIT_ASSERT_MESSAGE(std::to_string(channels) + " channels: " + std::to_string(error),
                             error < 2e-6);
    }
  }

  void delayAndBandpass() {
    std::mt19937 random(4);
    const double fs = 195312.5;
    for (int channels : {1, 2, 16, 64, 256}) {
      for (bool compensate : {false, true}) {
        const int spectra = 37, padded = CorrelatorKernel::paddedLength(spectra);
        const auto input = test::noise(size_t(spectra) * channels, 1.0, random);
        std::vector<std::complex<float>> in(input.begin(), input.end());
        SpectrumMask valid(spectra);
        valid.set(5, false);
        valid.set(36, false);
        DelayAndBandpassCorrection correction(channels, spectra, padded, fs, compensate, true);
        const size_t floats = size_t(channels) * 4 * padded;
        std::vector<float> fast(floats, 0), slow(floats, 0);
        const double frequency = 150 * fs, tau0 = 1.3e-6, tau1 = -2.1e-6;
        correction.apply(in.data(), valid, frequency, tau0, tau1, fast.data());
        reference::correctDelayAndBandpass(in.data(), valid, channels, spectra, padded, fs,
                                           frequency, compensate, true, tau0, tau1, slow.data());
        CPPUNIT_ASSERT(relativeError(fast.data(), slow.data(), floats) < 1e-5);
        CPPUNIT_ASSERT_EQUAL(0.0f, fast[5]);  // flagged spectrum, channel 0 X re
      }
    }
  }

  void correlatorKernel() {
    std::mt19937 random(5);
    for (int stations : {1, 2, 3, 17})
      for (int channels : {1, 16, 64, 256}) {
        const int samples = channels >= 64 ? 21 : 100;
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
