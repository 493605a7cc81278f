#pragma once
// Helpers of the station-sim tests: temporary directories, small parsets, recordings.
#include <fftw3.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "StationSimulator.h"
#include "rtcp/FftwPlanner.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp::sim::test {

/// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "station-sim-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// A small observation: `stations` with real positions (shipped table), subbands,
/// bit mode; `extra` lines are appended (Sim.* keys, overrides).
inline std::string makeParset(const std::vector<std::string>& stations, const std::string& subbands,
                              int bits, const std::string& extra,
                              const std::string& start = "2026-11-22 20:00:00") {
  std::string text =
      "Observation.ObsID = 7\n"
      "Observation.startTime = '" +
      start +
      "'\n"
      "Observation.stopTime = '2026-11-22 20:10:00'\n"
      "Observation.sampleClock = 200\n"
      "Observation.nrBitsPerSample = " +
      std::to_string(bits) +
      "\n"
      "Observation.antennaSet = LBA_OUTER\n"
      "Observation.bandFilter = LBA_30_90\n"
      "Observation.channelsPerSubband = 64\n"
      "Observation.nrBeams = 1\n"
      "Observation.Beam[0].directionType = J2000\n"
      "Observation.Beam[0].angle1 = 5.2336866848\n"
      "Observation.Beam[0].angle2 = 0.7109425145\n"
      "Observation.Beam[0].subbandList = " +
      subbands +
      "\n"
      "Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]\n";
  std::string list;
  for (size_t i = 0; i < stations.size(); ++i) {
    list += (i ? ", " : "") + stations[i];
    text += "PIC.Core." + stations[i] +
            "LBA.RSP.ports = [udp:127.0.0.1:" + std::to_string(31000 + 10 * i) +
            ", udp:127.0.0.1:" + std::to_string(31001 + 10 * i) + "]\n";
  }
  text += "Observation.VirtualInstrument.stationList = [" + list + "]\n";
  return text + extra;
}

/// An FFTW plan of one size, applied to vectors.
class Fftw {
 public:
  /// sign: FFTW_FORWARD, or FFTW_BACKWARD (unnormalised).
  explicit Fftw(int n, int sign = FFTW_FORWARD) : n_(n), in_(n), out_(n) {
    std::lock_guard lock(fftwPlannerMutex());
    plan_ = fftwf_plan_dft_1d(n, reinterpret_cast<fftwf_complex*>(in_.data()),
                              reinterpret_cast<fftwf_complex*>(out_.data()), sign, FFTW_ESTIMATE);
  }
  ~Fftw() {
    std::lock_guard lock(fftwPlannerMutex());
    fftwf_destroy_plan(plan_);
  }
  Fftw(const Fftw&) = delete;
  Fftw& operator=(const Fftw&) = delete;
  /// Spectrum of x[0, n).
  const std::vector<std::complex<float>>& operator()(const std::complex<float>* x) {
    std::copy(x, x + n_, in_.begin());
    fftwf_execute(plan_);
    return out_;
  }
  /// Baseband frequency of bin k in units of the sample rate.
  double frequency(int k) const { return (k < n_ / 2 ? k : k - n_) / double(n_); }

 private:
  int n_;
  std::vector<std::complex<float>> in_, out_;
  fftwf_plan plan_;
};

inline ObservationSettings settingsFrom(const std::string& parset) {
  return ObservationSettings::fromParset(Parset::fromString(parset, "test.parset"));
}

/// What the simulator generates for one station (its generator stage, no I/O): the
/// samples of every subband as floats, x[subband][pol][time], from sample firstSample.
struct Generated {
  ObservationSettings settings;
  int64_t firstSample = 0;
  std::vector<std::array<std::vector<std::complex<float>>, 2>> x;
  uint64_t clipped = 0;
};

inline Generated generate(const std::string& parset, int station, int64_t nrSamples) {
  Generated g{settingsFrom(parset), 0, {}, 0};
  SimulatorOptions options;
  options.threads = 1;
  options.duration = double(nrSamples + kRspSamplesPerPacket) / g.settings.subbandWidth();
  StationSimulator simulator(g.settings, options);
  g.firstSample = simulator.firstSample();
  g.x.resize(size_t(g.settings.nrSubbands()));
  auto chunk = simulator.makeChunk();
  while (simulator.generateNext(*chunk)) {
    g.clipped += chunk->clipped;
    for (int b = 0; b < g.settings.nrSubbands(); ++b)
      for (int t = 0; t < chunk->nrPackets * kRspSamplesPerPacket; ++t)
        for (int pol = 0; pol < 2; ++pol) {
          const std::complex<int16_t> v = chunk->sample(station, b, t)[pol];
          g.x[size_t(b)][size_t(pol)].emplace_back(float(v.real()), float(v.imag()));
        }
  }
  for (auto& subband : g.x)
    for (auto& pol : subband) {
      if (int64_t(pol.size()) < nrSamples) throw std::logic_error("generated too few samples");
      pol.resize(size_t(nrSamples));
    }
  return g;
}

inline void writeFile(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

/// Every packet of a recording, as bytes.
inline std::vector<std::vector<uint8_t>> readPackets(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<std::vector<uint8_t>> packets;
  for (;;) {
    std::vector<uint8_t> packet(kRspHeaderSize);
    if (!in.read(reinterpret_cast<char*>(packet.data()), kRspHeaderSize)) break;
    const RspHeader h = RspHeader::read(packet.data());
    packet.resize(rspPacketSize(h.bitsPerSample(), h.nrBeamlets, h.nrBlocks));
    if (!in.read(reinterpret_cast<char*>(packet.data() + kRspHeaderSize),
                 packet.size() - kRspHeaderSize))
      throw std::runtime_error(path + ": truncated packet");
    packets.push_back(std::move(packet));
  }
  return packets;
}

/// A recording decoded into samples[beamlet][pol][time] (consecutive packets assumed).
struct Decoded {
  int64_t firstSample = 0;
  int nrBeamlets = 0;
  int64_t nrSamples = 0;
  std::vector<std::complex<float>> samples;
  std::complex<float>* at(int beamlet, int pol) {
    return &samples[(size_t(beamlet) * 2 + pol) * nrSamples];
  }
  const std::complex<float>* at(int beamlet, int pol) const {
    return &samples[(size_t(beamlet) * 2 + pol) * nrSamples];
  }
};

inline Decoded decodeRecording(const std::string& path) {
  const auto packets = readPackets(path);
  if (packets.empty()) throw std::runtime_error(path + ": empty");
  const RspHeader first = RspHeader::read(packets.front().data());
  Decoded d;
  d.firstSample = SampleClock(first.clockMHz()).sampleNumber(first.stamp());
  d.nrBeamlets = first.nrBeamlets;
  d.nrSamples = int64_t(packets.size()) * kRspSamplesPerPacket;
  d.samples.resize(size_t(d.nrBeamlets) * 2 * d.nrSamples);
  std::vector<std::complex<int16_t>> raw(size_t(d.nrBeamlets) * kRspSamplesPerPacket * 2);
  for (size_t p = 0; p < packets.size(); ++p) {
    decodeRspPayload(packets[p].data() + kRspHeaderSize, first.bitsPerSample(), d.nrBeamlets,
                     kRspSamplesPerPacket, raw.data());
    for (int b = 0; b < d.nrBeamlets; ++b)
      for (int t = 0; t < kRspSamplesPerPacket; ++t)
        for (int pol = 0; pol < 2; ++pol) {
          const auto v = raw[(size_t(b) * kRspSamplesPerPacket + t) * 2 + pol];
          d.at(b, pol)[p * kRspSamplesPerPacket + t] = {float(v.real()), float(v.imag())};
        }
  }
  return d;
}

}  // namespace rtcp::sim::test
