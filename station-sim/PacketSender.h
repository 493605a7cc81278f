#pragma once
/// \file PacketSender.h
/// Sends each chunk's packets to the streams' outputs in time order, a group of a stream
/// at a time (as many as one segmented send holds, datagramsPerSegmentedSend: 8 full
/// packets, 0.66 ms at 200 MHz, up to 64 small ones, 5.2 ms): a send per packet cost a
/// paced station-sim most of its CPU, in the kernel. Over UDP paced against the wall
/// clock by the timestamp of the last packet of each group, or into recording files (one per
/// stream, packets concatenated exactly as on the wire) as fast as they come. Drops
/// packets at random (Sim.packetLossProbability) and writes each drop to a log.

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "Pacer.h"
#include "Random.h"
#include "SampleChunk.h"
#include "StreamLayout.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::sim {

class PacketSender {
 public:
  struct Options {
    bool paced = true;           ///< real time; false: as fast as possible
    double lossProbability = 0;  ///< chance that a packet is dropped
    uint64_t seed = 1;           ///< seeds the drops (per stream)
    std::string dropLogPath;     ///< one line per drop: station port timestamp sequence
  };
  struct StreamTotals {
    std::string output;  ///< descriptor
    uint64_t packets = 0, bytes = 0, dropped = 0;
  };

  /// outputs[stream]: descriptors (udp:HOST:PORT or file:PATH), opened here; throws
  /// StreamError naming the one that fails.
  PacketSender(std::vector<StreamLayout> streams, const std::vector<std::string>& outputs,
               int clockMHz, Options options);
  ~PacketSender();

  /// Sends packets [0, chunk.nrPackets) of every stream, interleaved by time.
  void send(const SampleChunk& chunk);
  /// Flushes and closes the outputs and the drop log.
  void finish();

  const std::vector<StreamTotals>& totals() const { return totals_; }
  double maxLateness() const { return pacer_.maxLateness(); }

 private:
  /// Sends packets [first, end) of a stream, less those the loss model drops.
  void sendGroup(const SampleChunk& chunk, int stream, int first, int end);
  void drop(int stream, const uint8_t* packet);

  std::vector<StreamLayout> streams_;
  std::vector<std::unique_ptr<Stream>> outputs_;
  std::vector<StreamTotals> totals_;
  std::vector<Xoshiro256> lossRandom_;  ///< [stream]
  SampleClock clock_;
  Options options_;
  Pacer pacer_;
  std::ofstream dropLog_;
};

}  // namespace rtcp::sim
