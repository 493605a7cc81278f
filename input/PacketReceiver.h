#pragma once
/// \file PacketReceiver.h
/// One thread per input stream: reads RSP packets from UDP (recvmmsg batches into
/// preallocated buffers, blocking when idle) or from a recording (file:), validates each
/// one, and stores the valid ones in the station's CircularSampleBuffer.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "CircularSampleBuffer.h"
#include "InputRecorder.h"
#include "InputStatistics.h"
#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StationBufferSize.h"  // kMaxAheadOfClock
#include "rtcp/Stream.h"

namespace rtcp::ion {

struct ReceiverOptions {
  RspExpectation expect;   ///< clock, bits and station checked; beamlets see below
  int neededBeamlets = 0;  ///< packets must carry at least the stream's subbands
  bool paced = false;      ///< file: deliver each packet at its time + clockShift (wall clock)
  double clockShift = 0;   ///< seconds from packet (recording) time to wall-clock time
  /// Plausible packets start at samples [firstPlausible, endPlausible): the observation
  /// with its margins. Others are rejected (kBeforeObservation, kAfterObservation) and
  /// never reach the buffer, whose window they would move.
  int64_t firstPlausible = INT64_MIN;
  int64_t endPlausible = INT64_MAX;
  /// The observation's samples [windowStart, windowEnd): stored packets whose samples lie
  /// wholly before or after it are counted apart (StreamCounters::acceptedBeforeStart,
  /// acceptedAfterStop), so that a station sending early does not cover losses inside.
  int64_t windowStart = INT64_MIN;
  int64_t windowEnd = INT64_MAX;
  /// Seconds a packet's last sample may lie ahead of the wall clock (recording time
  /// shifted by clockShift) before it is rejected as kAheadOfClock; < 0: not checked
  /// (non-real-time). Stations stamp what they have sampled: only a wrong clock or a
  /// forger sends the future.
  double maxAheadOfClock = -1;
  /// Valid, plausible packets are also appended to recording `recordStream` of this
  /// recorder (null: none), whatever the buffer makes of them.
  InputRecorder* recorder = nullptr;
  int recordStream = 0;
};

/// Seconds a paced replay may run ahead: it wakes once per lead. At 5 ms, 16 stations'
/// wake-ups were 10 % of ionproc's CPU (futex and task switches on a paravirtualised guest);
/// live stations' packets jitter as much, and up to kMaxAheadOfClock early is accepted.
constexpr double kReplayLead = 0.025;
static_assert(kReplayLead <= kMaxAheadOfClock);

class PacketReceiver {
 public:
  /// Opens the stream (so a busy port fails here); `name` labels logs, e.g. "CS001 stream 0".
  PacketReceiver(std::string name, const StreamDescriptor& descriptor, int stream,
                 CircularSampleBuffer& buffer, StreamCounters& counters, ReceiverOptions options);
  ~PacketReceiver();
  PacketReceiver(const PacketReceiver&) = delete;
  PacketReceiver& operator=(const PacketReceiver&) = delete;

  /// Starts the thread; clockShift: seconds from packet time to wall time (paced files).
  void start(double clockShift = 0);
  /// Stops reading (wakes a blocked receive or a paced sleep) and joins the thread.
  void stop();
  /// The bound UDP port (useful with port 0); 0 for files.
  uint16_t localPort() const;
  bool isFile() const { return descriptor_.kind == StreamDescriptor::Kind::kFile; }

  /// Unix time of the first packet of a recording; throws StreamError if it has none.
  static double firstPacketTime(const std::string& path);

 private:
  void run();
  void receiveUdp();
  void readFile();
  /// Validates datagrams and stores the valid ones in one buffer write.
  void handle(std::span<const std::span<const uint8_t>> datagrams);
  /// Sleeps until a wall-clock time; false when stopped meanwhile.
  bool sleepUntil(double unixTime);
  void logReject(RspReject reason, std::span<const uint8_t> datagram);
  /// kNone, or why a packet starting at `firstSample` lies outside the observation.
  RspReject outsideObservation(int64_t firstSample) const;
  /// -1: the packet's samples lie wholly before the window; 1: from its end on; 0: inside.
  int windowSide(int64_t firstSample) const;
  /// kNone, or kAheadOfClock for a real-time packet ahead of the wall time `now`.
  RspReject aheadOfClock(int64_t firstSample, double now) const;

  std::string name_;
  StreamDescriptor descriptor_;
  int stream_;
  CircularSampleBuffer& buffer_;
  StreamCounters& counters_;
  ReceiverOptions options_;
  SampleClock clock_;
  std::unique_ptr<Stream> input_;
  int wake_ = -1;  ///< eventfd that stop() signals
  std::atomic<bool> stop_{false};
  std::mutex sleepMutex_;
  std::condition_variable sleepCv_;
  RateLimiter rejectLog_{10.0};
  std::vector<PacketRef> refs_;  ///< reused per batch
  std::thread thread_;
};

}  // namespace rtcp::ion
