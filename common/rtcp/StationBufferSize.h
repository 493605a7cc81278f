#pragma once
/// \file StationBufferSize.h
/// The size of ionproc's circular station buffers (input/StationInput), computed once for
/// both sides: the station input allocates exactly this, and observe's memory plan and
/// its time for faulting the buffers in (observe/MemoryPlan.h, ObservationPlan) count it
/// before the observation starts. A buffer holds OLAP.nrSecondsOfBuffer, but at least the
/// blocks in flight with their filter history and coarse delays and, in real time, what
/// arrives while a block waits out OLAP.maxNetworkDelay.

#include <cstdint>

#include "rtcp/ObservationSettings.h"

namespace rtcp {

/// How far ahead of the wall clock a real-time packet may be: host clocks differ by
/// milliseconds (NTP), a station's packets arrive after their time (input/README.md).
constexpr double kMaxAheadOfClock = 0.25;

/// The bound on |coarse delay| of every station, in samples: geometric (distance to the
/// reference phase centre) plus instrumental, + 1; 0 without delay compensation.
int64_t maxDelaySamplesOf(const ObservationSettings& s);

/// Samples per subband row of every station's buffer (a multiple of 64), for a bound on
/// the coarse delay in samples, blocks released `releaseLag` behind the newest served,
/// and in real time `maxLatency` seconds past a block's end (OLAP.maxNetworkDelay).
int64_t stationBufferCapacity(const ObservationSettings& s, int64_t maxDelaySamples, int releaseLag,
                              double maxLatency);
/// As ionproc runs it: maxDelaySamplesOf(s), a release lag of 1, OLAP.maxNetworkDelay.
int64_t stationBufferCapacity(const ObservationSettings& s);

/// Rows of station `index`'s buffer: per input stream, its beamlets up to the highest
/// the observation uses.
int stationBufferRows(const ObservationSettings& s, int index);

/// Bytes of station `index`'s buffer as ionproc allocates it (stationBufferCapacity).
double stationBufferBytes(const ObservationSettings& s, int index);

}  // namespace rtcp
