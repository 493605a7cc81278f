#include "PacketCounts.h"

#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe {

std::vector<bool> carryingInputs(const ObservationSettings& s, int station) {
  const StationSettings& st = s.stations[size_t(station)];
  std::vector<bool> carrying(st.inputs.size(), false);
  const int perPacket = s.beamletsPerPacket();
  for (int i = 0; i < s.nrSubbands(); ++i) {
    const int stream =
        size_t(i) < st.beamlets.size() ? st.beamlets[size_t(i)].stream : i / perPacket;
    if (stream >= 0 && size_t(stream) < carrying.size()) carrying[size_t(stream)] = true;
  }
  return carrying;
}

uint64_t packetsPerStream(const ObservationSettings& s) {
  const SampleClock clock(s.clockMHz);
  const int64_t samples =
      clock.firstSampleAtOrAfter(s.stopTime) - clock.firstSampleAtOrAfter(s.startTime);
  return uint64_t((samples + kRspSamplesPerPacket - 1) / kRspSamplesPerPacket);
}

double packetsPerStreamSecond(const ObservationSettings& s) {
  return s.subbandWidth() / kRspSamplesPerPacket;
}

}  // namespace rtcp::observe
