#include "StreamLayout.h"

#include <stdexcept>

#include "rtcp/Logger.h"

namespace rtcp::sim {

std::string StreamLayout::recordingName() const {
  std::string name = stationName;
  if (port != 0) name.append("-").append(std::to_string(port));
  return name.append(".rsp");
}

std::vector<StreamLayout> layoutStreams(const ObservationSettings& settings) {
  const int perPacket = settings.beamletsPerPacket();
  const int nrSubbands = settings.nrSubbands();
  const int needed = (nrSubbands + perPacket - 1) / perPacket;
  std::vector<StreamLayout> streams;
  for (int s = 0; s < settings.nrStations(); ++s) {
    const StationSettings& station = settings.stations[s];
    const int given = int(station.inputs.size());
    if (given != 0 && given < needed)
      throw std::runtime_error("station " + station.name + ": " + std::to_string(nrSubbands) +
                               " subbands need " + std::to_string(needed) + " RSP.ports at " +
                               std::to_string(settings.bitsPerSample) + " bit, the parset gives " +
                               std::to_string(given));
    if (given > needed)
      RTCP_LOG_WARN("station-sim", "station " << station.name << ": only the first " << needed
                                              << " of its " << given << " RSP.ports carry data");
    for (int port = 0; port < needed; ++port) {
      StreamLayout stream;
      stream.station = s;
      stream.stationName = station.name;
      stream.stationId = station.id;
      stream.port = port;
      stream.firstSubband = port * perPacket;
      stream.nrSubbands = std::min(perPacket, nrSubbands - stream.firstSubband);
      stream.descriptor = given ? station.inputs[port] : "";
      streams.push_back(stream);
    }
  }
  return streams;
}

}  // namespace rtcp::sim
