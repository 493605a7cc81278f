#include "StokesIntegrator.h"

#include <stdexcept>
#include <string>

namespace rtcp::correlator::beamformed {

StokesIntegrator::StokesIntegrator(StokesKind kind, int nrChannels, int nrSpectra,
                                   int timeIntegration)
    : kind_(kind),
      nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      timeIntegration_(timeIntegration) {
  if (nrChannels < 1 || timeIntegration < 1 || nrSpectra % timeIntegration != 0)
    throw std::invalid_argument("StokesIntegrator: " + std::to_string(nrSpectra) + " spectra of " +
                                std::to_string(nrChannels) + " channels, time integration " +
                                std::to_string(timeIntegration) + " (must divide the spectra)");
  if (kind == StokesKind::kXXYY && timeIntegration != 1)
    throw std::invalid_argument(
        "StokesIntegrator: XXYY (complex voltages) cannot be integrated "
        "in time (timeIntegrationFactor " +
        std::to_string(timeIntegration) + ")");
}

BeamFormedData StokesIntegrator::makeOutput() const {
  return BeamFormedData(kind_, nrChannels_, nrOutputSamples());
}

void StokesIntegrator::detect(const std::complex<float>* spectra, bool add,
                              BeamFormedData& output) const {
  if (output.kind != kind_ || output.nrChannels != nrChannels_ ||
      output.nrSamples != nrOutputSamples())
    throw std::invalid_argument(
        "StokesIntegrator: an output of " + std::to_string(output.nrSamples) + " x " +
        std::to_string(output.nrChannels) + ", expected " + std::to_string(nrOutputSamples()) +
        " x " + std::to_string(nrChannels_));
  const int components = nrStokesComponents(kind_);
  for (int i = 0; i < nrOutputSamples(); ++i)
    for (int c = 0; c < nrChannels_; ++c) {
      float sums[4] = {};
      for (int k = 0; k < timeIntegration_; ++k) {
        const std::complex<float>* xy =
            spectra + (size_t(i * timeIntegration_ + k) * size_t(nrChannels_) + size_t(c)) * 2;
        const std::complex<float> x = xy[0], y = xy[1];
        const float xx = std::norm(x), yy = std::norm(y);
        if (kind_ == StokesKind::kXXYY) {
          sums[0] += x.real(), sums[1] += x.imag(), sums[2] += y.real(), sums[3] += y.imag();
          continue;
        }
        sums[0] += xx + yy;
        if (kind_ == StokesKind::kIQUV) {
          const std::complex<float> xyConj = x * std::conj(y);
          sums[1] += xx - yy;
          sums[2] += 2 * xyConj.real();
          sums[3] += 2 * xyConj.imag();
        }
      }
      for (int component = 0; component < components; ++component) {
        float& out = output.sample(component, i, c);
        out = add ? out + sums[component] : sums[component];
      }
    }
}

void StokesIntegrator::validFraction(const float* valid, BeamFormedData& output) const {
  for (int i = 0; i < nrOutputSamples(); ++i)
    for (int c = 0; c < nrChannels_; ++c) {
      double sum = 0;
      for (int k = 0; k < timeIntegration_; ++k)
        sum += valid[size_t(i * timeIntegration_ + k) * size_t(nrChannels_) + size_t(c)];
      output.validFraction[size_t(i) * size_t(nrChannels_) + size_t(c)] =
          float(sum / timeIntegration_);
    }
}

}  // namespace rtcp::correlator::beamformed
