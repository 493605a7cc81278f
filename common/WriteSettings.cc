// ObservationSettings written back as parset keys (toParset, effectiveProcessingKeys) and
// the formatting they share (SettingsReaders.h).
#include <charconv>
#include <cstdio>

#include "SettingsReaders.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace settings {

std::string beamKey(size_t beam, const std::string& name) {
  return "Observation.Beam[" + std::to_string(beam) + "]." + name;
}
std::string fieldKey(const std::string& field, const std::string& name) {
  return "PIC.Core." + field + "." + name;
}
std::string sourceKey(size_t source, const std::string& name) {
  return "Sim.Source[" + std::to_string(source) + "]." + name;
}

std::string formatNumber(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

std::string formatBool(bool value) { return value ? "T" : "F"; }

std::string quoted(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_of(" \t,[]#'\"*=\\") == std::string::npos &&
                     text.find("..") == std::string::npos;
  if (plain) return text;
  const char quote = text.find('\'') == std::string::npos ? '\'' : '"';
  return quote + text + quote;
}

namespace {
template <typename T, typename Format>
std::string formatVector(const std::vector<T>& values, Format format) {
  std::string text = "[";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + format(values[i]);
  return text + "]";
}
}  // namespace

std::string formatStrings(const std::vector<std::string>& values) {
  return formatVector(values, quoted);
}
std::string formatInts(const std::vector<int>& values) {
  return formatVector(values, [](int n) { return std::to_string(n); });
}
std::string formatPosition(const std::array<double, 3>& xyz) {
  return formatVector(std::vector<double>(xyz.begin(), xyz.end()), formatNumber);
}

namespace {

void writeObservation(const ObservationSettings& s, Parset& p) {
  p.set("Observation.ObsID", std::to_string(s.observationId));
  p.set("Observation.startTime", quoted(formatUtc(s.startTime)));
  p.set("Observation.stopTime", quoted(formatUtc(s.stopTime)));
  p.set("Observation.sampleClock", std::to_string(s.clockMHz));
  p.set("Observation.nrBitsPerSample", std::to_string(s.bitsPerSample));
  p.set("Observation.antennaSet", quoted(s.antennaSet));
  p.set("Observation.bandFilter", quoted(s.bandFilter));
  p.set("Observation.nrBeams", std::to_string(s.beams.size()));
  for (size_t b = 0; b < s.beams.size(); ++b) {
    p.set(beamKey(b, "directionType"), s.beams[b].type);
    p.set(beamKey(b, "angle1"), formatNumber(s.beams[b].ra));
    p.set(beamKey(b, "angle2"), formatNumber(s.beams[b].dec));
    std::vector<int> numbers;
    for (const int i : s.subbandsOfBeam(int(b))) numbers.push_back(s.subbands[size_t(i)].number);
    p.set(beamKey(b, "subbandList"), formatInts(numbers));
  }
}

void writeStations(const ObservationSettings& s, Parset& p) {
  std::vector<std::string> names;
  for (const StationSettings& st : s.stations) names.push_back(st.name);
  p.set("Observation.VirtualInstrument.stationList", formatStrings(names));
  p.set("Observation.referencePhaseCenter", formatPosition(s.referencePhaseCenter));
  const std::string calibration = "." + s.antennaSet + "." + s.bandFilter + ".";
  for (const StationSettings& st : s.stations) {
    p.set(fieldKey(st.name, "phaseCenter"), formatPosition(st.position));
    p.set(fieldKey(st.name, "RSP.ports"), formatStrings(st.inputs));
    p.set(fieldKey(st.name, "clockCorrectionTime"), formatNumber(st.clockCorrection));
    for (int pol = 0; pol < 2; ++pol) {
      const std::string suffix = pol ? "Y" : "X";
      p.set(fieldKey(st.name + calibration + "delay", suffix), formatNumber(st.delay[pol]));
      p.set(fieldKey(st.name + calibration + "phase0", suffix), formatNumber(st.phase0[pol]));
    }
    std::vector<int> boards, slots;
    for (const BeamletSlot& slot : st.beamlets)
      boards.push_back(slot.stream), slots.push_back(slot.beamlet);
    p.set("Observation.Dataslots." + st.name + ".RSPBoardList", formatInts(boards));
    p.set("Observation.Dataslots." + st.name + ".DataslotList", formatInts(slots));
  }
}

void writeOutput(const ObservationSettings& s, Parset& p) {
  const std::string prefix = "Observation.DataProducts.Output_Correlated.";
  const CorrelatedOutputSettings& out = s.correlatedOutput;
  p.set(prefix + "enabled", formatBool(out.enabled));
  p.set(prefix + "filenames", formatStrings(out.filenames));
  std::vector<std::string> locations;
  for (size_t i = 0; i < out.hosts.size() && i < out.directories.size(); ++i)
    locations.push_back(out.hosts[i] + ":" + out.directories[i]);
  p.set(prefix + "locations", formatStrings(locations));
  p.set("OLAP.Storage.port", std::to_string(out.storagePort));
  p.set("OLAP.tiedArrayStationNames", formatStrings(s.tiedArrayStationNames));
}

void writeDescription(const ObservationSettings& s, Parset& p) {
  const std::string campaign = "Observation.Campaign.";
  p.set(campaign + "name", quoted(s.campaign.name));
  p.set(campaign + "title", quoted(s.campaign.title));
  p.set(campaign + "PI", quoted(s.campaign.pi));
  p.set(campaign + "CO_I", formatStrings(s.campaign.coInvestigators));
  p.set(campaign + "contact", quoted(s.campaign.contact));
  for (size_t b = 0; b < s.beamTargets.size(); ++b)
    p.set(beamKey(b, "target"), formatStrings(s.beamTargets[b]));
  p.set("Observation.nrAnaBeams", s.analogBeam ? "1" : "0");
  if (!s.analogBeam) return;
  p.set("Observation.AnaBeam[0].directionType", quoted(s.analogBeam->directionType));
  p.set("Observation.AnaBeam[0].angle1", formatNumber(s.analogBeam->angle1));
  p.set("Observation.AnaBeam[0].angle2", formatNumber(s.analogBeam->angle2));
}

void writeComputeNodes(const ObservationSettings& s, Parset& p) {
  if (s.computeNodes.empty()) return;
  std::vector<std::string> names;
  for (const ComputeNode& node : s.computeNodes) {
    names.push_back(node.name);
    p.set("PIC.Core.Cobalt." + node.name + ".host", quoted(node.host));
  }
  p.set("Cobalt.Nodes", formatStrings(names));
}

void writeSim(const ObservationSettings& s, Parset& p) {
  const SimSettings& sim = s.sim;
  p.set("Sim.nrSources", std::to_string(sim.sources.size()));
  for (size_t i = 0; i < sim.sources.size(); ++i) {
    p.set(sourceKey(i, "directionType"), sim.sources[i].direction.type);
    p.set(sourceKey(i, "angle1"), formatNumber(sim.sources[i].direction.ra));
    p.set(sourceKey(i, "angle2"), formatNumber(sim.sources[i].direction.dec));
    p.set(sourceKey(i, "flux"), formatNumber(sim.sources[i].flux));
    p.set(sourceKey(i, "Q"), formatNumber(sim.sources[i].q));
    p.set(sourceKey(i, "U"), formatNumber(sim.sources[i].u));
    p.set(sourceKey(i, "V"), formatNumber(sim.sources[i].v));
    const SimPulsar& pulsar = sim.sources[i].pulsar;
    if (pulsar.period > 0) {
      p.set(sourceKey(i, "pulsar.period"), formatNumber(pulsar.period));
      p.set(sourceKey(i, "pulsar.width"), formatNumber(pulsar.width));
      p.set(sourceKey(i, "pulsar.epoch"), formatNumber(pulsar.epochMjd));
      p.set(sourceKey(i, "pulsar.dispersionMeasure"), formatNumber(pulsar.dispersionMeasure));
    }
  }
  p.set("Sim.noisePower", formatNumber(sim.noisePower));
  p.set("Sim.tone.frequency", formatNumber(sim.toneFrequency));
  p.set("Sim.tone.amplitude", formatNumber(sim.toneAmplitude));
  p.set("Sim.packetLossProbability", formatNumber(sim.packetLossProbability));
  p.set("Sim.stationBeamWidth", formatNumber(sim.stationBeamWidth));
  p.set("Sim.seed", std::to_string(sim.seed));
  auto fields = [&](const std::vector<int>& indices) {
    std::vector<std::string> names;
    for (int i : indices) names.push_back(s.stations.at(size_t(i)).name);
    return formatStrings(names);
  };
  p.set("Sim.rfi.tone.frequency", formatNumber(sim.rfi.toneFrequency));
  p.set("Sim.rfi.tone.amplitude", formatNumber(sim.rfi.toneAmplitude));
  p.set("Sim.rfi.tone.stations", fields(sim.rfi.toneStations));
  p.set("Sim.rfi.burst.period", formatNumber(sim.rfi.burstPeriod));
  p.set("Sim.rfi.burst.duration", formatNumber(sim.rfi.burstDuration));
  p.set("Sim.rfi.burst.power", formatNumber(sim.rfi.burstPower));
  p.set("Sim.rfi.burst.stations", fields(sim.rfi.burstStations));
  p.set("Sim.rfi.silentStations", fields(sim.rfi.silentStations));
  p.set("Sim.rfi.drift.frequency", formatNumber(sim.rfi.driftFrequency));
  p.set("Sim.rfi.drift.rate", formatNumber(sim.rfi.driftRate));
  p.set("Sim.rfi.drift.period", formatNumber(sim.rfi.driftPeriod));
  p.set("Sim.rfi.drift.amplitude", formatNumber(sim.rfi.driftAmplitude));
  p.set("Sim.rfi.drift.stations", fields(sim.rfi.driftStations));
  p.set("Sim.rfi.noiseOnlyStations", fields(sim.rfi.noiseOnlyStations));
  for (size_t st = 0; st < sim.signalPaths.size() && st < s.stations.size(); ++st)
    for (int pol = 0; pol < 2; ++pol) {
      const std::string prefix = "Sim." + s.stations[st].name + (pol ? ".delay.Y" : ".delay.X");
      p.set(prefix, formatNumber(sim.signalPaths[st].delay[pol]));
      p.set("Sim." + s.stations[st].name + (pol ? ".phase0.Y" : ".phase0.X"),
            formatNumber(sim.signalPaths[st].phase0[pol]));
    }
}

}  // namespace
}  // namespace settings

Parset ObservationSettings::toParset() const {
  Parset parset;
  settings::writeObservation(*this, parset);
  settings::writeDescription(*this, parset);
  settings::writeStations(*this, parset);
  for (const auto& [key, value] : effectiveProcessingKeys())
    if (key.starts_with("Cobalt.")) parset.set(key, value);
  parset.set("OLAP.nrSecondsOfBuffer", settings::formatNumber(secondsOfBuffer));
  parset.set("OLAP.maxNetworkDelay", settings::formatNumber(maxNetworkDelay));
  settings::writeOutput(*this, parset);
  settings::writeBeamFormed(*this, parset);
  for (const auto& [key, value] : flagging.effectiveKeys()) parset.set(key, value);
  settings::writeComputeNodes(*this, parset);
  settings::writeSim(*this, parset);
  return parset;
}

std::vector<std::pair<std::string, std::string>> ObservationSettings::effectiveProcessingKeys()
    const {
  using settings::formatBool;
  using settings::formatNumber;
  const std::string channels = std::to_string(channelsPerSubband);
  const std::string blocks = std::to_string(blocksPerIntegration);
  const std::string time = formatNumber(integrationDuration());
  return {{"Cobalt.Correlator.nrChannelsPerSubband", channels},
          {"Cobalt.blockSize", std::to_string(samplesPerBlock())},
          {"Cobalt.Correlator.nrBlocksPerIntegration", blocks},
          {"Cobalt.Correlator.nrIntegrationsPerBlock", "1"},
          {"Cobalt.Correlator.integrationTime", time},
          {"Cobalt.delayCompensation", formatBool(delayCompensation)},
          {"Cobalt.correctBandPass", formatBool(correctBandPass)},
          {"Cobalt.correctClocks", formatBool(correctClocks)},
          {"Cobalt.realTime", formatBool(realTime)},
          {"Observation.channelsPerSubband", channels},
          {"OLAP.Correlator.nrChannelsPerSubband", channels},
          {"OLAP.CNProc.integrationSteps", std::to_string(spectraPerBlock)},
          {"OLAP.IONProc.integrationSteps", blocks},
          {"OLAP.Correlator.nrBlocksPerIntegration", blocks},
          {"OLAP.Correlator.integrationTime", time},
          {"OLAP.delayCompensation", formatBool(delayCompensation)},
          {"OLAP.correctBandPass", formatBool(correctBandPass)},
          {"OLAP.correctClocks", formatBool(correctClocks)},
          {"OLAP.realTime", formatBool(realTime)}};
}

std::string ObservationSettings::defaultFilename(int64_t obsId, int beam, int subbandIndex) {
  char name[80];
  std::snprintf(name, sizeof name, "L%lld_SAP%03d_SB%03d_uv.MS", static_cast<long long>(obsId),
                beam, subbandIndex);
  return name;
}

}  // namespace rtcp
