// rtcp-bench stationsim: how many station-subbands one core generates in real time
// (16-bit data, one source: SignalGenerator with the station filter bank's shape +
// Quantiser + PacketBuilder, no I/O); the same with the source polarised, and as a
// polarised, dispersed pulsar.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "StationSimulator.h"
#include "rtcp/Benchmark.h"
#include "rtcp/Logger.h"
#include "rtcp/Parset.h"

namespace {

/// 8 LOFAR stations (core and remote, positions from the shipped table), 8 subbands;
/// the ports are not used (nothing is sent).
const char* kParset = R"(
Observation.ObsID = 1
Observation.startTime = '2026-11-22 20:00:00'
Observation.stopTime  = '2026-11-22 20:01:00'
Observation.sampleClock = 200
Observation.nrBitsPerSample = 16
Observation.antennaSet = LBA_OUTER
Observation.bandFilter = LBA_30_90
Observation.VirtualInstrument.stationList = [CS001, CS002, CS003, CS004, CS005, CS006, CS007, RS106]
Observation.channelsPerSubband = 64
Observation.nrBeams = 1
Observation.Beam[0].directionType = J2000
Observation.Beam[0].angle1 = 5.2336866848
Observation.Beam[0].angle2 = 0.7109425145
Observation.Beam[0].subbandList = [300..307]
Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]
PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]
PIC.Core.CS002LBA.RSP.ports = [udp:127.0.0.1:10020]
PIC.Core.CS003LBA.RSP.ports = [udp:127.0.0.1:10030]
PIC.Core.CS004LBA.RSP.ports = [udp:127.0.0.1:10040]
PIC.Core.CS005LBA.RSP.ports = [udp:127.0.0.1:10050]
PIC.Core.CS006LBA.RSP.ports = [udp:127.0.0.1:10060]
PIC.Core.CS007LBA.RSP.ports = [udp:127.0.0.1:10070]
PIC.Core.RS106LBA.RSP.ports = [udp:127.0.0.1:10080]
Sim.nrSources = 1
Sim.Source[0].angle1 = 5.2569
Sim.Source[0].angle2 = 0.7109425145
Sim.Source[0].flux = 4.0
Sim.noisePower = 1.0
Sim.seed = 1
)";

/// The benchmark's source made polarised, or a polarised pulsar like B0809+74 (DM 5.75:
/// its subbands' residual dispersion needs chunks of 131072 points).
const char* kPolarised = R"(
Sim.Source[0].Q = 0.3
Sim.Source[0].V = -0.2
)";
const char* kPulsar = R"(
Sim.Source[0].Q = 0.3
Sim.Source[0].V = -0.2
Sim.Source[0].pulsar.period = 1.292241
Sim.Source[0].pulsar.width = 0.03
Sim.Source[0].pulsar.dispersionMeasure = 5.75
)";

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

/// Simulated data seconds per wall-clock second, and per CPU second of the generating
/// thread (less sensitive to a loaded machine), of the generator stage on one core.
struct Speed {
  double wall = 0, cpu = 0;
};

Speed realtimeFactor(const std::string& parset, double seconds) {
  const rtcp::ObservationSettings settings = rtcp::ObservationSettings::fromParset(
      rtcp::Parset::fromString(parset, "stationsim-benchmark"));
  rtcp::sim::SimulatorOptions options;
  options.threads = 1;
  options.duration = seconds;
  rtcp::sim::StationSimulator simulator(settings, options);
  auto chunk = simulator.makeChunk();
  simulator.generateNext(*chunk);  // warm-up: tables, FFTW wisdom, page faults
  int64_t samples = 0;
  const auto start = std::chrono::steady_clock::now();
  const double cpuStart = threadCpuSeconds();
  while (simulator.generateNext(*chunk)) samples += int64_t(chunk->nrPackets) * 16;
  const double cpu = threadCpuSeconds() - cpuStart;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double dataSeconds = samples / settings.subbandWidth();
  return {dataSeconds / elapsed, dataSeconds / cpu};
}

int run(int argc, char** argv) {
  if (argc > 0 && (std::string(argv[0]) == "--help" || std::string(argv[0]) == "-h")) {
    std::printf("usage: rtcp-bench stationsim [SECONDS]: seconds of data per case (default 2)\n");
    return 0;
  }
  const double seconds = argc > 0 ? std::atof(argv[0]) : 2.0;
  rtcp::Logger::setLevel(rtcp::LogLevel::kWarning);
  const double stationSubbands = 8 * 8;
  const Speed steady = realtimeFactor(kParset, seconds);
  const Speed polarised = realtimeFactor(std::string(kParset) + kPolarised, seconds);
  // The pulsar's chunks hold 0.53 s: at least four of them after the warm-up.
  const Speed pulsar = realtimeFactor(std::string(kParset) + kPulsar, std::max(seconds, 2.7));
  rtcp::printFigure("stationsim.station_subbands", stationSubbands);
  rtcp::printFigure("stationsim.realtime_factor_one_core", steady.wall);
  rtcp::printFigure("stationsim.station_subbands_per_core_realtime", stationSubbands * steady.wall);
  rtcp::printFigure("stationsim.station_subbands_per_cpu_second", stationSubbands * steady.cpu);
  rtcp::printFigure("stationsim.polarised.station_subbands_per_cpu_second",
                    stationSubbands * polarised.cpu);
  rtcp::printFigure("stationsim.pulsar.station_subbands_per_cpu_second",
                    stationSubbands * pulsar.cpu);
  // CPU time per simulated sample against the steady, unpolarised source's, same run.
  rtcp::printFigure("stationsim.polarised.cpu_ratio", steady.cpu / polarised.cpu);
  rtcp::printFigure("stationsim.pulsar.cpu_ratio", steady.cpu / pulsar.cpu);
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK("stationsim",
                        "station-subbands one core simulates in real time (16 bit, one source, "
                        "subbands shaped by the station filter bank), and with the source "
                        "polarised, and a polarised dispersed pulsar [SECONDS]",
                        run);
