#include "OutputLayout.h"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>

#include "rtcp/Logger.h"

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
        throw std::invalid_argument("OLAP.tiedArrayStationNames: " + name +
                                    " is not in the station list");
      super.name += (super.name.empty() ? "" : "+") + name;
      for (int k = 0; k < 3; ++k)
        super.position[k] += settings.stations[size_t(index)].position[k] / double(members.size());
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

bool storedHere(const std::string& host, const std::string& locationHost) {
  return locationHost.empty() ? isLocalHost(host) : host == locationHost;
}

std::vector<SubbandOutput> localOutputs(const ObservationSettings& settings, bool all,
                                        const std::string& locationHost) {
  const CorrelatedOutputSettings& out = settings.correlatedOutput;
  std::vector<SubbandOutput> outputs;
  if (!out.enabled) return outputs;  // beam-formed files only
  for (const SubbandSettings& subband : settings.subbands) {
    const size_t i = size_t(subband.index);
    if (i >= out.filenames.size() || i >= out.hosts.size() || i >= out.directories.size())
      throw std::invalid_argument("Output_Correlated: no filename/location for subband " +
                                  std::to_string(subband.number));
    if (!all && !storedHere(out.hosts[i], locationHost)) continue;
    const std::string& dir = out.directories[i];
    const std::string path = dir.empty() ? out.filenames[i] : dir + "/" + out.filenames[i];
    outputs.push_back({subband.index, subband.number, path});
  }
  return outputs;
}

namespace {

/// A size when the tables know no elements of a station: its typical extent.
double typicalDiameter(const std::string& name, const std::string& field) {
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

/// Station and antenna field of one of the observation's stations: CS001 and its field,
/// or, for a name that holds the field already (CS001HBA0), its two parts.
FieldOfStation fieldOfStation(const StationSettings& station) {
  for (const std::string field : {"HBA0", "HBA1", "LBA", "HBA"})
    if (station.name.size() > field.size() && station.name.ends_with(field))
      return {station.name.substr(0, station.name.size() - field.size()), field};
  return {station.name, station.field};
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t end; (end = text.find(separator, begin)) != std::string::npos; begin = end + 1)
    parts.push_back(text.substr(begin, end - begin));
  parts.push_back(text.substr(begin));
  return parts;
}

/// LOFAR_OBSERVATION_FREQUENCY_MIN / MAX as COBALT writes them: the lowest and highest
/// subband centre, less half a subband when the filter bank makes channels.
std::pair<double, double> frequencyRange(const ObservationSettings& settings) {
  double low = settings.subbands.front().frequency, high = low;
  for (const SubbandSettings& subband : settings.subbands) {
    low = std::min(low, subband.frequency);
    high = std::max(high, subband.frequency);
  }
  const double shift = settings.channelsPerSubband > 1 ? settings.subbandWidth() / 2 : 0;
  return {low - shift, high - shift};
}

}  // namespace

std::vector<MsAntenna> msAntennas(const ObservationSettings& settings) {
  std::vector<MsAntenna> antennas;
  for (const OutputStation& s : outputStations(settings)) {
    MsAntenna antenna{s.name, s.position, {}};
    for (const std::string& member : split(s.name, '+'))
      antenna.members.push_back(
          fieldOfStation(settings.stations.at(size_t(settings.stationIndex(member)))));
    antennas.push_back(std::move(antenna));
  }
  return antennas;
}

std::shared_ptr<const LofarAntennaFields> describeAntennaFields(
    const ObservationSettings& settings) {
  auto fields = std::make_shared<LofarAntennaFields>(
      describeLofarAntennaFields(msAntennas(settings), settings.antennaSet,
                                 AntennaFieldTable::shipped(), StationTable::shipped()));
  for (const std::string& warning : fields->warnings)
    RTCP_LOG_WARN("storage", "LOFAR_ANTENNA_FIELD: " << warning);
  return fields;
}

MeasurementSetDescription describeMeasurementSet(
    const ObservationSettings& settings, int subbandIndex,
    std::shared_ptr<const LofarAntennaFields> antennaFields) {
  if (!antennaFields) antennaFields = describeAntennaFields(settings);
  const SubbandSettings& subband = settings.subbands.at(size_t(subbandIndex));
  const Direction& beam = settings.beams.at(size_t(subband.beam));
  MeasurementSetDescription d;
  d.observationId = settings.observationId;
  d.gridStartUnix = double(settings.startSample()) * 1024.0 / settings.clockHz();
  d.integrationSeconds = settings.integrationDuration();
  d.samplesPerIntegration = int64_t(settings.spectraPerBlock) * settings.blocksPerIntegration;
  d.startTime = settings.startTime;
  d.stopTime = settings.stopTime;
  const std::vector<OutputStation> stations = outputStations(settings);
  for (size_t a = 0; a < stations.size(); ++a) {
    const OutputStation& s = stations[a];
    const LofarAntennaInfo& info = antennaFields->antennas.at(a);
    const double diameter =
        info.dishDiameter > 0 ? info.dishDiameter : typicalDiameter(s.name, settings.antennaField);
    d.stations.push_back({s.name, s.position, diameter, stationType(s.name), info.stationId});
  }
  d.referencePosition = settings.referencePhaseCenter;
  d.ra = beam.ra;
  d.dec = beam.dec;
  d.directionType = beam.type;
  d.beam = subband.beam;
  if (settings.analogBeam)
    d.tileBeam = {settings.analogBeam->directionType, settings.analogBeam->angle1,
                  settings.analogBeam->angle2};
  else
    d.tileBeam = {beam.type, beam.ra, beam.dec};
  if (size_t(subband.beam) < settings.beamTargets.size())
    d.targets = settings.beamTargets[size_t(subband.beam)];
  // LOFAR_TARGET is never empty (LINC's getTargetName.py takes its first name): without
  // Observation.Beam[b].target, the beam's FIELD name.
  if (d.targets.empty()) d.targets.push_back(beamFieldName(subband.beam));
  d.subbandIndex = subbandIndex;
  d.subbandNumber = subband.number;
  d.subbandFrequency = subband.frequency;
  for (int c = 0; c < settings.channelsPerSubband; ++c)
    d.channelFrequencies.push_back(settings.channelFrequency(subbandIndex, c));
  d.channelWidth = settings.channelWidth();
  d.parsetText = settings.parsetText;
  d.campaign = settings.campaign;
  d.antennaSet = settings.antennaSet;
  d.bandFilter = settings.bandFilter;
  d.bitsPerSample = settings.bitsPerSample;
  d.clockHz = settings.clockHz();
  std::tie(d.minFrequency, d.maxFrequency) = frequencyRange(settings);
  d.antennaFields = std::move(antennaFields);
  return d;
}

}  // namespace rtcp::storage
