#include "OutputLayout.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>

namespace rtcp::storage {

std::vector<OutputStation> outputStations(const ObservationSettings& settings) {
  std::vector<std::string> members = settings.tiedArrayStationNames;
  if (members.size() < 2) members.clear();  // one member: nothing to merge
  auto isMember = [&](const std::string& name) {
    return std::find(members.begin(), members.end(), name) != members.end();
  };
  std::vector<OutputStation> stations;
  for (const StationSettings& station : settings.stations) {
    if (!isMember(station.name)) {
      stations.push_back({station.name, station.position});
      continue;
    }
    if (station.name != members.front()) continue;  // merged into the first listed member
    OutputStation super;
    for (const std::string& name : members) {
      const int index = settings.stationIndex(name);
      if (index < 0)
        throw std::invalid_argument("OLAP.tiedArrayStationNames: " + name + " is not in the station list");
      super.name += (super.name.empty() ? "" : "+") + name;
      for (int k = 0; k < 3; ++k) super.position[k] += settings.stations[size_t(index)].position[k] / double(members.size());
    }
    stations.push_back(super);
  }
  return stations;
}

int nrOutputStations(const ObservationSettings& settings) {
  const int members = int(settings.tiedArrayStationNames.size());
  return members < 2 ? settings.nrStations() : settings.nrStations() - members + 1;
}

bool isLocalHost(const std::string& host) {
  if (host.empty() || host == "localhost" || host == "127.0.0.1" || host == "::1") return true;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return false;
  const std::string self = name;
  const std::string shortSelf = self.substr(0, self.find('.'));
  return host == self || host == shortSelf;
}

std::vector<SubbandOutput> localOutputs(const ObservationSettings& settings, bool all) {
  const CorrelatedOutputSettings& out = settings.correlatedOutput;
  std::vector<SubbandOutput> outputs;
  for (const SubbandSettings& subband : settings.subbands) {
    const size_t i = size_t(subband.index);
    if (i >= out.filenames.size() || i >= out.hosts.size() || i >= out.directories.size())
      throw std::invalid_argument("Output_Correlated: no filename/location for subband " +
                                  std::to_string(subband.number));
    if (!all && !isLocalHost(out.hosts[i])) continue;
    const std::string& dir = out.directories[i];
    const std::string path = dir.empty() ? out.filenames[i] : dir + "/" + out.filenames[i];
    outputs.push_back({subband.index, subband.number, path});
  }
  return outputs;
}

namespace {

double dishDiameter(const std::string& name, const std::string& field) {
  if (field == "LBA") return 87.0;  // LBA_OUTER extent
  if (name.rfind("CS", 0) == 0) return 30.75;
  if (name.rfind("RS", 0) == 0) return 41.05;
  return 56.5;
}

std::string stationType(const std::string& name) {
  if (name.find('+') != std::string::npos) return "SUPERSTATION";
  if (name.rfind("CS", 0) == 0) return "CORE";
  if (name.rfind("RS", 0) == 0) return "REMOTE";
  return "INTERNATIONAL";
}

}  // namespace

MeasurementSetDescription describeMeasurementSet(const ObservationSettings& settings, int subbandIndex) {
  const SubbandSettings& subband = settings.subbands.at(size_t(subbandIndex));
  const Direction& beam = settings.beams.at(size_t(subband.beam));
  MeasurementSetDescription d;
  d.observationId = settings.observationId;
  d.gridStartUnix = double(settings.startSample()) * 1024.0 / settings.clockHz();
  d.integrationSeconds = settings.integrationDuration();
  d.startTime = settings.startTime;
  d.stopTime = settings.stopTime;
  for (const OutputStation& s : outputStations(settings))
    d.stations.push_back({s.name, s.position, dishDiameter(s.name, settings.antennaField), stationType(s.name)});
  d.referencePosition = settings.referencePhaseCenter;
  d.ra = beam.ra;
  d.dec = beam.dec;
  d.subbandNumber = subband.number;
  d.subbandFrequency = subband.frequency;
  for (int c = 0; c < settings.channelsPerSubband; ++c)
    d.channelFrequencies.push_back(settings.channelFrequency(subbandIndex, c));
  d.channelWidth = settings.channelWidth();
  d.parsetText = settings.parsetText;
  return d;
}

}  // namespace rtcp::storage
