#pragma once
/// \file RecordingReplayer.h
/// Sends recordings (files of RSP packets as they came off the wire) over UDP at the
/// real-time pace of the packets' own timestamps, all recordings merged in time order,
/// a group of a recording's packets at a time (as many as one segmented send holds, one
/// send each where the kernel segments them, Stream::writeEach), as station-sim sends
/// what it simulates.
/// Optionally re-stamps them to start now: timestamps shift by a whole even number of
/// seconds, which keeps every packet's sequence number valid (at 200 MHz even and odd
/// seconds hold different numbers of samples; a two-second shift preserves the parity).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rtcp::sim {

class RecordingReplayer {
 public:
  struct Input {
    std::string recording;    ///< path of the recording
    std::string destination;  ///< where to send it, e.g. udp:127.0.0.1:10010
  };
  struct Options {
    bool restamp = false;              ///< shift timestamps by whole even seconds to start now
    std::optional<int64_t> restampBy;  ///< shift timestamps by these (even) seconds
    double duration = -1;              ///< seconds of data to send; < 0: everything
  };
  struct Totals {
    uint64_t packets = 0, bytes = 0;
    int64_t timestampShift = 0;  ///< seconds added to every timestamp
    double seconds = 0;          ///< data time from the first to the last packet's end
    double maxLateness = 0;
  };

  /// Opens every recording and destination; throws naming the one that fails, and
  /// std::invalid_argument for an odd restampBy or both ways of restamping.
  RecordingReplayer(const std::vector<Input>& inputs, Options options);
  ~RecordingReplayer();

  /// Sends every packet; returns per-input totals and the overall ones (last entry).
  std::vector<Totals> run();

 private:
  struct Source;
  std::vector<Source> sources_;
  Options options_;
};

}  // namespace rtcp::sim
