#include "Reference.h"

#include <numbers>

#include "FilterDesign.h"
#include "rtcp/Baselines.h"
#include "rtcp/RspPacket.h"
#include "rtcp/StationFilter.h"

namespace rtcp::correlator::reference {

void convertInput(const StationBlock& block, int subband, std::complex<float>* samples) {
  const int bits = block.header.bitsPerSample;
  for (int t = 0; t < block.header.nrSamples; ++t) {
    std::complex<int16_t> x, y;
    decodeRspSample(block.sample(subband, t), bits, x, y);
    const bool ok = block.isValid(subband, t);
    samples[2 * t] = ok ? std::complex<float>(x.real(), x.imag()) : 0.0f;
    samples[2 * t + 1] = ok ? std::complex<float>(y.real(), y.imag()) : 0.0f;
  }
}

void flagSpectra(const std::vector<bool>& sampleValid, int nrChannels, int nrSpectra,
                 SpectrumMask& mask) {
  const int window = nrChannels > 1 ? kFilterTaps * nrChannels : 1;
  for (int s = 0; s < nrSpectra; ++s) {
    bool ok = true;
    for (int t = s * nrChannels; t < s * nrChannels + window; ++t)
      ok = ok && sampleValid[size_t(t)];
    mask.set(s, ok);
  }
}

void filterBank(const std::complex<float>* input, int nrChannels, int nrSpectra,
                std::complex<float>* spectra) {
  const int C = nrChannels;
  if (C == 1) {
    for (int i = 0; i < 2 * nrSpectra; ++i) spectra[i] = input[i];
    return;
  }
  const std::vector<double> h = prototypeFilter(C, kFilterTaps);
  std::vector<std::complex<double>> branch(static_cast<size_t>(C));
  for (int s = 0; s < nrSpectra; ++s)
    for (int pol = 0; pol < 2; ++pol) {
      for (int c = 0; c < C; ++c) {
        branch[size_t(c)] = 0;
        for (int k = 0; k < kFilterTaps; ++k) {
          const std::complex<float> x = input[2 * ((s + k) * C + c) + pol];
          branch[size_t(c)] += h[size_t(k * C + c)] * std::complex<double>(x);
        }
      }
      for (int channel = 0; channel < C; ++channel) {
        std::complex<double> sum = 0;
        for (int c = 0; c < C; ++c)
          sum += branch[size_t(c)] *
                 std::polar(1.0, -2 * std::numbers::pi * c * (channel - C / 2) / C);
        spectra[2 * (size_t(s) * C + channel) + pol] = std::complex<float>(sum);
      }
    }
}

void correctDelayAndBandpass(const std::complex<float>* spectra, const SpectrumMask& valid,
                             int nrChannels, int nrSpectra, int paddedSpectra, double subbandWidth,
                             double subbandFrequency, bool delayCompensation, bool correctBandPass,
                             double delayAtStart, double delayAtEnd, float* output) {
  const std::vector<double> gain = correctBandPass
                                       ? StationFilter::lofar().bandpassCorrection(nrChannels)
                                       : std::vector<double>(size_t(nrChannels), 1.0);
  for (int c = 0; c < nrChannels; ++c) {
    const double frequency = subbandFrequency + (c - nrChannels / 2) * subbandWidth / nrChannels;
    for (int s = 0; s < nrSpectra; ++s) {
      const double tau = delayAtStart + (delayAtEnd - delayAtStart) * (s + 0.5) / nrSpectra;
      std::complex<double> factor =
          delayCompensation ? std::polar(gain[size_t(c)], -2 * std::numbers::pi * frequency * tau)
                            : gain[size_t(c)];
      if (!valid.valid(s)) factor = 0;
      for (int pol = 0; pol < 2; ++pol) {
        const std::complex<double> x =
            std::complex<double>(spectra[2 * (size_t(s) * nrChannels + c) + pol]) * factor;
        output[(size_t(c) * 4 + 2 * pol) * paddedSpectra + s] = float(x.real());
        output[(size_t(c) * 4 + 2 * pol + 1) * paddedSpectra + s] = float(x.imag());
      }
    }
  }
}

void correlate(std::span<const float* const> stations, int nrChannels, int nrSamples,
               int paddedSamples, std::complex<float>* visibilities) {
  const int nrStations = int(stations.size());
  auto sample = [&](int station, int channel, int pol, int t) {
    const float* row = stations[size_t(station)] + (size_t(channel) * 4 + 2 * pol) * paddedSamples;
    return std::complex<double>(row[t], row[paddedSamples + t]);
  };
  for (int s2 = 0; s2 < nrStations; ++s2)
    for (int s1 = 0; s1 <= s2; ++s1)
      for (int c = 0; c < nrChannels; ++c)
        for (int p = 0; p < 2; ++p)
          for (int q = 0; q < 2; ++q) {
            std::complex<double> sum = 0;
            for (int t = 0; t < nrSamples; ++t)
              sum += sample(s1, c, p, t) * std::conj(sample(s2, c, q, t));
            visibilities[(size_t(baselineIndex(s1, s2)) * nrChannels + c) * 4 + 2 * p + q] =
                std::complex<float>(sum);
          }
}

}  // namespace rtcp::correlator::reference
