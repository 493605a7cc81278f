// Each optimised step of the beam former against its plain reference twin, on random data.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "BeamFormedReference.h"
#include "ChannelMerger.h"
#include "CoherentDedispersion.h"
#include "DelayChannelSplitter.h"
#include "StokesIntegrator.h"
#include "TabKernel.h"
#include "rtcp/AlignedBuffer.h"

namespace rtcp::correlator::beamformed {

namespace {

/// Largest |a - b| relative to the largest |b|.
template <typename A, typename B>
double relativeError(const A* a, const B* b, size_t n) {
  double error = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) {
    error = std::max(error, double(std::abs(a[i] - b[i])));
    scale = std::max(scale, double(std::abs(b[i])));
  }
  return scale > 0 ? error / scale : error;
}

std::vector<TabKernel::Isa> supportedIsas() {
  std::vector<TabKernel::Isa> isas = {TabKernel::Isa::kGeneric};
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    isas.push_back(TabKernel::Isa::kAvx2);
  if (__builtin_cpu_supports("avx512f")) isas.push_back(TabKernel::Isa::kAvx512);
  return isas;
}

void randomise(std::complex<float>* data, size_t n, std::mt19937& random) {
  std::normal_distribution<float> gauss;
  for (size_t i = 0; i < n; ++i) data[i] = {gauss(random), gauss(random)};
}

}  // namespace

class BeamFormerTwinsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormerTwinsTest);
  CPPUNIT_TEST(splitter);
  CPPUNIT_TEST(mergerInvertsSplitter);
  CPPUNIT_TEST(tabKernel);
  CPPUNIT_TEST(dedispersionAcrossBlocks);
  CPPUNIT_TEST(stokes);
  CPPUNIT_TEST_SUITE_END();

 public:
  void splitter() {
    for (int channels : {1, 4, 16}) {
      const int spectra = 24;
      DelayChannelSplitter split(channels, spectra);
      const size_t n = 2 * size_t(channels) * spectra;
      AlignedBuffer<std::complex<float>> input(n), out(n), expected(n);
      std::mt19937 random(channels);
      randomise(input.data(), n, random);
      split.split(input.data(), out.data());
      reference::splitChannels(input.data(), channels, spectra, expected.data());
      CPPUNIT_ASSERT_LESS(1e-5, relativeError(out.data(), expected.data(), n));
    }
  }

  void mergerInvertsSplitter() {
    const int channels = 16, spectra = 40, padded = 48;
    DelayChannelSplitter split(channels, spectra);
    ChannelMerger merge(channels, spectra);
    const size_t n = 2 * size_t(channels) * spectra;
    AlignedBuffer<std::complex<float>> input(n), spectraBuffer(n), back(n), expected(n);
    std::mt19937 random(3);
    randomise(input.data(), n, random);
    split.split(input.data(), spectraBuffer.data());
    // into the kernel layout [channel][pol][reim][padded]
    AlignedBuffer<float> layout(size_t(channels) * 4 * padded);
    for (int s = 0; s < spectra; ++s)
      for (int c = 0; c < channels; ++c)
        for (int pol = 0; pol < 2; ++pol) {
          const std::complex<float> v = spectraBuffer[(size_t(s) * channels + c) * 2 + pol];
          layout[(size_t(c) * 2 + pol) * 2 * padded + s] = v.real();
          layout[((size_t(c) * 2 + pol) * 2 + 1) * padded + s] = v.imag();
        }
    merge.merge(layout.data(), padded, back.data());
    CPPUNIT_ASSERT_LESS(1e-5, relativeError(back.data(), input.data(), n));
    reference::mergeChannels(layout.data(), channels, spectra, padded, expected.data());
    CPPUNIT_ASSERT_LESS(1e-5, relativeError(back.data(), expected.data(), n));
  }

  void tabKernel() {
    struct Size {
      int stations, tabs, channels, padded;
    };
    for (Size size :
         {Size{3, 7, 2, 48}, Size{16, 13, 3, 80}, Size{5, 6, 1, 32}, Size{2, 1, 1, 16}}) {
      const size_t floatsPerStation = size_t(size.channels) * 4 * size.padded;
      AlignedBuffer<float> samples(size_t(size.stations) * floatsPerStation);
      std::mt19937 random(size.stations * 100 + size.tabs);
      std::normal_distribution<float> gauss;
      for (float& v : samples) v = gauss(random);
      std::vector<std::complex<float>> weights(size_t(size.channels) * size.stations * size.tabs);
      std::uniform_real_distribution<double> phase(0, 6.283);
      for (auto& w : weights) w = std::complex<float>(std::polar(1.0, phase(random)));
      std::vector<const float*> stations;
      for (int s = 0; s < size.stations; ++s)
        stations.push_back(samples.data() + size_t(s) * floatsPerStation);
      AlignedBuffer<float> expected(size_t(size.tabs) * floatsPerStation);
      reference::formTabs(stations, weights.data(), size.tabs, size.channels, size.padded,
                          expected.data());
      for (TabKernel::Isa isa : supportedIsas()) {
        TabKernel kernel(size.stations, size.tabs, size.channels, size.padded, isa, 2);
        AlignedBuffer<float> beams(size_t(size.tabs) * floatsPerStation);
        std::fill(beams.begin(), beams.end(), 1e9f);  // every value must be overwritten
        kernel.form(stations, weights.data(), beams.data());
        const double error = relativeError(beams.data(), expected.data(), beams.size());
        CPPUNIT_ASSERT_MESSAGE(CorrelatorKernel::toString(isa) + " " + std::to_string(error),
                               error < 1e-5);
      }
    }
  }

  /// Three blocks dedispersed one after the other equal the whole stream dedispersed at
  /// once: nothing lost or repeated at the block edges.
  void dedispersionAcrossBlocks() {
    const double width = 195312.5, frequency = 60e6, dm = 0.05;
    for (int channels : {1, 4}) {
      const int block = 1024, blocks = 3;
      const int latency = dedispersionLatencyFor(dm, width, frequency, channels, 4);
      const int fftSize = CoherentDedispersion::fftSizeFor(latency);
      DedispersionFft fft(fftSize);
      CoherentDedispersion dedispersion(fftSize, latency, width, frequency, channels, dm);
      std::vector<std::complex<double>> stream(2 * size_t(block) * blocks);
      std::mt19937 random(channels);
      std::normal_distribution<double> gauss;
      for (auto& v : stream) v = {gauss(random), gauss(random)};
      const auto expected = reference::dedisperse(stream, width, frequency, channels, dm, latency);
      AlignedBuffer<std::complex<float>> samples(2 * size_t(block)), scratch(2 * size_t(fftSize));
      std::vector<float> valid(size_t(block), 1.0f);
      double error = 0, scale = 0;
      for (int b = 0; b < blocks; ++b) {
        for (int t = 0; t < 2 * block; ++t)
          samples[size_t(t)] = std::complex<float>(stream[size_t(b) * 2 * block + size_t(t)]);
        std::fill(valid.begin(), valid.end(), 1.0f);
        dedispersion.process(fft, samples.data(), valid.data(), block, scratch.data());
        for (int t = 0; t < block; ++t) {
          const int time = b * block + t;
          // the valid fractions: zero for the latency's samples before the stream
          CPPUNIT_ASSERT_EQUAL(time < latency ? 0.0f : 1.0f, valid[size_t(t)]);
          if (time < 2 * latency) continue;  // the reference's stream has no history either
          for (int pol = 0; pol < 2; ++pol) {
            const std::complex<double> e = expected[2 * size_t(time) + size_t(pol)];
            error =
                std::max(error, std::abs(std::complex<double>(samples[2 * size_t(t) + pol]) - e));
            scale = std::max(scale, std::abs(e));
          }
        }
      }
      // The ideal filter's impulse response has tails (the band's edges, and with several
      // channels the chirp's jumps between them) that reach past the overlap: what they
      // leave is a few per mille of the largest sample.
      const double tolerance = channels == 1 ? 1e-2 : 2e-2;
      CPPUNIT_ASSERT_MESSAGE(
          std::to_string(channels) + " channels: " + std::to_string(error / scale),
          error / scale < tolerance);
    }
  }

  void stokes() {
    const int channels = 4, spectra = 12;
    for (StokesKind kind : {StokesKind::kI, StokesKind::kIQUV, StokesKind::kXXYY}) {
      const int integration = kind == StokesKind::kXXYY ? 1 : 3;
      StokesIntegrator integrator(kind, channels, spectra, integration);
      AlignedBuffer<std::complex<float>> input(2 * size_t(channels) * spectra);
      std::mt19937 random(static_cast<unsigned>(kind));
      randomise(input.data(), input.size(), random);
      BeamFormedData out = integrator.makeOutput();
      integrator.detect(input.data(), false, out);
      std::vector<double> expected;
      reference::stokes(input.data(), kind, channels, spectra, integration, expected);
      CPPUNIT_ASSERT_EQUAL(expected.size(), out.samples.size());
      CPPUNIT_ASSERT_LESS(1e-5,
                          relativeError(out.samples.data(), expected.data(), expected.size()));
      integrator.detect(input.data(), true, out);  // adds
      for (double& e : expected) e *= 2;
      CPPUNIT_ASSERT_LESS(1e-5,
                          relativeError(out.samples.data(), expected.data(), expected.size()));
    }
    CPPUNIT_ASSERT_THROW(StokesIntegrator(StokesKind::kXXYY, 4, 12, 2), std::invalid_argument);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormerTwinsTest);

}  // namespace rtcp::correlator::beamformed
