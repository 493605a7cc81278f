// beamformed-pulsar-writer PARSET DIR: writes every beam-formed file of PARSET into DIR
// through storage-sink's BeamFormedWriter, holding what a TAB would see of the parset's
// simulated pulsar Sim.Source[0].pulsar.*, noise-free and exactly placed in time: Stokes I
// (every component, in fact) of output sample i of block b, channel c of subband s is
//   1 + 10 exp(-4 ln 2 (Δ / width)^2),  Δ = t - epoch - k DM / f^2 wrapped into a period,
// t the middle of the output sample as the beam former's timing defines it
// (rtcp/BeamFormedTiming.h: block start + i × samples per output sample − the TAB's delay),
// f the channel's centre. Block 1 of the second subband of each SAP is lost (nothing sent:
// zeros of weight 0); every other value has valid fraction 1 except that channel 1 of each
// subband has 0.5 with twice the value (its mean over valid samples stays the same).
// Prints one line per file: "FILE path rows".
#include <cmath>
#include <iostream>
#include <numbers>

#include "BeamFormedWriter.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/SampleTime.h"

using namespace rtcp;

namespace {

constexpr int64_t kLostBlock = 1;

/// The pulse's power at Unix time t and frequency f (Hz).
double pulse(const SimPulsar& pulsar, double t, double f) {
  const double epoch = (pulsar.epochMjd - 40587.0) * 86400.0;
  double delta = t - epoch - kDispersionConstant * pulsar.dispersionMeasure / (f * f);
  delta -= std::round(delta / pulsar.period) * pulsar.period;
  return 1 + 10 * std::exp(-4 * std::numbers::ln2 * delta * delta / (pulsar.width * pulsar.width));
}

BeamFormedData dataOf(const ObservationSettings& s, int sap, int tab, int subband, int64_t block) {
  const TabSettings& t = s.beamFormed.saps[size_t(sap)].tabs[size_t(tab)];
  const StokesSettings& st = s.beamFormed.stokes(t);
  const int samples = st.outputSamplesPerBlock(s.samplesPerBlock());
  BeamFormedData data(st.kind, st.nrChannels, samples);
  data.sap = sap, data.tab = tab, data.subband = subband, data.block = block;
  const int64_t delay = beamFormedDelay(s, t);
  const SimPulsar& pulsar = s.sim.sources.at(0).pulsar;
  const double fs = s.subbandWidth(), centre = s.subbands[size_t(subband)].frequency;
  const SampleClock clock(s.clockMHz);
  for (int i = 0; i < samples; ++i) {
    const double middle =
        double(i * st.inputSamplesPerSample() - delay) + double(st.inputSamplesPerSample()) / 2;
    const double time = clock.unixTime(s.blockStartSample(block)) + middle / fs;
    for (int c = 0; c < st.nrChannels; ++c) {
      const double f = st.nrChannels == 1 ? centre : centre - fs / 2 + c * fs / st.nrChannels;
      const float valid = c == 1 ? 0.5f : 1.0f;
      const float value = float(pulse(pulsar, time, f)) * valid;
      for (int k = 0; k < data.nrComponents(); ++k) data.sample(k, i, c) = value;
      data.validFraction[size_t(i) * size_t(st.nrChannels) + size_t(c)] = valid;
    }
  }
  return data;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: beamformed-pulsar-writer PARSET DIR\n";
    return 2;
  }
  try {
    const ObservationSettings s = ObservationSettings::fromFile(argv[1]);
    if (s.sim.sources.empty() || s.sim.sources[0].pulsar.period <= 0)
      throw std::invalid_argument(std::string(argv[1]) + ": Sim.Source[0] is no pulsar");
    std::vector<storage::BeamFormedWriter::Target> targets;
    for (size_t f = 0; f < s.beamFormed.files.size(); ++f) targets.push_back({int(f), argv[2]});
    storage::BeamFormedWriter writer(s, targets);
    for (int64_t block = 0; block < s.nrBlocks(); ++block)
      for (size_t sap = 0; sap < s.beamFormed.saps.size(); ++sap) {
        const std::vector<int> subbands = s.subbandsOfBeam(int(sap));
        for (int sb : subbands) {
          if (block == kLostBlock && subbands.size() > 1 && sb == subbands[1]) continue;
          for (size_t tab = 0; tab < s.beamFormed.saps[sap].tabs.size(); ++tab)
            writer.accept(dataOf(s, int(sap), int(tab), sb, block));
        }
      }
    writer.finish();
    for (const storage::BeamFormedFileReport& r : writer.reports())
      std::cout << "FILE " << r.path << " " << r.rows << "\n";
  } catch (const std::exception& e) {
    std::cerr << "beamformed-pulsar-writer: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
