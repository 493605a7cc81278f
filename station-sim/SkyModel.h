#pragma once
/// \file SkyModel.h
/// The simulated sky of DESIGN §2.2 (Sim.* keys): point sources with a flux and a J2000
/// direction, receiver noise, an optional tone; and the true geometric delays of every
/// station toward each of them (rtcp::DelayModel, casacore) at chunk boundaries.

#include <array>
#include <cstdint>
#include <vector>

#include "rtcp/DelayModel.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/SampleTime.h"

namespace rtcp::sim {

/// Delays of one chunk of samples, evaluated at its first sample and just after its last
/// (the next chunk's first); the simulator interpolates linearly in between.
struct ChunkDelays {
  int64_t firstSample = 0;  ///< absolute sample number of the chunk's first sample
  int nrSamples = 0;
  std::vector<std::vector<double>> start;  ///< start[source][station] seconds
  std::vector<std::vector<double>> end;    ///< end[source][station] seconds
  std::vector<double> toneStart, toneEnd;  ///< [station], toward the tone (beam 0)
  /// [station][pol]: the signal path's own delay (seconds) and phase (radians).
  std::vector<std::array<double, 2>> pathDelay, pathPhase;
};

class SkyModel {
 public:
  explicit SkyModel(const ObservationSettings& settings);

  const std::vector<SimSource>& sources() const { return sources_; }
  int nrSources() const { return int(sources_.size()); }
  int nrStations() const { return delayModel_.nrStations(); }
  double noisePower() const { return noisePower_; }
  double toneFrequency() const { return toneFrequency_; }  ///< sky Hz, 0: no tone
  double toneAmplitude() const { return toneAmplitude_; }
  /// Interference made at the stations (Sim.rfi.*).
  const SimRfi& rfi() const { return rfi_; }

  /// Delays of every station toward every source for samples [first, first + n).
  ChunkDelays delays(int64_t firstSample, int nrSamples) const;
  /// An upper bound of |tau_s| over stations, directions and time, in seconds:
  /// |p_s - p_ref| / c plus the signal path's delay.
  double maxDelay() const { return maxDelay_; }
  /// [source]: the amplitude of a Gaussian station beam (Sim.stationBeamWidth, FWHM of
  /// the power) pointed at `beam`, toward each source at the observation start; all 1
  /// without a station beam.
  std::vector<double> sourceGains(const Direction& beam) const;

 private:
  std::vector<SimSource> sources_;
  std::vector<std::array<double, 2>> pathDelay_, pathPhase_;  ///< [station][pol]
  double beamWidth_ = 0;
  double startTime_ = 0;
  Direction toneDirection_;
  double noisePower_, toneFrequency_, toneAmplitude_;
  SimRfi rfi_;
  SampleClock clock_;
  DelayModel delayModel_;
  double maxDelay_ = 0;
};

}  // namespace rtcp::sim
