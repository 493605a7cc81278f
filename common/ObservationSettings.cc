#include "rtcp/ObservationSettings.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <unordered_set>

#include "SettingsReaders.h"
#include "rtcp/Files.h"
#include "rtcp/InputRecordingSettings.h"
#include "rtcp/Logger.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace settings {

void Problems::error(const std::string& key, const std::string& problem) {
  errors_.emplace_back(parset_.name(), parset_.lineOf(key), key, problem);
}

void Problems::warn(const std::string& key, const std::string& problem) {
  const int line = parset_.lineOf(key);
  const std::string message = ParsetError(parset_.name(), line, key, problem).what();
  if (!warned_.insert(message).second) return;
  warnings_.push_back({key, line, message});
}

std::vector<ParsetError> Problems::errors() const {
  std::vector<ParsetError> unique;  // one field's problem may come up for its twin too
  std::unordered_set<std::string> seen;
  for (const ParsetError& e : errors_)
    if (seen.insert(e.what()).second) unique.push_back(e);
  return unique;
}

void Problems::raise() const {
  if (hasErrors()) throw ParsetErrors(errors());
}

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

}  // namespace settings

std::string ObservationSettings::summaryLine() const {
  std::ostringstream line;
  line << "observation " << observationId << ": " << nrStations() << " antenna fields, "
       << beams.size() << " beam(s), " << nrSubbands() << " subbands; " << channelsPerSubband
       << " channels, blocks of " << samplesPerBlock() << " samples (" << blockDuration() << " s), "
       << blocksPerIntegration << " per integration: integrations of " << integrationDuration()
       << " s";
  return line.str();
}

void ObservationSettings::logReport(const std::string& component) const {
  RTCP_LOG_INFO(component, summaryLine());
  if (beamFormed.enabled()) RTCP_LOG_INFO(component, beamFormed.summaryLine());
  RTCP_LOG_INFO(component, flagging.summaryLine());
  for (const ParsetWarning& warning : warnings) RTCP_LOG_WARN(component, warning.message);
  for (const std::string& line : unknownKeys.describe()) RTCP_LOG_WARN(component, line);
}

ObservationSettings ObservationSettings::fromParset(const Parset& parset,
                                                    const StationTable& table) {
  std::vector<ParsetError> errors;
  ObservationSettings s = readAll(parset, table, errors);
  if (!errors.empty()) throw ParsetErrors(std::move(errors));
  return s;
}

ObservationSettings ObservationSettings::readAll(const Parset& parset, const StationTable& table,
                                                 std::vector<ParsetError>& errors) {
  using namespace settings;
  ObservationSettings s;
  Problems problems(parset, s.warnings);
  readTimes(parset, problems, s);
  readInstrument(parset, problems, s);
  readBeams(parset, problems, s);
  problems.guard([&] { readDescription(parset, s); });
  readProcessing(parset, problems, s);
  readFlagging(parset, problems, s);
  readStations(parset, table, problems, s);
  problems.guard([&] { readTiedArray(parset, s); });
  readOutput(parset, problems, s);
  readBeamFormed(parset, problems, s);
  problems.guard([&] { readComputeNodes(parset, s); });
  readSim(parset, problems, s);
  problems.guard([&] { InputRecordingSettings::fromParset(parset); });  // checked, marked read
  errors = problems.errors();
  s.parsetText = parset.toString();
  s.unknownKeys = UnknownKeys::of(parset);
  return s;
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
  const std::optional<std::string> file = tryReadFile(path);
  if (!file)
    throw ParsetError(path, 0, "", std::string("cannot open parset: ") + std::strerror(errno));
  return fromText(*file, path, std::filesystem::absolute(path).parent_path().string());
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
  int found = -1;
  for (size_t i = 0; i < stations.size(); ++i) {
    if (stations[i].name == name) return int(i);
    if (stations[i].station == name) {
      if (found >= 0) return -1;  // CS001 under HBA_DUAL: HBA0 or HBA1?
      found = int(i);
    }
  }
  return found;
}

std::vector<int> ObservationSettings::subbandsOfBeam(int beam) const {
  std::vector<int> indices;
  for (const SubbandSettings& sb : subbands)
    if (sb.beam == beam) indices.push_back(sb.index);
  return indices;
}

double ObservationSettings::instrumentalDelay(int station) const {
  if (!correctClocks) return 0;
  const StationSettings& st = stations.at(size_t(station));
  return st.clockCorrection + (st.delay[0] + st.delay[1]) / 2;
}

double ObservationSettings::polarisationDelay(int station, int pol) const {
  if (!correctClocks) return 0;
  const StationSettings& st = stations.at(size_t(station));
  return st.delay.at(size_t(pol)) - (st.delay[0] + st.delay[1]) / 2;
}

double ObservationSettings::polarisationPhase(int station, int pol) const {
  return correctClocks ? stations.at(size_t(station)).phase0.at(size_t(pol)) : 0;
}

}  // namespace rtcp
