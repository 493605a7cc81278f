#include "Reference.h"

#include <algorithm>
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

void correctPolarisations(int nrChannels, int paddedSpectra, double subbandWidth,
                          double subbandFrequency, std::array<double, 2> delay,
                          std::array<double, 2> phase, float* samples) {
  for (int c = 0; c < nrChannels; ++c) {
    const double frequency = subbandFrequency + (c - nrChannels / 2) * subbandWidth / nrChannels;
    for (int pol = 0; pol < 2; ++pol) {
      const std::complex<double> rotation = std::polar(
          1.0, -(2 * std::numbers::pi * frequency * delay[size_t(pol)] + phase[size_t(pol)]));
      float* re = samples + (size_t(c) * 4 + 2 * size_t(pol)) * paddedSpectra;
      float* im = re + paddedSpectra;
      for (int s = 0; s < paddedSpectra; ++s) {
        const std::complex<double> x = std::complex<double>(re[s], im[s]) * rotation;
        re[s] = float(x.real());
        im[s] = float(x.imag());
      }
    }
  }
}

Stations mergeStations(const Stations& input, const std::vector<std::string>& members,
                       int paddedSpectra) {
  const bool merging = members.size() >= 2;
  auto isMember = [&](const std::string& name) {
    return merging && std::find(members.begin(), members.end(), name) != members.end();
  };
  Stations output;
  for (size_t s = 0; s < input.names.size(); ++s) {
    const std::string& name = input.names[s];
    if (!isMember(name)) {
      output.names.push_back(name);
      output.samples.push_back(input.samples[s]);
      output.valid.push_back(input.valid[s]);
      continue;
    }
    if (name != members[0]) continue;
    const size_t floats = input.samples[s].size(), nrSpectra = input.valid[s].size();
    std::vector<double> sum(floats, 0);
    std::vector<bool> valid(nrSpectra, true);
    for (size_t m = 0; m < input.names.size(); ++m) {
      if (!isMember(input.names[m])) continue;
      for (size_t i = 0; i < floats; ++i) sum[i] += input.samples[m][i];
      for (size_t t = 0; t < nrSpectra; ++t) valid[t] = valid[t] && input.valid[m][t];
    }
    std::vector<float> samples(floats);
    for (size_t i = 0; i < floats; ++i) {
      const size_t t = i % size_t(paddedSpectra);  // the padding past nrSpectra sums zeros
      samples[i] = t >= nrSpectra || valid[t] ? float(sum[i]) : 0.0f;
    }
    output.names.push_back(name);
    output.samples.push_back(std::move(samples));
    output.valid.push_back(std::move(valid));
  }
  return output;
}

void countValidSamples(const std::vector<std::vector<bool>>& valid, CorrelatedData& block) {
  for (int s2 = 0; s2 < block.nrStations; ++s2)
    for (int s1 = 0; s1 <= s2; ++s1) {
      uint32_t both = 0;
      for (size_t t = 0; t < valid[size_t(s1)].size(); ++t)
        both += valid[size_t(s1)][t] && valid[size_t(s2)][t];
      const int baseline = baselineIndex(s1, s2);
      for (int c = 0; c < block.nrChannels; ++c) {
        const bool edge = block.nrChannels > 1 && c == 0;
        block.valid(baseline, c) = edge ? 0 : both;
        if (edge)
          for (int pol = 0; pol < 4; ++pol) block.visibility(baseline, c, pol) = 0;
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
