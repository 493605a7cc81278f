#pragma once
/// \file Pacer.h
/// Paces output against the wall clock: data stamped with time t is released at wall
/// time t + offset. Waiting sleeps (never spins); when behind, at most kMaxBurst items
/// go out back to back before a short sleep lets receivers drain their buffers.

namespace rtcp::sim {

class Pacer {
 public:
  static constexpr int kMaxBurst = 256;     ///< items released back to back when late
  static constexpr double kSlack = 0.5e-3;  ///< items due this soon go out at once

  /// offsetSeconds: wall time minus data time.
  explicit Pacer(double offsetSeconds = 0) : offset_(offsetSeconds) {}

  /// Blocks until data time `dataTime` is due on the wall clock.
  void waitUntil(double dataTime);
  /// Largest lateness seen, seconds.
  double maxLateness() const { return maxLateness_; }
  double offset() const { return offset_; }

  /// Unix time now (system clock), seconds.
  static double now();

 private:
  double offset_;
  int burst_ = 0;
  double maxLateness_ = 0;
};

}  // namespace rtcp::sim
