#pragma once
// Synthetic inputs for the signal-chain tests: settings, StationBlocks, random samples.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/RspPacket.h"
#include "rtcp/StationBlock.h"

namespace rtcp::correlator::test {

/// An observation of nrStations stations (S0, S1, ...) and one subband (150, zone 1).
inline ObservationSettings makeSettings(int nrStations, int nrChannels, int nrSpectra,
                                        int bits = 16) {
  ObservationSettings settings;
  settings.clockMHz = 200;
  settings.bitsPerSample = bits;
  settings.channelsPerSubband = nrChannels;
  settings.spectraPerBlock = nrSpectra;
  for (int s = 0; s < nrStations; ++s) {
    StationSettings station;
    station.name = std::to_string(s);
    station.name.insert(station.name.begin(), 'S');  // ("S" + ... trips GCC 12 -Wrestrict)
    settings.stations.push_back(station);
  }
  SubbandSettings subband;
  subband.number = 150;
  subband.frequency = 150 * settings.subbandWidth();
  settings.subbands.push_back(subband);
  return settings;
}

/// A block of one subband, every sample valid.
inline StationBlock makeBlock(const ObservationSettings& settings, int station, int64_t block = 0) {
  StationBlock result(1, nrHistorySamples(settings) + int(settings.samplesPerBlock()),
                      settings.bitsPerSample);
  result.header.block = block;
  result.header.station = station;
  result.header.firstSubband = 0;
  for (int t = 0; t < result.header.nrSamples; ++t) result.setValid(0, t, true);
  return result;
}

/// Writes samples[time][pol] (rounded, clamped to the bit mode) into subband 0 of a block.
inline void encodeSamples(const std::vector<std::complex<double>>& samples, StationBlock& block) {
  const int bits = block.header.bitsPerSample;
  const double limit = maxSampleValue(bits);
  auto q = [&](double v) { return int16_t(std::clamp(std::round(v), -limit, limit)); };
  for (int t = 0; t < block.header.nrSamples; ++t) {
    const std::complex<int16_t> pols[2] = {
        {q(samples[2 * t].real()), q(samples[2 * t].imag())},
        {q(samples[2 * t + 1].real()), q(samples[2 * t + 1].imag())}};
    uint8_t* out = block.sample(0, t);
    if (bits == 16) {
      const int16_t v[4] = {pols[0].real(), pols[0].imag(), pols[1].real(), pols[1].imag()};
      std::memcpy(out, v, 8);
    } else if (bits == 8) {
      for (int i = 0; i < 4; ++i)
        out[i] = uint8_t(int8_t(i % 2 ? pols[i / 2].imag() : pols[i / 2].real()));
    } else {
      for (int p = 0; p < 2; ++p)
        out[p] = uint8_t((pols[p].real() & 0xf) | ((pols[p].imag() & 0xf) << 4));
    }
  }
}

/// Random bytes in every sample: any byte pattern is a valid RSP encoding.
inline void randomiseSamples(StationBlock& block, std::mt19937& random) {
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < block.samples.size(); ++i) block.samples[i] = uint8_t(byte(random));
}

/// Complex Gaussian noise samples[time][pol] of the given power per polarisation.
inline std::vector<std::complex<double>> noise(size_t nrSamples, double power,
                                               std::mt19937& random) {
  std::normal_distribution<double> gauss(0, std::sqrt(power / 2));
  std::vector<std::complex<double>> samples(2 * nrSamples);
  for (auto& s : samples) s = {gauss(random), gauss(random)};
  return samples;
}

}  // namespace rtcp::correlator::test
