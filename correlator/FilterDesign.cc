#include "FilterDesign.h"

#include <cmath>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>

namespace rtcp::correlator {

namespace {

double sinc(double x) {
  if (x == 0) return 1;
  const double px = std::numbers::pi * x;
  return std::sin(px) / px;
}

}  // namespace

std::vector<double> kaiserWindow(int n, double beta) {
  std::vector<double> window(size_t(std::max(n, 0)));
  if (n == 1) window[0] = 1;
  if (n <= 1) return window;
  const double norm = std::cyl_bessel_i(0.0, beta);
  for (int i = 0; i < n; ++i) {
    const double r = 2.0 * i / (n - 1) - 1.0;
    window[size_t(i)] = std::cyl_bessel_i(0.0, beta * std::sqrt(std::max(0.0, 1 - r * r))) / norm;
  }
  return window;
}

std::vector<double> prototypeFilter(int nrChannels, int nrTaps) {
  if (nrChannels < 1 || nrTaps < 1)
    throw std::invalid_argument("prototypeFilter: " + std::to_string(nrChannels) + " channels, " +
                                std::to_string(nrTaps) + " taps");
  const int n = nrChannels * nrTaps;
  std::vector<double> h = kaiserWindow(n);
  const double centre = (n - 1) / 2.0;
  for (int i = 0; i < n; ++i) h[size_t(i)] *= sinc((i - centre) / nrChannels);
  const double sum = std::accumulate(h.begin(), h.end(), 0.0);
  for (double& value : h) value /= sum;
  return h;
}

double filterResponse(const std::vector<double>& prototype, int nrChannels, double nu) {
  // Symmetric filter: H is real up to the linear phase of its centre.
  const double centre = (double(prototype.size()) - 1) / 2.0;
  const double omega = 2 * std::numbers::pi * nu / nrChannels;
  double sum = 0;
  for (size_t i = 0; i < prototype.size(); ++i)
    sum += prototype[i] * std::cos(omega * (double(i) - centre));
  return std::abs(sum);
}

}  // namespace rtcp::correlator
