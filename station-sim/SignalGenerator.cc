#include "SignalGenerator.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include "PhaseRamp.h"

namespace rtcp::sim {
namespace {

constexpr uint64_t kSkySeed = 1, kNoiseSeed = 2, kRfiSeed = 3;

/// [station]: 1 for the stations listed, all when the list is empty.
std::vector<uint8_t> stationsOf(const std::vector<int>& listed, size_t nrStations,
                                bool allWhenEmpty) {
  std::vector<uint8_t> at(nrStations, allWhenEmpty && listed.empty());
  for (int s : listed)
    if (size_t(s) < nrStations) at[size_t(s)] = 1;
  return at;
}

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
      envelope_(size_t(geometry.fftSize)),
      gated_(size_t(geometry.fftSize)),
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
  for (const SimSource& source : sky.sources()) forms_.push_back(formOf(source));
  const SimRfi& rfi = sky.rfi();
  if (rfi.toneFrequency != 0 && rfi.toneAmplitude != 0)
    rfiToneGain_ =
        SubbandResponse::toneGain((rfi.toneFrequency - subband.frequency) / subband.sampleRate);
  rfiTone_ = stationsOf(rfi.toneStations, stationIds.size(), true);
  rfiBursts_ = stationsOf(rfi.burstStations, stationIds.size(), true);
  silent_ = stationsOf(rfi.silentStations, stationIds.size(), false);
  drift_ = stationsOf(rfi.driftStations, stationIds.size(), true);
  noiseOnly_ = stationsOf(rfi.noiseOnlyStations, stationIds.size(), false);
  burst_ = AlignedBuffer<std::complex<float>>(size_t(geometry.nrSamples()));
  for (int id : stationIds)
    for (int p = 0; p < kPolarisations; ++p)
      rfiRandom_.emplace_back(
          deriveSeed(seed, {kRfiSeed, uint64_t(id), uint64_t(subband.number), uint64_t(p)}));
  // A noise-only station's noise has the power of the sky and noise it lacks: its sources'
  // bands pass the same filter response as the noise (aliased power P).
  double skyAndNoise = sky.noisePower();
  for (size_t k = 0; k < sky.sources().size(); ++k) {
    const double gain = subband.sourceGains.empty() ? 1.0 : subband.sourceGains[k];
    skyAndNoise += sky.sources()[k].flux / 2 * gain * gain;
  }
  for (size_t s = 0; s < stationIds.size(); ++s)
    for (int p = 0; p < kPolarisations; ++p)
      noise_.emplace_back(deriveSeed(seed, {kNoiseSeed, uint64_t(stationIds[s]),
                                            uint64_t(subband.number), uint64_t(p)}),
                          noiseOnly_[s] ? skyAndNoise : sky.noisePower(), response.noiseTaps());
}

SignalGenerator::SourceForm SignalGenerator::formOf(const SimSource& source) const {
  SourceForm form{PolarisationMix::of(source), {}, {}};
  const SimPulsar& pulsar = source.pulsar;
  if (pulsar.period <= 0) return form;
  const double fs = subband_.sampleRate, dm = pulsar.dispersionMeasure;
  const int size = geometry_.fftSize;
  for (int m = -1; m <= 1; ++m) {
    const double centre = subband_.frequency + m * fs;  // band m's own centre
    form.pulses.emplace_back(pulsar, fs, dispersionDelay(dm, centre));
    if (dm == 0) continue;
    AlignedBuffer<std::complex<float>> response(static_cast<size_t>(size));
    const float* weights = response_.weights(m);
    for (int i = 0; i < size; ++i) {
      const double offset = double(i < size / 2 ? i : i - size) / size * fs;
      const double turns = residualChirpTurns(dm, centre, offset);
      const double angle = 2 * M_PI * (turns - std::floor(turns));
      response[size_t(i)] = std::complex<float>(float(weights[i] * std::cos(angle)),
                                                float(weights[i] * std::sin(angle)));
    }
    form.dispersedResponse.push_back(std::move(response));
  }
  return form;
}

double SignalGenerator::powerPerPolarisation() const {
  double continuum = sky_.noisePower();
  for (size_t k = 0; k < forms_.size(); ++k)
    continuum += sky_.sources()[k].flux / 2 * forms_[k].mix.peakPowerFactor();
  const double tone = sky_.toneAmplitude() * toneGain_;
  return continuum * response_.meanPower() + tone * tone;
}

void SignalGenerator::prepare(const ChunkDelays& delays) {
  if (delays.firstSample != nextSample_ || delays.nrSamples != geometry_.nrSamples())
    throw std::logic_error("SignalGenerator: chunks must follow each other");
  nextSample_ += geometry_.nrSamples();
  const int64_t firstSample = delays.firstSample - geometry_.margin;  // of the FFT window
  for (int k = 0; k < sky_.nrSources(); ++k)
    for (int m = -1; m <= 1; ++m) {
      const SourceForm& form = forms_[size_t(k)];
      if (!form.pulses.empty())
        form.pulses[size_t(m + 1)].fill(firstSample, envelope_.data(), size_t(geometry_.fftSize));
      for (int p = 0; p < kPolarisations; ++p) transformSky(k, m, p);
      if (!form.mix.unpolarised())
        form.mix.apply(skySpectrum(k, m, 0).data(), skySpectrum(k, m, 1).data(),
                       size_t(geometry_.fftSize));
    }
  primed_ = true;
}

void SignalGenerator::transformSky(int k, int m, int p) {
  const GaussianTable& gauss = GaussianTable::instance();
  const int n = geometry_.nrSamples(), overlap = 2 * geometry_.margin, size = geometry_.fftSize;
  const size_t i = size_t((k * SubbandResponse::kNrBands + m + 1) * kPolarisations + p);
  const double power = sky_.sources()[size_t(k)].flux / 2;
  std::complex<float>* e = skySignal_[i].data();  // e[c0 - margin, c0 + n + margin)
  if (!primed_) {
    gauss.fillNoise(skyRandom_[i], power, e, size_t(size));
  } else {
    std::memmove(e, e + n, overlap * sizeof *e);
    gauss.fillNoise(skyRandom_[i], power, e + overlap, size_t(n));
  }
  const SourceForm& form = forms_[size_t(k)];
  const std::complex<float>* signal = e;
  if (!form.pulses.empty()) {  // the pulses gate this chunk's copy of the continuous signal
    multiplyReal(e, envelope_.data(), gated_.data(), size_t(size));
    signal = gated_.data();
  }
  std::complex<float>* spectrum = skySpectrum(k, m, p).data();
  if (form.dispersedResponse.empty()) {
    forward_.execute(signal, spectrum);
    multiplyReal(spectrum, response_.weights(m), spectrum, size_t(size));
  } else {
    forward_.execute(signal, spectrum_.data());
    multiply(spectrum_.data(), form.dispersedResponse[size_t(m + 1)].data(), spectrum,
             size_t(size));
  }
}

void SignalGenerator::station(int s, const ChunkDelays& delays, std::complex<float>* out) {
  const int n = geometry_.nrSamples(), size = geometry_.fftSize, half = size / 2;
  const double f = subband_.frequency, fs = subband_.sampleRate;
  std::complex<float>* pol[kPolarisations] = {out, out + n};
  for (int p = 0; p < kPolarisations; ++p)
    noise_[size_t(s * kPolarisations + p)].generate(white_.data(), pol[p], size_t(n));

  const int first = response_.firstAliasBin(), last = response_.lastAliasBin();
  for (int k = 0; k < sky_.nrSources() && !noiseOnly_[size_t(s)]; ++k) {
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
  if (toneGain_ != 0 && !noiseOnly_[size_t(s)]) addTone(s, delays, out);
  addInterference(s, delays.firstSample, out);
}

void SignalGenerator::addInterference(int s, int64_t firstSample, std::complex<float>* out) {
  const SimRfi& rfi = sky_.rfi();
  const size_t n = size_t(geometry_.nrSamples());
  const double fs = subband_.sampleRate;
  if (silent_[size_t(s)]) std::fill(out, out + 2 * n, std::complex<float>(0, 0));
  if (rfiToneGain_ != 0 && rfiTone_[size_t(s)]) {
    const double step = (rfi.toneFrequency - subband_.frequency) / fs;
    const long double cycles = (long double)step * firstSample;
    const double start = double(cycles - floorl(cycles)) + 0.137 * s;  // a phase of its own
    fillPhasorRamp(timeRamp_.data(), n, start, step, rfi.toneAmplitude * rfiToneGain_);
    add(timeRamp_.data(), out, n);
    add(timeRamp_.data(), out + n, n);
  }
  if (rfi.driftFrequency > 0 && rfi.driftAmplitude != 0 && drift_[size_t(s)])
    addDrift(s, firstSample, out);
  if (!(rfi.burstPeriod > 0 && rfi.burstPower > 0 && rfi.burstDuration > 0) ||
      !rfiBursts_[size_t(s)])
    return;
  auto bursting = [&](size_t i) {
    return std::fmod(double(firstSample + int64_t(i)) / fs, rfi.burstPeriod) < rfi.burstDuration;
  };
  const GaussianTable& gauss = GaussianTable::instance();
  for (size_t i = 0; i < n;) {
    if (!bursting(i)) {
      ++i;
      continue;
    }
    size_t end = i;
    while (end < n && bursting(end)) ++end;
    for (int p = 0; p < kPolarisations; ++p) {
      gauss.fillNoise(rfiRandom_[size_t(s * kPolarisations + p)], rfi.burstPower, burst_.data(),
                      end - i);
      add(burst_.data(), out + size_t(p) * n + i, end - i);
    }
    i = end;
  }
}

void SignalGenerator::addDrift(int s, int64_t firstSample, std::complex<float>* out) {
  // f(τ) = f0 + r τ, τ = t mod period: phase 2π ((f0 - f_b) τ + r τ² / 2) from the sweep's start.
  const SimRfi& rfi = sky_.rfi();
  const size_t n = size_t(geometry_.nrSamples());
  const double fs = subband_.sampleRate, offset = rfi.driftFrequency - subband_.frequency;
  // τ of the chunk's first sample in long double (sample numbers of 10^14: a double's time
  // would be 0.2 µs coarse, 0.02 turns at 100 kHz), then sample by sample.
  const long double first = fmodl((long double)firstSample / fs, (long double)rfi.driftPeriod);
  const double middle = std::fmod(double(first) + 0.5 * double(n) / fs, rfi.driftPeriod);
  const double gain =
      rfi.driftAmplitude * SubbandResponse::toneGain((offset + rfi.driftRate * middle) / fs);
  if (gain == 0) return;
  const double phase0 = 0.137 * s;  // a phase of each station's own
  double tau = double(first);
  for (size_t i = 0; i < n; ++i, tau += 1 / fs) {
    if (tau >= rfi.driftPeriod) tau -= rfi.driftPeriod;
    const double turns = offset * tau + 0.5 * rfi.driftRate * tau * tau + phase0;
    const std::complex<float> v =
        std::polar(float(gain), float(2 * M_PI * (turns - std::floor(turns))));
    out[i] += v;
    out[n + i] += v;
  }
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
