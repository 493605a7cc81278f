#include "SignalGenerator.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "PhaseRamp.h"

namespace rtcp::sim {
namespace {

constexpr uint64_t kSkySeed = 1, kNoiseSeed = 2;

}  // namespace

ChunkGeometry ChunkGeometry::forMaxDelay(double maxDelaySamples) {
  ChunkGeometry g;
  const int needed = int(std::ceil(maxDelaySamples)) + 1 + kInterpolationMargin;
  g.margin = (needed + 7) / 8 * 8;
  g.fftSize = 8192;
  while (g.fftSize < 8 * g.margin) g.fftSize *= 2;
  return g;
}

SignalGenerator::SignalGenerator(const SkyModel& sky, const ChunkGeometry& geometry,
                                 const Fft& forward, const Fft& backward,
                                 const SubbandResponse& response, Subband subband,
                                 const std::vector<int>& stationIds, uint64_t seed,
                                 int64_t firstSample)
    : sky_(sky),
      geometry_(geometry),
      forward_(forward),
      backward_(backward),
      response_(response),
      subband_(subband),
      nextSample_(firstSample),
      frequencyRamp_(geometry.fftSize),
      timeRamp_(geometry.nrSamples()),
      spectrum_(geometry.fftSize),
      shifted_(geometry.fftSize),
      white_(size_t(geometry.nrSamples() + ReceiverNoise::kHistory)) {
  if (forward.size() != geometry.fftSize || backward.size() != geometry.fftSize ||
      response.fftSize() != geometry.fftSize)
    throw std::invalid_argument("SignalGenerator: FFT size differs from the chunk geometry");
  if (sky.toneFrequency() != 0)
    toneGain_ =
        SubbandResponse::toneGain((sky.toneFrequency() - subband.frequency) / subband.sampleRate);
  for (int k = 0; k < sky.nrSources(); ++k)
    for (int m = -1; m <= 1; ++m)
      for (int p = 0; p < kPolarisations; ++p) {
        const uint64_t band = uint64_t(subband.number + m);  // the same signal as that subband's
        skyRandom_.emplace_back(deriveSeed(seed, {kSkySeed, uint64_t(k), band, uint64_t(p)}));
        skySignal_.emplace_back(geometry.fftSize);
        skySpectrum_.emplace_back(geometry.fftSize);
      }
  for (int id : stationIds)
    for (int p = 0; p < kPolarisations; ++p)
      noise_.emplace_back(
          deriveSeed(seed, {kNoiseSeed, uint64_t(id), uint64_t(subband.number), uint64_t(p)}),
          sky.noisePower(), response.noiseTaps());
}

double SignalGenerator::powerPerPolarisation() const {
  double continuum = sky_.noisePower();
  for (const SimSource& source : sky_.sources()) continuum += source.flux / 2;
  const double tone = sky_.toneAmplitude() * toneGain_;
  return continuum * response_.meanPower() + tone * tone;
}

void SignalGenerator::prepare(const ChunkDelays& delays) {
  if (delays.firstSample != nextSample_ || delays.nrSamples != geometry_.nrSamples())
    throw std::logic_error("SignalGenerator: chunks must follow each other");
  nextSample_ += geometry_.nrSamples();
  const GaussianTable& gauss = GaussianTable::instance();
  const int n = geometry_.nrSamples(), overlap = 2 * geometry_.margin;
  for (size_t i = 0; i < skySignal_.size(); ++i) {
    const int k = int(i) / (SubbandResponse::kNrBands * kPolarisations);
    const int m = int(i) / kPolarisations % SubbandResponse::kNrBands - 1;
    const double power = sky_.sources()[size_t(k)].flux / 2;
    std::complex<float>* e = skySignal_[i].data();  // e[c0 - margin, c0 + n + margin)
    if (!primed_) {
      gauss.fillNoise(skyRandom_[i], power, e, geometry_.fftSize);
    } else {
      std::memmove(e, e + n, overlap * sizeof *e);
      gauss.fillNoise(skyRandom_[i], power, e + overlap, n);
    }
    forward_.execute(e, skySpectrum_[i].data());
    multiplyReal(skySpectrum_[i].data(), response_.weights(m), skySpectrum_[i].data(),
                 size_t(geometry_.fftSize));
  }
  primed_ = true;
}

void SignalGenerator::station(int s, const ChunkDelays& delays, std::complex<float>* out) {
  const int n = geometry_.nrSamples(), size = geometry_.fftSize, half = size / 2;
  const double f = subband_.frequency, fs = subband_.sampleRate;
  std::complex<float>* pol[kPolarisations] = {out, out + n};
  for (int p = 0; p < kPolarisations; ++p)
    noise_[size_t(s * kPolarisations + p)].generate(white_.data(), pol[p], size_t(n));

  const int first = response_.firstAliasBin(), last = response_.lastAliasBin();
  for (int k = 0; k < sky_.nrSources(); ++k) {
    const double gain = subband_.sourceGains.empty() ? 1.0 : subband_.sourceGains[size_t(k)];
    if (gain == 0) continue;
    std::complex<float> below, above;
    for (int p = 0; p < kPolarisations; ++p) {
      // The polarisation's own signal path: a delay and a phase on top of the geometry.
      const double offset = delays.pathDelay[s][size_t(p)], phase = delays.pathPhase[s][size_t(p)];
      const bool sameAsX =
          p == 1 && offset == delays.pathDelay[s][0] && phase == delays.pathPhase[s][0];
      if (!sameAsX) {
        const double t0 = delays.start[k][s] + offset, t1 = delays.end[k][s] + offset;
        const double mid = (t0 + t1) / 2, shift = mid * fs;  // samples by which e is advanced
        const double turns = f * mid + phase / (2 * M_PI);
        // gain exp(2 pi i (f + nu_j) tau_mid + i phase) / size, nu_j = j fs / size (signed bin j).
        fillPhasorRamp(frequencyRamp_.data(), half, turns, shift / size, gain / size);
        fillPhasorRamp(frequencyRamp_.data() + half, half, turns - shift / 2, shift / size,
                       gain / size);
        // Band m lies m fs higher in the sky: exp(2 pi i m fs tau_mid) more.
        below = std::polar(1.0f, float(-2 * M_PI * (shift - std::floor(shift))));
        above = std::conj(below);
        // exp(2 pi i f (tau(t) - tau_mid)), tau linear across the chunk.
        fillPhasorRamp(timeRamp_.data(), n, -f * (t1 - t0) / 2, f * (t1 - t0) / n);
      }
      multiply(skySpectrum(k, 0, p).data(), frequencyRamp_.data(), spectrum_.data(), size_t(size));
      multiplyBands(frequencyRamp_.data() + first, skySpectrum(k, 0, p).data() + first,
                    skySpectrum(k, -1, p).data() + first, below,
                    skySpectrum(k, 1, p).data() + first, above, spectrum_.data() + first,
                    size_t(last - first));
      backward_.execute(spectrum_.data(), shifted_.data());
      multiplyAdd(shifted_.data() + geometry_.margin, timeRamp_.data(), pol[p], n);
    }
  }
  if (toneGain_ != 0) addTone(s, delays, out);
}

void SignalGenerator::addTone(int s, const ChunkDelays& delays, std::complex<float>* out) {
  // A exp(2 pi i (f_tone - f) t) exp(2 pi i f_tone tau(t)), t = sample / fs.
  const int n = geometry_.nrSamples();
  const double ft = sky_.toneFrequency(), fs = subband_.sampleRate;
  const long double cycles = (long double)(ft - subband_.frequency) / fs * delays.firstSample;
  const double startTurns = double(cycles - floorl(cycles));
  const double t0 = delays.toneStart[s], t1 = delays.toneEnd[s];
  fillPhasorRamp(timeRamp_.data(), n, startTurns + ft * t0,
                 (ft - subband_.frequency) / fs + ft * (t1 - t0) / n,
                 sky_.toneAmplitude() * toneGain_);
  add(timeRamp_.data(), out, n);
  add(timeRamp_.data(), out + n, n);
}

}  // namespace rtcp::sim
