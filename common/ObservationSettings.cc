#include "rtcp/ObservationSettings.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <tuple>

#include "rtcp/CasacoreMeasures.h"
#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace {

const std::string kStationList = "Observation.VirtualInstrument.stationList";
const std::string kReference = "Observation.referencePhaseCenter";
const std::string kOutput = "Observation.DataProducts.Output_Correlated.";
const std::string kTiedArray = "OLAP.tiedArrayStationNames";

std::string beamKey(size_t beam, const std::string& name) {
  return "Observation.Beam[" + std::to_string(beam) + "]." + name;
}
std::string stationKey(const std::string& station, const std::string& field,
                       const std::string& name) {
  return "PIC.Core." + station + field + "." + name;
}
std::string sourceKey(size_t source, const std::string& name) {
  return "Sim.Source[" + std::to_string(source) + "]." + name;
}

/// An integer key within [low, high]; fallback when absent.
int intInRange(const Parset& p, const std::string& key, int64_t fallback, int64_t low,
               int64_t high) {
  const int64_t value = p.getInt(key, fallback);
  if (value < low || value > high)
    p.fail(key, std::to_string(value) + " is outside " + std::to_string(low) + ".." +
                    std::to_string(high));
  return int(value);
}

std::array<double, 3> readPosition(const Parset& p, const std::string& key) {
  const std::vector<double> xyz = p.getDoubleVector(key);
  if (xyz.size() != 3)
    p.fail(key, "expected 3 ITRF coordinates [X, Y, Z], got " + std::to_string(xyz.size()));
  return {xyz[0], xyz[1], xyz[2]};
}

void readTimes(const Parset& p, ObservationSettings& s) {
  s.observationId = p.getInt("Observation.ObsID");
  if (s.observationId < 0) p.fail("Observation.ObsID", "must not be negative");
  s.startTime = p.getTime("Observation.startTime");
  s.stopTime = p.getTime("Observation.stopTime");
  if (s.stopTime <= s.startTime)
    p.fail("Observation.stopTime", "stop time '" + formatUtc(s.stopTime) +
                                       "' is not after start time '" + formatUtc(s.startTime) +
                                       "'");
}

int nyquistZone(const std::string& bandFilter) {
  if (bandFilter == "LBA_10_90" || bandFilter == "LBA_30_90") return 1;
  if (bandFilter == "HBA_110_190") return 2;
  if (bandFilter == "HBA_170_230" || bandFilter == "HBA_210_250") return 3;
  return 0;
}

void readInstrument(const Parset& p, ObservationSettings& s) {
  s.clockMHz = int(p.getInt("Observation.sampleClock", 200));
  if (s.clockMHz != 200 && s.clockMHz != 160)
    p.fail("Observation.sampleClock",
           "sample clock " + std::to_string(s.clockMHz) + " MHz is not 200 or 160");
  s.bitsPerSample = int(p.getInt("Observation.nrBitsPerSample", 16));
  if (s.bitsPerSample != 16 && s.bitsPerSample != 8 && s.bitsPerSample != 4)
    p.fail("Observation.nrBitsPerSample",
           std::to_string(s.bitsPerSample) + " bits is not 16, 8 or 4");
  s.antennaSet = p.getString("Observation.antennaSet");
  if (!s.antennaSet.starts_with("LBA_") && !s.antennaSet.starts_with("HBA_"))
    p.fail("Observation.antennaSet",
           "antenna set '" + s.antennaSet + "' starts with neither LBA_ nor HBA_");
  s.antennaField = s.antennaSet.substr(0, 3);
  s.bandFilter = p.getString("Observation.bandFilter");
  s.nyquistZone = nyquistZone(s.bandFilter);
  if (s.nyquistZone == 0)
    p.fail("Observation.bandFilter",
           "unknown band filter '" + s.bandFilter +
               "' (LBA_10_90, LBA_30_90, HBA_110_190, HBA_170_230, HBA_210_250)");
  if (!s.bandFilter.starts_with(s.antennaField))
    p.fail("Observation.bandFilter",
           "band filter '" + s.bandFilter + "' does not suit antenna set '" + s.antennaSet + "'");
  s.channelsPerSubband = intInRange(p, "Observation.channelsPerSubband", 64, 1, 65536);
  if ((s.channelsPerSubband & (s.channelsPerSubband - 1)) != 0)
    p.fail("Observation.channelsPerSubband",
           std::to_string(s.channelsPerSubband) + " is not a power of two");
}

void readBeams(const Parset& p, ObservationSettings& s) {
  const int nrBeams = intInRange(p, "Observation.nrBeams", 1, 1, 1024);
  for (int b = 0; b < nrBeams; ++b) {
    const std::string type = p.getString(beamKey(b, "directionType"), "J2000");
    if (type != "J2000")
      p.fail(beamKey(b, "directionType"), "direction type '" + type + "' is not J2000");
    s.beams.push_back({p.getDouble(beamKey(b, "angle1")), p.getDouble(beamKey(b, "angle2"))});
    const std::string listKey = beamKey(b, "subbandList");
    for (const int64_t number : p.getIntVector(listKey)) {
      if (number < 0 || number > 511)
        p.fail(listKey, "subband " + std::to_string(number) + " is outside 0..511");
      const int index = s.nrSubbands();
      s.subbands.push_back({index, int(number), b, s.subbandFrequency(int(number))});
    }
  }
  if (s.subbands.empty()) p.fail(beamKey(0, "subbandList"), "the observation has no subbands");
}

std::array<double, 3> tablePosition(const StationTable& table, const std::string& station,
                                    const std::string& field, bool& found) {
  std::vector<std::string> candidates{field};
  if (field == "HBA") candidates.push_back("HBA0");
  for (const std::string& name : candidates)
    if (const auto entry = table.find(station, name)) {
      found = true;
      return entry->position;
    }
  found = false;
  return {};
}

StationSettings readStation(const Parset& p, const StationTable& table,
                            const ObservationSettings& s, const std::string& name) {
  StationSettings st;
  st.name = name;
  st.field = s.antennaField;
  const auto id = table.stationId(name);
  if (!id) p.fail(kStationList, "unknown station '" + name + "' (not in the station table)");
  st.id = *id;
  const std::string centreKey = stationKey(name, st.field, "phaseCenter");
  bool found = true;
  st.position = p.isDefined(centreKey) ? readPosition(p, centreKey)
                                       : tablePosition(table, name, st.field, found);
  if (!found)
    p.fail(kStationList, "station '" + name + "' has no " + st.field + " position: neither " +
                             centreKey + " nor the station table gives one");
  const std::string portsKey = stationKey(name, st.field, "RSP.ports");
  if (!p.isDefined(portsKey))
    p.fail(kStationList,
           "station '" + name + "' has no input streams: key '" + portsKey + "' is missing");
  st.inputs = p.getStringVector(portsKey);
  const int64_t capacity = int64_t(st.inputs.size()) * s.beamletsPerPacket();
  if (s.nrSubbands() > capacity)
    p.fail(portsKey, std::to_string(s.nrSubbands()) + " subbands do not fit in " +
                         std::to_string(st.inputs.size()) + " port(s) of " +
                         std::to_string(s.beamletsPerPacket()) + " beamlets for station '" + name +
                         "'");
  st.clockCorrection = p.getDouble(stationKey(name, st.field, "clockCorrectionTime"), 0.0);
  return st;
}

bool isDirectionType(const std::string& name) {
  casacore::MDirection::Types type;
  return casacore::MDirection::getType(type, name);
}

/// What LOFAR records about the observation beyond what rtcp processes: the campaign, the
/// beams' targets and the analog (tile) beam.
void readDescription(const Parset& p, ObservationSettings& s) {
  const std::string campaign = "Observation.Campaign.";
  s.campaign.name = p.getString(campaign + "name", "");
  s.campaign.title = p.getString(campaign + "title", "");
  s.campaign.pi = p.getString(campaign + "PI", "");
  s.campaign.coInvestigators = p.getStringVector(campaign + "CO_I", {});
  s.campaign.contact = p.getString(campaign + "contact", "");
  for (size_t b = 0; b < s.beams.size(); ++b)
    s.beamTargets.push_back(p.getStringVector(beamKey(b, "target"), {}));
  const int nrAnalogBeams = intInRange(p, "Observation.nrAnaBeams", 1, 0, 1);
  const std::string analog = "Observation.AnaBeam[0].";
  if (nrAnalogBeams == 0 || !p.isDefined(analog + "angle1")) return;
  AnalogBeamSettings beam;
  beam.directionType = p.getString(analog + "directionType", "J2000");
  if (!isDirectionType(beam.directionType))
    p.fail(analog + "directionType",
           "'" + beam.directionType +
               "' is not a direction type casacore knows (J2000, AZELGEO, ...)");
  beam.angle1 = p.getDouble(analog + "angle1");
  beam.angle2 = p.getDouble(analog + "angle2");
  s.analogBeam = beam;
}

void readStations(const Parset& p, const StationTable& table, ObservationSettings& s) {
  const std::vector<std::string> names = p.getStringVector(kStationList);
  if (names.empty()) p.fail(kStationList, "the station list is empty");
  for (const std::string& name : names) {
    if (s.stationIndex(name) >= 0) p.fail(kStationList, "station '" + name + "' is listed twice");
    s.stations.push_back(readStation(p, table, s, name));
  }
  s.referencePhaseCenter =
      p.isDefined(kReference) ? readPosition(p, kReference) : s.stations.front().position;
}

void readProcessing(const Parset& p, ObservationSettings& s) {
  s.spectraPerBlock = intInRange(p, "OLAP.CNProc.integrationSteps", 3052, 1, 100'000'000);
  s.blocksPerIntegration = intInRange(p, "OLAP.IONProc.integrationSteps", 1, 1, 1'000'000);
  s.delayCompensation = p.getBool("OLAP.delayCompensation", true);
  s.correctBandPass = p.getBool("OLAP.correctBandPass", true);
  s.realTime = p.getBool("OLAP.realTime", true);
  s.secondsOfBuffer = p.getDouble("OLAP.nrSecondsOfBuffer", 2.5);
  if (!(s.secondsOfBuffer > 0)) p.fail("OLAP.nrSecondsOfBuffer", "must be positive");
  s.tiedArrayStationNames = p.getStringVector(kTiedArray, {});
  std::set<std::string> seen;
  for (const std::string& name : s.tiedArrayStationNames) {
    if (s.stationIndex(name) < 0)
      p.fail(kTiedArray, "station '" + name + "' is not in " + kStationList);
    if (!seen.insert(name).second) p.fail(kTiedArray, "station '" + name + "' is listed twice");
  }
}

void readOutput(const Parset& p, ObservationSettings& s) {
  CorrelatedOutputSettings& out = s.correlatedOutput;
  const size_t n = s.subbands.size();
  out.enabled = p.getBool(kOutput + "enabled", true);
  out.filenames = p.getStringVector(kOutput + "filenames", {});
  if (out.filenames.empty())
    for (const SubbandSettings& sb : s.subbands)
      out.filenames.push_back(ObservationSettings::defaultFilename(s.observationId, sb.number));
  if (out.filenames.size() != n)
    p.fail(kOutput + "filenames", std::to_string(out.filenames.size()) + " filenames for " +
                                      std::to_string(n) + " subbands");
  std::vector<std::string> locations = p.getStringVector(kOutput + "locations", {});
  if (locations.empty()) locations = {"localhost:."};
  if (locations.size() != 1 && locations.size() != n)
    p.fail(kOutput + "locations", std::to_string(locations.size()) + " locations for " +
                                      std::to_string(n) +
                                      " subbands (give one for all or one per subband)");
  for (size_t i = 0; i < n; ++i) {
    const std::string& location = locations[locations.size() == 1 ? 0 : i];
    const size_t colon = location.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == location.size() ||
        location.substr(0, colon).find('/') != std::string::npos)
      p.fail(kOutput + "locations", "bad location '" + location + "' (expected HOST:DIR)");
    out.hosts.push_back(location.substr(0, colon));
    out.directories.push_back(location.substr(colon + 1));
  }
  std::set<std::tuple<std::string, std::string, std::string>> targets;
  for (size_t i = 0; i < n; ++i)
    if (!targets.emplace(out.hosts[i], out.directories[i], out.filenames[i]).second)
      p.fail(kOutput + "filenames", "two subbands would write " + out.hosts[i] + ":" +
                                        out.directories[i] + "/" + out.filenames[i]);
  out.storagePort = intInRange(p, "OLAP.Storage.port", 4100, 1, 65535);
}

/// COBALT's compute nodes: Cobalt.Nodes names them, PIC.Core.Cobalt.<node>.host places
/// each (one rank per node).
void readComputeNodes(const Parset& p, ObservationSettings& s) {
  for (const std::string& name : p.getStringVector("Cobalt.Nodes", {}))
    s.computeNodes.push_back({name, p.getString("PIC.Core.Cobalt." + name + ".host", "localhost")});
}

void readSim(const Parset& p, ObservationSettings& s) {
  SimSettings& sim = s.sim;
  const int nrSources = intInRange(p, "Sim.nrSources", 0, 0, 100'000);
  for (int i = 0; i < nrSources; ++i) {
    SimSource source;
    source.direction = {p.getDouble(sourceKey(i, "angle1")), p.getDouble(sourceKey(i, "angle2"))};
    source.flux = p.getDouble(sourceKey(i, "flux"), 1.0);
    if (source.flux < 0) p.fail(sourceKey(i, "flux"), "flux must not be negative");
    sim.sources.push_back(source);
  }
  sim.noisePower = p.getDouble("Sim.noisePower", 1.0);
  if (sim.noisePower < 0) p.fail("Sim.noisePower", "noise power must not be negative");
  sim.toneFrequency = p.getDouble("Sim.tone.frequency", 0.0);
  sim.toneAmplitude = p.getDouble("Sim.tone.amplitude", 0.0);
  sim.packetLossProbability = p.getDouble("Sim.packetLossProbability", 0.0);
  if (sim.packetLossProbability < 0 || sim.packetLossProbability > 1)
    p.fail("Sim.packetLossProbability", "probability must lie in 0..1");
  const int64_t seed = p.getInt("Sim.seed", 1);
  if (seed < 0) p.fail("Sim.seed", "seed must not be negative");
  sim.seed = uint64_t(seed);
}

void reportUnknownKeys(const Parset& p, ObservationSettings& s) {
  for (const std::string& key : p.unusedKeys()) {
    s.unknownKeys.push_back(key + " (" + p.where(key) + ")");
    RTCP_LOG_WARN("parset", "unknown key " << s.unknownKeys.back() << " ignored");
  }
}

// Writing settings back as parset text: numbers in their shortest exact form, strings
// quoted where the parset syntax would otherwise read them differently.
std::string formatNumber(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

std::string formatBool(bool value) { return value ? "T" : "F"; }

std::string quoted(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_of(" \t,[]#'\"*=") == std::string::npos &&
                     text.find("..") == std::string::npos;
  if (plain) return text;
  const char quote = text.find('\'') == std::string::npos ? '\'' : '"';
  return quote + text + quote;
}

template <typename T, typename Format>
std::string formatVector(const std::vector<T>& values, Format format) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + format(values[i]);
  return text + "]";
}

std::string formatPosition(const std::array<double, 3>& xyz) {
  return formatVector(std::vector<double>(xyz.begin(), xyz.end()), formatNumber);
}

void writeObservation(const ObservationSettings& s, Parset& p) {
  p.set("Observation.ObsID", std::to_string(s.observationId));
  p.set("Observation.startTime", quoted(formatUtc(s.startTime)));
  p.set("Observation.stopTime", quoted(formatUtc(s.stopTime)));
  p.set("Observation.sampleClock", std::to_string(s.clockMHz));
  p.set("Observation.nrBitsPerSample", std::to_string(s.bitsPerSample));
  p.set("Observation.antennaSet", quoted(s.antennaSet));
  p.set("Observation.bandFilter", quoted(s.bandFilter));
  p.set("Observation.channelsPerSubband", std::to_string(s.channelsPerSubband));
  p.set("Observation.nrBeams", std::to_string(s.beams.size()));
  for (size_t b = 0; b < s.beams.size(); ++b) {
    p.set(beamKey(b, "directionType"), "J2000");
    p.set(beamKey(b, "angle1"), formatNumber(s.beams[b].ra));
    p.set(beamKey(b, "angle2"), formatNumber(s.beams[b].dec));
    std::vector<int> numbers;
    for (const SubbandSettings& sb : s.subbands)
      if (sb.beam == int(b)) numbers.push_back(sb.number);
    p.set(beamKey(b, "subbandList"),
          formatVector(numbers, [](int n) { return std::to_string(n); }));
  }
}

void writeDescription(const ObservationSettings& s, Parset& p) {
  const std::string campaign = "Observation.Campaign.";
  p.set(campaign + "name", quoted(s.campaign.name));
  p.set(campaign + "title", quoted(s.campaign.title));
  p.set(campaign + "PI", quoted(s.campaign.pi));
  p.set(campaign + "CO_I", formatVector(s.campaign.coInvestigators, quoted));
  p.set(campaign + "contact", quoted(s.campaign.contact));
  for (size_t b = 0; b < s.beamTargets.size(); ++b)
    p.set(beamKey(b, "target"), formatVector(s.beamTargets[b], quoted));
  p.set("Observation.nrAnaBeams", s.analogBeam ? "1" : "0");
  if (!s.analogBeam) return;
  p.set("Observation.AnaBeam[0].directionType", quoted(s.analogBeam->directionType));
  p.set("Observation.AnaBeam[0].angle1", formatNumber(s.analogBeam->angle1));
  p.set("Observation.AnaBeam[0].angle2", formatNumber(s.analogBeam->angle2));
}

void writeStations(const ObservationSettings& s, Parset& p) {
  std::vector<std::string> names;
  for (const StationSettings& st : s.stations) names.push_back(st.name);
  p.set(kStationList, formatVector(names, quoted));
  p.set(kReference, formatPosition(s.referencePhaseCenter));
  for (const StationSettings& st : s.stations) {
    p.set(stationKey(st.name, st.field, "phaseCenter"), formatPosition(st.position));
    p.set(stationKey(st.name, st.field, "RSP.ports"), formatVector(st.inputs, quoted));
    p.set(stationKey(st.name, st.field, "clockCorrectionTime"), formatNumber(st.clockCorrection));
  }
}

void writeProcessing(const ObservationSettings& s, Parset& p) {
  p.set("OLAP.CNProc.integrationSteps", std::to_string(s.spectraPerBlock));
  p.set("OLAP.IONProc.integrationSteps", std::to_string(s.blocksPerIntegration));
  p.set("OLAP.delayCompensation", formatBool(s.delayCompensation));
  p.set("OLAP.correctBandPass", formatBool(s.correctBandPass));
  p.set("OLAP.realTime", formatBool(s.realTime));
  p.set("OLAP.nrSecondsOfBuffer", formatNumber(s.secondsOfBuffer));
  p.set(kTiedArray, formatVector(s.tiedArrayStationNames, quoted));
}

void writeOutput(const ObservationSettings& s, Parset& p) {
  const CorrelatedOutputSettings& out = s.correlatedOutput;
  p.set(kOutput + "enabled", formatBool(out.enabled));
  p.set(kOutput + "filenames", formatVector(out.filenames, quoted));
  std::vector<std::string> locations;
  for (size_t i = 0; i < out.hosts.size() && i < out.directories.size(); ++i)
    locations.push_back(out.hosts[i] + ":" + out.directories[i]);
  p.set(kOutput + "locations", formatVector(locations, quoted));
  p.set("OLAP.Storage.port", std::to_string(out.storagePort));
}

void writeComputeNodes(const ObservationSettings& s, Parset& p) {
  if (s.computeNodes.empty()) return;
  std::vector<std::string> names;
  for (const ComputeNode& node : s.computeNodes) {
    names.push_back(node.name);
    p.set("PIC.Core.Cobalt." + node.name + ".host", quoted(node.host));
  }
  p.set("Cobalt.Nodes", formatVector(names, quoted));
}

void writeSim(const SimSettings& sim, Parset& p) {
  p.set("Sim.nrSources", std::to_string(sim.sources.size()));
  for (size_t i = 0; i < sim.sources.size(); ++i) {
    p.set(sourceKey(i, "angle1"), formatNumber(sim.sources[i].direction.ra));
    p.set(sourceKey(i, "angle2"), formatNumber(sim.sources[i].direction.dec));
    p.set(sourceKey(i, "flux"), formatNumber(sim.sources[i].flux));
  }
  p.set("Sim.noisePower", formatNumber(sim.noisePower));
  p.set("Sim.tone.frequency", formatNumber(sim.toneFrequency));
  p.set("Sim.tone.amplitude", formatNumber(sim.toneAmplitude));
  p.set("Sim.packetLossProbability", formatNumber(sim.packetLossProbability));
  p.set("Sim.seed", std::to_string(sim.seed));
}

}  // namespace

ObservationSettings ObservationSettings::fromParset(const Parset& parset,
                                                    const StationTable& table) {
  ObservationSettings s;
  readTimes(parset, s);
  readInstrument(parset, s);
  readBeams(parset, s);
  readDescription(parset, s);
  readStations(parset, table, s);
  readProcessing(parset, s);
  readOutput(parset, s);
  readComputeNodes(parset, s);
  readSim(parset, s);
  s.parsetText = parset.toString();
  reportUnknownKeys(parset, s);
  return s;
}

Parset ObservationSettings::toParset() const {
  Parset parset;
  writeObservation(*this, parset);
  writeDescription(*this, parset);
  writeStations(*this, parset);
  writeProcessing(*this, parset);
  writeOutput(*this, parset);
  writeComputeNodes(*this, parset);
  writeSim(sim, parset);
  return parset;
}

ObservationSettings ObservationSettings::fromParset(const Parset& parset) {
  return fromParset(parset, StationTable::shipped());
}

ObservationSettings ObservationSettings::fromFile(const std::string& path) {
  std::ostringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
    return fromText(text.str(), "<standard input>", std::filesystem::current_path().string());
  }
  std::ifstream file(path);
  if (!file)
    throw ParsetError(path, 0, "", std::string("cannot open parset: ") + std::strerror(errno));
  text << file.rdbuf();
  return fromText(text.str(), path, std::filesystem::absolute(path).parent_path().string());
}

ObservationSettings ObservationSettings::fromText(const std::string& text, const std::string& name,
                                                  const std::string& baseDirectory) {
  ObservationSettings s = fromParset(Parset::fromString(text, name));
  s.parsetText = text;  // as written, comments included, for HISTORY
  // Recordings named by relative paths lie relative to the parset file, not the caller.
  const std::filesystem::path base = baseDirectory;
  for (StationSettings& station : s.stations)
    for (std::string& input : station.inputs)
      if (input.starts_with("file:") && input.size() > 5 && input[5] != '/')
        input = "file:" + (base / input.substr(5)).lexically_normal().string();
  return s;
}

std::string ObservationSettings::defaultFilename(int64_t obsId, int subbandNumber) {
  char name[64];
  std::snprintf(name, sizeof name, "L%lld_SB%03d_uv.MS", static_cast<long long>(obsId),
                subbandNumber);
  return name;
}

double ObservationSettings::subbandFrequency(int subbandNumber) const {
  return subbandWidth() * (subbandNumber + 512.0 * (nyquistZone - 1));
}

double ObservationSettings::channelFrequency(int subbandIndex, int channel) const {
  return subbands.at(subbandIndex).frequency + (channel - channelsPerSubband / 2) * channelWidth();
}

int64_t ObservationSettings::startSample() const {
  return SampleClock(clockMHz).firstSampleAtOrAfter(startTime);
}

int64_t ObservationSettings::nrBlocks() const {
  return int64_t(std::floor((stopTime - startTime) * subbandWidth() / double(samplesPerBlock())));
}

int ObservationSettings::beamletsPerPacket() const { return maxBeamlets(bitsPerSample); }

int ObservationSettings::stationIndex(const std::string& name) const {
  for (size_t i = 0; i < stations.size(); ++i)
    if (stations[i].name == name) return int(i);
  return -1;
}

}  // namespace rtcp
