#pragma once
/// \file StationSimulator.h
/// The station simulator's pipeline: chunks of simulated time flow through a pool from
/// the generators (per subband in parallel: SignalGenerator, shaped by the station's
/// filter bank -> Quantiser; then per stream: PacketBuilder) to the PacketSender (UDP in
/// real time, or recordings).

#include <complex>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "Fft.h"
#include "PacketBuilder.h"
#include "PacketSender.h"
#include "Quantiser.h"
#include "SignalGenerator.h"
#include "SkyModel.h"
#include "StreamLayout.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::sim {

struct SimulatorOptions {
  std::string recordDirectory;  ///< "": stream over UDP to the parset's RSP.ports
  double duration = -1;         ///< seconds of data; < 0: the parset's start..stop
  bool startNow = false;        ///< start at the next even second instead of startTime
  int threads = 2;              ///< generator threads
  std::string dropLogPath;      ///< default with recordDirectory: DIR/dropped-packets.txt
};

struct SimulationSummary {
  std::vector<PacketSender::StreamTotals> streams;
  uint64_t packets = 0, bytes = 0, dropped = 0, clipped = 0;
  double seconds = 0;      ///< simulated time
  double maxLateness = 0;  ///< worst lag behind the wall clock (UDP), seconds
  std::string dropLogPath;
};

class StationSimulator {
 public:
  StationSimulator(const ObservationSettings& settings, SimulatorOptions options);
  ~StationSimulator();

  /// Generates and sends everything; throws on an I/O error.
  SimulationSummary run();

  int64_t firstSample() const { return firstSample_; }
  int64_t nrPackets() const { return nrPackets_; }  ///< per stream
  const ChunkGeometry& geometry() const { return geometry_; }
  const std::vector<StreamLayout>& streams() const { return streams_; }

  /// Fills the next chunk (samples and packets) without sending it: the generator stage
  /// alone, for benchmarks. Returns false after the last chunk.
  bool generateNext(SampleChunk& chunk);
  std::unique_ptr<SampleChunk> makeChunk() const;

 private:
  struct SubbandWork;
  void parallelFor(int count, const std::function<void(int)>& body);
  std::vector<std::string> outputDescriptors() const;
  void logSetup() const;

  ObservationSettings settings_;
  SimulatorOptions options_;
  SkyModel sky_;
  ChunkGeometry geometry_;
  std::unique_ptr<Fft> forward_, backward_;
  std::unique_ptr<SubbandResponse> response_;  ///< the station filter on the chunk grid
  std::vector<StreamLayout> streams_;
  std::vector<PacketBuilder> builders_;  ///< [stream]
  std::vector<std::unique_ptr<SubbandWork>> subbands_;
  int64_t firstSample_ = 0;
  int64_t nrPackets_ = 0;
  int64_t nextChunk_ = 0;
};

}  // namespace rtcp::sim
