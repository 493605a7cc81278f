// Filter bank physics: where tones land, how much leaks into other channels (against the
// filter design), white noise, streaming history, the station bandpass correction (noise
// shaped as a LOFAR station subband comes out flat).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <numbers>
#include <random>

#include "ChainTestData.h"
#include "DelayAndBandpassCorrection.h"
#include "FilterDesign.h"
#include "PolyphaseFilterBank.h"
#include "StreamingFilterBank.h"
#include "rtcp/Logger.h"
#include "rtcp/StationFilter.h"

namespace rtcp::correlator {

namespace {

constexpr int kChannels = 64;

double dB(double powerRatio) { return 10 * std::log10(powerRatio); }

/// A tone of unit amplitude in both polarisations at `frequency` cycles per sample.
AlignedBuffer<std::complex<float>> tone(size_t nrSamples, double frequency) {
  AlignedBuffer<std::complex<float>> samples(2 * nrSamples);
  for (size_t t = 0; t < nrSamples; ++t) {
    const double phase = 2 * std::numbers::pi * std::fmod(frequency * double(t), 1.0);
    samples[2 * t] = samples[2 * t + 1] = std::complex<float>(std::polar(1.0, phase));
  }
  return samples;
}

/// Mean power per channel (polarisation X) over all spectra.
std::vector<double> channelPower(const AlignedBuffer<std::complex<float>>& spectra, int channels) {
  std::vector<double> power(static_cast<size_t>(channels), 0.0);
  const size_t nrSpectra = spectra.size() / 2 / size_t(channels);
  for (size_t s = 0; s < nrSpectra; ++s)
    for (int c = 0; c < channels; ++c)
      power[size_t(c)] += std::norm(spectra[2 * (s * channels + c)]);
  for (double& p : power) p /= double(nrSpectra);
  return power;
}

std::vector<double> filterTone(double frequency, int nrSpectra = 16) {
  PolyphaseFilterBank bank(kChannels, nrSpectra);
  const auto input =
      tone(size_t(bank.nrHistorySamples()) + size_t(nrSpectra) * kChannels, frequency);
  AlignedBuffer<std::complex<float>> spectra(2 * size_t(nrSpectra) * kChannels);
  bank.filter(input.data(), nrSpectra, spectra.data());
  return channelPower(spectra, kChannels);
}

}  // namespace

class FilterBankPhysicsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(FilterBankPhysicsTest);
  CPPUNIT_TEST(toneAtChannelCentre);
  CPPUNIT_TEST(toneInTransitionBand);
  CPPUNIT_TEST(whiteNoiseIsFlat);
  CPPUNIT_TEST(twoHalfBlocksEqualOneBlock);
  CPPUNIT_TEST(oneChannelPassesSamples);
  CPPUNIT_TEST(stationBandpass);
  CPPUNIT_TEST_SUITE_END();

 public:
  void toneAtChannelCentre() {
    const std::vector<double> h = prototypeFilter(kChannels, kFilterTaps);
    // Design: 91 dB Kaiser stop band; the response one channel away from the centre.
    const double neighbourDesign = dB(std::pow(filterResponse(h, kChannels, 1.0), 2));
    CPPUNIT_ASSERT(neighbourDesign < -91);
    for (int channel : {1, 20, 32, 45, 63}) {
      const auto power = filterTone(double(channel - kChannels / 2) / kChannels);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, power[size_t(channel)], 1e-4);  // passband gain 1
      for (int c = 0; c < kChannels; ++c) {
        if (c == channel) continue;
        const int offset = std::abs(c - channel);
        const double design =
            dB(std::pow(filterResponse(h, kChannels, std::min(offset, kChannels - offset)), 2));
        const double measured = dB(power[size_t(c)] / power[size_t(channel)]);
        // Every other channel at or below the design's stop band (float32 rounding: 1 dB).
        CPPUNIT_ASSERT_MESSAGE("tone in channel " + std::to_string(channel) + ", channel " +
                                   std::to_string(c) + ": " + std::to_string(measured) + " dB",
                               measured < std::max(design, -120.0) + 1);
        if (offset != 1) continue;
        if (channel == 20)
          RTCP_LOG_INFO("test", "tone at the centre of channel "
                                    << channel << ": channel " << c << " at " << measured
                                    << " dB (design " << neighbourDesign << " dB)");
        CPPUNIT_ASSERT_DOUBLES_EQUAL(neighbourDesign, measured, 0.2);
      }
    }
  }

  void toneInTransitionBand() {
    // 0.4 channel above the centre of channel 40: channel 41 sees it 0.6 channel away.
    const std::vector<double> h = prototypeFilter(kChannels, kFilterTaps);
    const auto power = filterTone((40 + 0.4 - kChannels / 2) / kChannels);
    const double design =
        dB(std::pow(filterResponse(h, kChannels, 0.6) / filterResponse(h, kChannels, 0.4), 2));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(-26.9, design, 0.1);  // the design itself, for the record
    CPPUNIT_ASSERT_DOUBLES_EQUAL(design, dB(power[41] / power[40]), 0.01);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(dB(std::pow(filterResponse(h, kChannels, 0.4), 2)), dB(power[40]),
                                 0.01);
    CPPUNIT_ASSERT(dB(power[39] / power[40]) < -91);  // 1.4 channel away: stop band
  }

  void whiteNoiseIsFlat() {
    // A digital white input fills every channel alike (the filter bank is periodic in
    // frequency, so there is no edge roll-off of its own; the station's is in
    // stationBandpass): power sum(h^2) per channel.
    const int spectra = 4096;
    std::mt19937 random(11);
    PolyphaseFilterBank bank(kChannels, spectra);
    const auto noise =
        test::noise(size_t(bank.nrHistorySamples()) + size_t(spectra) * kChannels, 1.0, random);
    AlignedBuffer<std::complex<float>> input(noise.size()), output(2 * size_t(spectra) * kChannels);
    for (size_t i = 0; i < noise.size(); ++i) input[i] = std::complex<float>(noise[i]);
    bank.filter(input.data(), spectra, output.data());
    double expected = 0;
    for (double v : bank.prototype()) expected += v * v;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.934 / kChannels, expected, 0.001 / kChannels);
    const auto power = channelPower(output, kChannels);
    double total = 0;
    for (double p : power) {
      // 4096 exponentially distributed powers: 1.6 % standard error; 5 sigma.
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, p / expected, 0.08);
      total += p;
    }
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, total / (expected * kChannels), 0.01);
  }

  void twoHalfBlocksEqualOneBlock() {
    const int spectra = 48;
    std::mt19937 random(12);
    PolyphaseFilterBank whole(kChannels, spectra);
    test::StreamingFilterBank streamed(kChannels, spectra);
    const size_t history = size_t(whole.nrHistorySamples());
    const auto noise = test::noise(history + size_t(spectra) * kChannels, 1.0, random);
    AlignedBuffer<std::complex<float>> input(noise.size()),
        reference(2 * size_t(spectra) * kChannels), pieces(reference.size());
    for (size_t i = 0; i < noise.size(); ++i) input[i] = std::complex<float>(noise[i]);
    whole.filter(input.data(), spectra, reference.data());
    const size_t perSpectrum = 2 * size_t(kChannels);
    for (const std::vector<int>& split : {std::vector<int>{24, 24}, std::vector<int>{5, 30, 13}}) {
      streamed.setHistory(input.data());
      int done = 0;
      for (int n : split) {
        streamed.filter(input.data() + 2 * history + done * perSpectrum, n,
                        pieces.data() + done * perSpectrum);
        done += n;
      }
      for (size_t i = 0; i < reference.size(); ++i)
        CPPUNIT_ASSERT(std::abs(pieces[i] - reference[i]) <= 1e-6f * (1 + std::abs(reference[i])));
    }
    // Without history the first 15 spectra differ (zeros in front), later ones agree.
    test::StreamingFilterBank fresh(kChannels, spectra);
    fresh.filter(input.data() + 2 * history, spectra, pieces.data());
    CPPUNIT_ASSERT(std::abs(pieces[0] - reference[0]) > 1e-3f);
    CPPUNIT_ASSERT(std::abs(pieces[16 * perSpectrum] - reference[16 * perSpectrum]) < 1e-5f);
  }

  void oneChannelPassesSamples() {
    std::mt19937 random(13);
    PolyphaseFilterBank bank(1, 100);
    CPPUNIT_ASSERT_EQUAL(0, bank.nrHistorySamples());
    const auto noise = test::noise(100, 1.0, random);
    AlignedBuffer<std::complex<float>> input(noise.size()), output(noise.size());
    for (size_t i = 0; i < noise.size(); ++i) input[i] = std::complex<float>(noise[i]);
    bank.filter(input.data(), 100, output.data());
    for (size_t i = 0; i < noise.size(); ++i) CPPUNIT_ASSERT(output[i] == input[i]);
  }

  /// White noise shaped as a station subband (the station filter's aliased power, by its
  /// 16-tap spectral factor) through this filter bank: uncorrected, channel c shows the
  /// station filter's power at its centre, aliasedPower((c - C/2) / C); corrected by the
  /// step's gains it is flat. Channels 1..C-1 within 0.2 dB at 64 and 256 channels.
  void stationBandpass() {
    const StationFilter& station = StationFilter::lofar();
    for (const int channels : {64, 256}) {
      const DelayAndBandpassCorrection on(channels, 16, 16, 195312.5, false, true);
      const DelayAndBandpassCorrection off(channels, 16, 16, 195312.5, false, false);
      CPPUNIT_ASSERT(on.gains() == station.bandpassCorrection(channels));
      CPPUNIT_ASSERT(off.gains() == std::vector<double>(size_t(channels), 1.0));

      const int spectra = (1 << 22) / channels;
      std::mt19937 random(14);
      PolyphaseFilterBank bank(channels, spectra);
      const size_t length = size_t(bank.nrHistorySamples()) + size_t(spectra) * channels;
      const auto white = test::noise(length + StationFilter::kNrTaps, 1.0, random);
      const auto& g = station.noiseShapingFilter();
      AlignedBuffer<std::complex<float>> input(2 * length), output(2 * size_t(spectra) * channels);
      for (size_t t = 0; t < length; ++t) {  // X shaped; Y a copy (only X is measured)
        std::complex<double> sum = 0;
        for (size_t k = 0; k < g.size(); ++k) sum += g[k] * white[2 * (t + g.size() - k)];
        input[2 * t] = input[2 * t + 1] = std::complex<float>(sum);
      }
      bank.filter(input.data(), spectra, output.data());
      // X only: 1.6 % standard error per channel at 4096 spectra, 0.8 % at 16384
      const std::vector<double> power = channelPower(output, channels);
      std::vector<double> shape(power.size()), corrected(power.size());
      double mean = 0;
      for (int c = 1; c < channels; ++c) {
        shape[size_t(c)] =
            power[size_t(c)] / station.aliasedPower(double(c - channels / 2) / channels);
        corrected[size_t(c)] = power[size_t(c)] * std::pow(on.gains()[size_t(c)], 2);
        mean += shape[size_t(c)] / (channels - 1);
      }
      const double scale = std::pow(std::ldexp(1.0, 25) / station.dcGain(), 2);  // gain^2 x power
      double worstShape = 0, worstFlat = 0;
      for (int c = 1; c < channels; ++c) {
        worstShape = std::max(worstShape, std::abs(dB(shape[size_t(c)] / mean)));
        worstFlat = std::max(worstFlat, std::abs(dB(corrected[size_t(c)] / (mean * scale))));
      }
      RTCP_LOG_INFO("test", channels << " channels: station shape within " << worstShape
                                     << " dB, corrected flat within " << worstFlat << " dB");
      CPPUNIT_ASSERT(worstShape < 0.2);
      CPPUNIT_ASSERT(worstFlat < 0.2);
      // Without the correction the edges are visibly low (the shape is really there).
      CPPUNIT_ASSERT(dB(power[1] / power[size_t(channels / 2)]) < -2);
    }
    CPPUNIT_ASSERT(DelayAndBandpassCorrection(1, 16, 16, 195312.5, false, true).gains() ==
                   std::vector<double>{1.0});
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(FilterBankPhysicsTest);

}  // namespace rtcp::correlator
