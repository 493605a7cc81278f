#pragma once
/// \file SampleTime.h
/// Absolute sample numbers of a subband stream and their relation to RSP packet
/// timestamps and UTC. Sample n lies at Unix time n * 1024 / clockHz.
/// A second starts at sample floor((timestamp * clockHz + 512) / 1024), so at 200 MHz
/// even seconds hold 195313 samples and odd seconds 195312.

#include <cstdint>
#include <string>

namespace rtcp {

/// A packet's time stamp: Unix second plus the sample offset within that second.
struct RspStamp {
  uint32_t timestamp = 0;
  uint32_t sequence = 0;
  bool operator==(const RspStamp&) const = default;
};

class SampleClock {
 public:
  /// clockMHz: 200 or 160; throws std::invalid_argument otherwise.
  explicit SampleClock(int clockMHz);

  int clockMHz() const { return clockMHz_; }
  double clockHz() const { return clockMHz_ * 1e6; }
  /// Complex samples per second of one subband.
  double sampleRate() const { return clockHz() / 1024.0; }

  /// Absolute sample number of the first sample of a Unix second.
  int64_t secondStart(uint32_t timestamp) const;
  /// Number of samples in the given second (195313 or 195312 at 200 MHz).
  int64_t samplesInSecond(uint32_t timestamp) const;
  int64_t sampleNumber(RspStamp stamp) const {
    return secondStart(stamp.timestamp) + stamp.sequence;
  }
  RspStamp stamp(int64_t sample) const;

  /// Unix time (UTC seconds) of a sample.
  double unixTime(int64_t sample) const { return double(sample) * 1024.0 / clockHz(); }
  /// The first sample at or after a Unix time, ceil(t * sampleRate) in exact integer
  /// arithmetic for the whole seconds. Equals secondStart() for whole seconds (at 200 MHz
  /// an odd second begins half a sample before its first sample). A time less than one
  /// double ulp (238 ns today) after a sample counts as that sample, so that
  /// firstSampleAtOrAfter(unixTime(n)) == n.
  int64_t firstSampleAtOrAfter(double unixTime) const;

 private:
  int clockMHz_;
};

/// Unix seconds to MJD seconds, the unit of a MeasurementSet's TIME column.
inline double unixToMjdSeconds(double unixTime) { return unixTime + 40587.0 * 86400.0; }
inline double mjdSecondsToUnix(double mjdSeconds) { return mjdSeconds - 40587.0 * 86400.0; }

/// Parses 'YYYY-MM-DD HH:MM:SS[.fff]' (or with 'T') as UTC; throws std::invalid_argument.
double parseUtc(const std::string& text);
/// Formats Unix seconds as 'YYYY-MM-DD HH:MM:SS' (UTC), with '.ffffff' (trailing zeros
/// dropped) only when the time is not a whole second to the microsecond.
std::string formatUtc(double unixTime);

}  // namespace rtcp
