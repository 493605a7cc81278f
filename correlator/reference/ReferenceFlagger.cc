// The pre-correlation flagger's plain twin (Reference.h): the specification of
// PreCorrelationFlagger.h, written out with straight loops.
#include <algorithm>
#include <cmath>
#include <complex>

#include "Reference.h"
#include "SpectrumNoise.h"
#include "rtcp/Baselines.h"

namespace rtcp::correlator::reference {

namespace {

struct Statistics {
  double median = 0, sigma = 0;
  bool any = false;
};

Statistics statistics(const std::vector<double>& values, const std::vector<bool>& flags,
                      FlaggerStatistics kind) {
  std::vector<double> v;
  for (size_t i = 0; i < values.size(); ++i)
    if (!flags[i]) v.push_back(float(values[i]));  // the flagger's statistics are in float
  Statistics s;
  if (v.empty()) return s;
  s.any = true;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  s.median = v[n / 2];
  double mean = 0, squares = 0;
  if (kind == FlaggerStatistics::kWinsorized) {
    const double low = v[size_t(std::floor(0.1 * double(n)))];
    const double high = v[std::max<size_t>(size_t(std::ceil(0.9 * double(n))), 1) - 1];
    for (double x : v) mean += std::clamp(x, low, high) / double(n);
    for (double x : v) squares += std::pow(std::clamp(x, low, high) - mean, 2);
    s.sigma = std::sqrt(1.54 * squares / double(n));
  } else {
    for (double x : v) mean += x / double(n);
    for (double x : v) squares += (x - mean) * (x - mean);
    s.sigma = std::sqrt(squares / double(n));
  }
  return s;
}

/// The integrated spectrum's median and noise (SpectrumNoise.h): the radiometer equation's
/// σ with the bandpass's flatness, or the spread below the median where that is larger.
Statistics spectrumNoise(const std::vector<double>& values, const std::vector<bool>& flags,
                         double spectra) {
  std::vector<float> v;
  for (size_t i = 0; i < values.size(); ++i)
    if (!flags[i]) v.push_back(float(values[i]));
  Statistics s;
  if (v.empty()) return s;
  s.any = true;
  std::sort(v.begin(), v.end());
  const float median = v[v.size() / 2];
  const float below = v[size_t(std::floor(kOneSigmaBelow * double(v.size())))];
  const double radiometer = 1.0 / (2.0 * std::max(spectra, 1.0));
  const float model =
      float(double(median) * std::sqrt(radiometer + kBandpassFlatness * kBandpassFlatness));
  s.median = median;
  s.sigma = std::max(model, median - below);
  return s;
}

/// Every window 1, 2, 4 .. maxWindow with median + χ_1 · 1.5^log2(M) / M · σ.
void sumThresholdAll(const std::vector<double>& values, std::vector<bool>& flags,
                     const Statistics& s, double firstThreshold, size_t maxWindow) {
  if (!s.any) return;
  for (size_t m = 1; m <= maxWindow && m <= values.size(); m *= 2)
    sumThresholdPass(
        values, flags, m,
        s.median + firstThreshold * std::pow(1.5, std::log2(double(m))) / double(m) * s.sigma);
}

}  // namespace

void sumThresholdPass(const std::vector<double>& values, std::vector<bool>& flags, size_t window,
                      double threshold) {
  std::vector<bool> found(values.size(), false);
  for (size_t start = 0; start + window <= values.size(); ++start) {
    double sum = 0;
    size_t count = 0;
    for (size_t i = start; i < start + window; ++i)
      if (!flags[i]) {
        sum += values[i];
        ++count;
      }
    if (count > 0 && sum > threshold * double(count))
      for (size_t i = start; i < start + window; ++i) found[i] = true;
  }
  for (size_t i = 0; i < values.size(); ++i) flags[i] = flags[i] || found[i];
}

std::vector<std::vector<bool>> flagStation(const float* samples, int nrChannels, int nrSpectra,
                                           int paddedSpectra, const std::vector<bool>& valid,
                                           const FlaggingSettings& settings) {
  const int S = std::clamp(settings.spectraPerCell, 1, nrSpectra);
  const int K = (nrSpectra + S - 1) / S;
  const int first = nrChannels > 1 ? 1 : 0;
  const int C = nrChannels - first;  // channels flagged, c = first + i
  const double chi = settings.preThreshold;
  const size_t longest = size_t(settings.maxWindow);
  const FlaggerStatistics kind = settings.preStatistics;
  auto sample = [&](int c, int pol, int t) {
    const float* row = samples + (size_t(c) * 4 + 2 * size_t(pol)) * size_t(paddedSpectra);
    return std::complex<double>(row[t], row[paddedSpectra + t]);
  };
  // power[i][k], flagged[i][k] for channel first + i and cell k.
  std::vector<std::vector<double>> power(size_t(C), std::vector<double>(size_t(K), 0.0));
  std::vector<std::vector<bool>> flagged(size_t(C), std::vector<bool>(size_t(K), false));
  std::vector<int> cellSpectra(size_t(K), 0);
  for (int t = 0; t < nrSpectra; ++t) cellSpectra[size_t(t / S)] += valid[size_t(t)];
  for (int i = 0; i < C; ++i)
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int t = k * S; t < std::min(nrSpectra, (k + 1) * S); ++t)
        if (valid[size_t(t)])
          for (int pol = 0; pol < 2; ++pol) sum += std::norm(sample(first + i, pol, t));
      const int n = cellSpectra[size_t(k)];
      power[size_t(i)][size_t(k)] = n ? float(float(sum) / float(n)) : 0.0;
      flagged[size_t(i)][size_t(k)] = n == 0;
    }
  std::vector<std::vector<double>> normalised = power;

  auto grid = [&](size_t maxWindow) {
    for (int i = 0; i < C; ++i) {
      const Statistics row = statistics(power[size_t(i)], flagged[size_t(i)], kind);
      for (int k = 0; k < K; ++k)
        normalised[size_t(i)][size_t(k)] =
            row.median > 0 ? float(float(power[size_t(i)][size_t(k)]) / float(row.median)) : 0.0;
    }
    std::vector<double> all;
    std::vector<bool> allFlags;
    for (int i = 0; i < C; ++i)
      for (int k = 0; k < K; ++k) {
        all.push_back(normalised[size_t(i)][size_t(k)]);
        allFlags.push_back(flagged[size_t(i)][size_t(k)]);
      }
    const Statistics s = statistics(all, allFlags, kind);
    for (int i = 0; i < C; ++i) {
      std::vector<bool> f = flagged[size_t(i)];
      sumThresholdAll(normalised[size_t(i)], f, s, chi, maxWindow);
      flagged[size_t(i)] = f;
    }
    for (int k = 0; k < K; ++k) {
      std::vector<double> v;
      std::vector<bool> f;
      for (int i = 0; i < C; ++i) {
        v.push_back(normalised[size_t(i)][size_t(k)]);
        f.push_back(flagged[size_t(i)][size_t(k)]);
      }
      sumThresholdAll(v, f, s, chi, maxWindow);
      for (int i = 0; i < C; ++i) flagged[size_t(i)][size_t(k)] = f[size_t(i)];
    }
  };
  auto spectrum = [&](size_t maxWindow) {
    std::vector<double> v(size_t(C), 0.0);
    std::vector<bool> f(size_t(C), false);
    std::vector<double> channelSpectra(size_t(C), 0.0);  // of the channel's unflagged cells
    for (int i = 0; i < C; ++i) {
      double sum = 0;
      int used = 0;
      for (int k = 0; k < K; ++k)
        if (!flagged[size_t(i)][size_t(k)]) {
          sum += float(power[size_t(i)][size_t(k)]);
          ++used;
          channelSpectra[size_t(i)] += cellSpectra[size_t(k)];
        }
      v[size_t(i)] = used ? float(sum / used) : 0.0;
      f[size_t(i)] = used == 0;
    }
    const std::vector<bool> before = f;
    const double spectra = statistics(channelSpectra, f, kind).median;
    for (int round = 0; round < kSpectrumRounds; ++round) {
      const std::vector<bool> last = f;
      sumThresholdAll(v, f, spectrumNoise(v, f, spectra), chi, maxWindow);
      if (f == last) break;
    }
    for (int i = 0; i < C; ++i)
      if (f[size_t(i)] && !before[size_t(i)]) flagged[size_t(i)].assign(size_t(K), true);
  };
  auto time = [&] {
    std::vector<double> v(size_t(K), 0.0);
    std::vector<bool> f(size_t(K), false);
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      int used = 0;
      for (int i = 0; i < C; ++i)
        if (!flagged[size_t(i)][size_t(k)]) {
          sum += float(normalised[size_t(i)][size_t(k)]);
          ++used;
        }
      v[size_t(k)] = used ? float(sum / used) : 0.0;
      f[size_t(k)] = used == 0;
    }
    const std::vector<bool> before = f;
    sumThresholdAll(v, f, statistics(v, f, kind), chi, longest);
    for (int k = 0; k < K; ++k)
      if (f[size_t(k)] && !before[size_t(k)])
        for (int i = 0; i < C; ++i) flagged[size_t(i)][size_t(k)] = true;
  };
  if (settings.preCorrelation) switch (settings.preType) {
      case PreFlaggerType::kThreshold:
      case PreFlaggerType::kIntegratedThreshold2D:
        grid(1);
        break;
      case PreFlaggerType::kIntegratedSumThreshold2D:
        grid(longest);
        break;
      case PreFlaggerType::kIntegratedThreshold:
        spectrum(1);
        break;
      case PreFlaggerType::kIntegratedSumThreshold:
        spectrum(longest);
        break;
      case PreFlaggerType::kSumThreshold:
        grid(longest);
        spectrum(longest);
        time();
        break;
    }
  std::vector<bool> spectrumFlagged(size_t(nrSpectra), false);
  if (settings.preCorrelationNoChannels) {
    std::vector<double> v(size_t(nrSpectra), 0.0);
    std::vector<bool> f(size_t(nrSpectra), false);
    for (int t = 0; t < nrSpectra; ++t) {
      f[size_t(t)] = !valid[size_t(t)];
      float sum = 0;  // summed over channels in float, as the flagger does
      for (int i = 0; i < C; ++i)
        sum += float(std::norm(sample(first + i, 0, t)) + std::norm(sample(first + i, 1, t)));
      v[size_t(t)] = sum;
    }
    std::vector<bool> before = f;
    sumThresholdAll(v, f, statistics(v, f, kind), chi, longest);
    for (int t = 0; t < nrSpectra; ++t)
      spectrumFlagged[size_t(t)] = f[size_t(t)] && !before[size_t(t)];
  }
  std::vector<std::vector<bool>> result(size_t(nrChannels), valid);
  for (int i = 0; i < C; ++i)
    for (int t = 0; t < nrSpectra; ++t)
      if (flagged[size_t(i)][size_t(t / S)] || spectrumFlagged[size_t(t)])
        result[size_t(first + i)][size_t(t)] = false;
  return result;
}

void countValidSamples(const std::vector<std::vector<std::vector<bool>>>& valid,
                       CorrelatedData& block) {
  for (int s2 = 0; s2 < block.nrStations; ++s2)
    for (int s1 = 0; s1 <= s2; ++s1) {
      const int baseline = baselineIndex(s1, s2);
      for (int c = 0; c < block.nrChannels; ++c) {
        const bool edge = block.nrChannels > 1 && c == 0;
        uint32_t both = 0;
        const auto& a = valid[size_t(s1)][size_t(c)];
        const auto& b = valid[size_t(s2)][size_t(c)];
        for (size_t t = 0; t < a.size(); ++t) both += a[t] && b[t];
        block.valid(baseline, c) = edge ? 0 : both;
        if (edge)
          for (int pol = 0; pol < 4; ++pol) block.visibility(baseline, c, pol) = 0;
      }
    }
}

}  // namespace rtcp::correlator::reference
