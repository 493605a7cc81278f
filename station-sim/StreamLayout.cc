#include "StreamLayout.h"

#include <algorithm>
#include <stdexcept>

#include "rtcp/Logger.h"

namespace rtcp::sim {

std::string StreamLayout::recordingName() const {
  std::string name = stationName;
  if (port != 0) name.append("-").append(std::to_string(port));
  return name.append(".rsp");
}

namespace {

/// The station's beamlet map; in order across the streams when the settings give none.
std::vector<BeamletSlot> beamletsOf(const ObservationSettings& settings,
                                    const StationSettings& station) {
  if (int(station.beamlets.size()) == settings.nrSubbands()) return station.beamlets;
  std::vector<BeamletSlot> slots;
  const int perPacket = settings.beamletsPerPacket();
  for (int i = 0; i < settings.nrSubbands(); ++i) slots.push_back({i / perPacket, i % perPacket});
  return slots;
}

}  // namespace

std::vector<StreamLayout> layoutStreams(const ObservationSettings& settings) {
  std::vector<StreamLayout> streams;
  for (int s = 0; s < settings.nrStations(); ++s) {
    const StationSettings& station = settings.stations[size_t(s)];
    const std::vector<BeamletSlot> slots = beamletsOf(settings, station);
    int needed = 0;
    for (const BeamletSlot& slot : slots) needed = std::max(needed, slot.stream + 1);
    const int given = int(station.inputs.size());
    if (given != 0 && given < needed)
      throw std::runtime_error("station " + station.name + ": its " +
                               std::to_string(settings.nrSubbands()) + " subbands need " +
                               std::to_string(needed) + " RSP.ports at " +
                               std::to_string(settings.bitsPerSample) + " bit, the parset gives " +
                               std::to_string(given));
    std::vector<StreamLayout> own(static_cast<size_t>(needed));
    for (size_t i = 0; i < slots.size(); ++i) {
      std::vector<int>& beamlets = own[size_t(slots[i].stream)].beamletSubbands;
      if (int(beamlets.size()) <= slots[i].beamlet)
        beamlets.resize(size_t(slots[i].beamlet) + 1, -1);
      beamlets[size_t(slots[i].beamlet)] = int(i);
    }
    int carrying = 0;
    for (int port = 0; port < needed; ++port) {
      StreamLayout& stream = own[size_t(port)];
      if (stream.beamletSubbands.empty()) continue;
      stream.station = s;
      stream.stationName = station.name;
      stream.stationId = station.id;
      stream.port = port;
      stream.descriptor = given ? station.inputs[size_t(port)] : "";
      streams.push_back(stream);
      ++carrying;
    }
    if (given > carrying)
      RTCP_LOG_WARN("station-sim", "station " << station.name << ": " << carrying << " of its "
                                              << given << " RSP.ports carry data");
  }
  return streams;
}

}  // namespace rtcp::sim
