#include "rtcp/StationBufferSize.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "rtcp/DelayModel.h"
#include "rtcp/RspPacket.h"
#include "rtcp/StationBlock.h"

namespace rtcp {

int64_t maxDelaySamplesOf(const ObservationSettings& s) {
  if (!s.delayCompensation) return 0;
  const double fs = s.subbandWidth();
  int64_t samples = 0;
  for (int index = 0; index < s.nrStations(); ++index) {
    const StationSettings& st = s.stations[size_t(index)];
    double d2 = 0;
    for (int i = 0; i < 3; ++i) d2 += std::pow(st.position[i] - s.referencePhaseCenter[i], 2);
    const double tau = std::sqrt(d2) / kSpeedOfLight + std::abs(s.instrumentalDelay(index));
    samples = std::max(samples, int64_t(std::ceil(tau * fs)) + 1);
  }
  return samples;
}

int64_t stationBufferCapacity(const ObservationSettings& s, int64_t maxDelaySamples, int releaseLag,
                              double maxLatency) {
  // The blocks that may be in flight, their filter history, delay changes, a margin, and
  // in real time what arrives while a block waits out the latency margin, input being up
  // to kMaxAheadOfClock ahead of the wall clock.
  const int64_t lag = std::max(releaseLag, 0);
  const int64_t latency =
      s.realTime ? int64_t(std::ceil((maxLatency + kMaxAheadOfClock) * s.subbandWidth())) : 0;
  const int64_t minimum =
      (lag + 2) * s.samplesPerBlock() + nrHistorySamples(s) + 2 * maxDelaySamples + latency + 1024;
  const int64_t capacity =
      std::max(int64_t(std::ceil(s.secondsOfBuffer * s.subbandWidth())), minimum);
  return (std::max<int64_t>(capacity, 64) + 63) / 64 * 64;
}

int64_t stationBufferCapacity(const ObservationSettings& s) {
  return stationBufferCapacity(s, maxDelaySamplesOf(s), 1, s.maxNetworkDelay);
}

int stationBufferRows(const ObservationSettings& s, int index) {
  const StationSettings& st = s.stations[size_t(index)];
  const int nrStreams = std::max(int(st.inputs.size()), 1);
  const int perPacket = s.beamletsPerPacket();
  std::vector<int> needed(size_t(nrStreams), 0);
  for (int i = 0; i < s.nrSubbands(); ++i) {
    const BeamletSlot slot = i < int(st.beamlets.size())
                                 ? st.beamlets[size_t(i)]
                                 : BeamletSlot{i / perPacket, i % perPacket};
    if (slot.stream >= 0 && slot.stream < nrStreams)
      needed[size_t(slot.stream)] = std::max(needed[size_t(slot.stream)], slot.beamlet + 1);
  }
  int rows = 0;
  for (int n : needed) rows += n;
  return std::max(rows, 1);
}

double stationBufferBytes(const ObservationSettings& s, int index) {
  return double(stationBufferRows(s, index)) * double(stationBufferCapacity(s)) *
         bytesPerDualPolSample(s.bitsPerSample);
}

}  // namespace rtcp
