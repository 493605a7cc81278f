#include "BeamFormedReference.h"

#include <cmath>
#include <numbers>

#include "CoherentDedispersion.h"

namespace rtcp::correlator::beamformed::reference {

namespace {
constexpr double kPi = std::numbers::pi;
}

void splitChannels(const std::complex<float>* input, int nrChannels, int nrSpectra,
                   std::complex<float>* spectra) {
  const int C = nrChannels;
  for (int s = 0; s < nrSpectra; ++s)
    for (int c = 0; c < C; ++c)
      for (int pol = 0; pol < 2; ++pol) {
        std::complex<double> sum;
        for (int n = 0; n < C; ++n)
          sum += std::complex<double>(input[(size_t(s) * C + n) * 2 + pol]) *
                 std::polar(1.0, -2 * kPi * (c - C / 2) * n / C);
        spectra[(size_t(s) * C + c) * 2 + pol] = std::complex<float>(sum);
      }
}

void mergeChannels(const float* input, int nrChannels, int nrSpectra, int paddedSpectra,
                   std::complex<float>* samples) {
  const int C = nrChannels;
  for (int s = 0; s < nrSpectra; ++s)
    for (int n = 0; n < C; ++n)
      for (int pol = 0; pol < 2; ++pol) {
        std::complex<double> sum;
        for (int c = 0; c < C; ++c) {
          const float* re = input + (size_t(c) * 2 + pol) * 2 * size_t(paddedSpectra);
          sum += std::complex<double>(re[s], re[size_t(paddedSpectra) + s]) *
                 std::polar(1.0, 2 * kPi * (c - C / 2) * n / C);
        }
        samples[(size_t(s) * C + n) * 2 + pol] = std::complex<float>(sum / double(C));
      }
}

void formTabs(std::span<const float* const> stations, const std::complex<float>* weights,
              int nrTabs, int nrChannels, int paddedSamples, float* beams) {
  const size_t nrStations = stations.size(), padded = size_t(paddedSamples);
  for (int tab = 0; tab < nrTabs; ++tab)
    for (int c = 0; c < nrChannels; ++c)
      for (int pol = 0; pol < 2; ++pol) {
        const size_t row = (size_t(c) * 2 + pol) * 2 * padded;
        float* out = beams + size_t(tab) * size_t(nrChannels) * 4 * padded + row;
        for (size_t t = 0; t < padded; ++t) {
          std::complex<double> sum;
          for (size_t s = 0; s < nrStations; ++s) {
            const float* x = stations[s] + row;
            sum += std::complex<double>(weights[(size_t(c) * nrStations + s) * nrTabs + tab]) *
                   std::complex<double>(x[t], x[padded + t]);
          }
          out[t] = float(sum.real());
          out[padded + t] = float(sum.imag());
        }
      }
}

std::vector<std::complex<double>> dedisperse(const std::vector<std::complex<double>>& stream,
                                             double subbandWidth, double subbandFrequency,
                                             int nrChannels, double dispersionMeasure,
                                             int latency) {
  const size_t length = stream.size() / 2, n = 2 * length;
  const double width = subbandWidth / nrChannels;
  std::vector<std::complex<double>> spectrum(2 * n), out(stream.size()), twiddle(n);
  for (size_t m = 0; m < n; ++m) twiddle[m] = std::polar(1.0, -2 * kPi * double(m) / double(n));
  for (size_t k = 0; k < n; ++k)
    for (size_t t = 0; t < length; ++t)
      for (int pol = 0; pol < 2; ++pol)
        spectrum[2 * k + pol] += stream[2 * t + pol] * twiddle[k * t % n];
  for (size_t k = 0; k < n; ++k) {
    const double baseband = (k < n / 2 ? double(k) : double(k) - double(n)) * subbandWidth / n;
    const double f = subbandFrequency + baseband;
    const double f0 = subbandFrequency + std::round(baseband / width) * width;
    const double df = f - f0;
    const std::complex<double> h = std::polar(
        1.0, -2 * kPi * kDispersionConstant * dispersionMeasure * df * df / (f0 * f0 * f));
    spectrum[2 * k] *= h;
    spectrum[2 * k + 1] *= h;
  }
  for (size_t t = size_t(latency); t < length; ++t)
    for (int pol = 0; pol < 2; ++pol) {
      std::complex<double> sum;
      const size_t source = t - size_t(latency);
      for (size_t k = 0; k < n; ++k)
        sum += spectrum[2 * k + pol] * std::conj(twiddle[k * source % n]);
      out[2 * t + pol] = sum / double(n);
    }
  return out;
}

void stokes(const std::complex<float>* spectra, StokesKind kind, int nrChannels, int nrSpectra,
            int timeIntegration, std::vector<double>& samples) {
  const int components = nrStokesComponents(kind), outputs = nrSpectra / timeIntegration;
  samples.assign(size_t(components) * size_t(outputs) * size_t(nrChannels), 0.0);
  for (int i = 0; i < outputs; ++i)
    for (int c = 0; c < nrChannels; ++c)
      for (int k = 0; k < timeIntegration; ++k) {
        const size_t at = (size_t(i * timeIntegration + k) * size_t(nrChannels) + size_t(c)) * 2;
        const std::complex<double> x(spectra[at]), y(spectra[at + 1]);
        double v[4];
        if (kind == StokesKind::kXXYY) {
          v[0] = x.real(), v[1] = x.imag(), v[2] = y.real(), v[3] = y.imag();
        } else {
          v[0] = std::norm(x) + std::norm(y);
          v[1] = std::norm(x) - std::norm(y);
          v[2] = 2 * (x * std::conj(y)).real();
          v[3] = 2 * (x * std::conj(y)).imag();
        }
        for (int p = 0; p < components; ++p)
          samples[(size_t(p) * size_t(outputs) + size_t(i)) * size_t(nrChannels) + size_t(c)] +=
              v[p];
      }
}

}  // namespace rtcp::correlator::beamformed::reference
