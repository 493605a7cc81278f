#include "rtcp/ObservationSummary.h"

#include <algorithm>
#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "rtcp/Files.h"

namespace rtcp {
namespace {

std::string jsonNumber(double value) {
  std::ostringstream out;
  out << std::setprecision(12) << value;
  return out.str();
}

std::string jsonList(const std::vector<std::string>& items, const std::string& indent) {
  if (items.empty()) return "[]";
  std::string text = "[\n";
  for (size_t i = 0; i < items.size(); ++i)
    text += indent + "  " + jsonString(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  return text + indent + "]";
}

/// `"key": value` appended to a JSON object being written (after a comma unless it is the
/// first member).
template <typename T>
void appendNumber(std::string& json, const char* key, T value) {
  json += std::string(json.back() == '{' ? "" : ", ") + "\"" + key + "\": ";
  if constexpr (std::is_floating_point_v<T>)
    json += jsonNumber(value);
  else
    json += std::to_string(value);
}

/// A beam-formed file's numbers with their keys, in the summary's order, for writing and
/// reading alike.
template <typename FileT, typename Visit>
void forEachFileNumber(FileT& f, Visit visit) {
  visit("subbands", f.nrSubbands);
  visit("bytes", f.bytes);
  visit("blocksExpected", f.blocksExpected);
  visit("blocksWritten", f.blocksWritten);
  visit("subbandBlocksLost", f.subbandBlocksLost);
}

/// ionproc's beam-formed block counts with their keys (under beamFormedBlocks).
template <typename SendT, typename Visit>
void forEachSendCount(SendT& s, Visit visit) {
  visit("queued", s.queued);
  visit("sent", s.sent);
  visit("dropped", s.dropped);
  visit("spooled", s.spooled);
  visit("resent", s.resent);
  visit("unprotected", s.unprotected);
}

/// A station's numbers with their keys, in the summary's order, for writing and reading
/// alike.
template <typename StationT, typename Visit>
void forEachStationNumber(StationT& s, Visit visit) {
  visit("packetsReceived", s.packetsReceived);
  visit("packetsExpected", s.packetsExpected);
  visit("packetsLost", s.packetsLost);
  visit("lossFraction", s.lossFraction);
  visit("packetsLate", s.packetsLate);
  visit("packetsDuplicated", s.packetsDuplicated);
  visit("packetsRejected", s.packetsRejected);
  visit("packetsImplausible", s.packetsImplausible);
  visit("packetsBeforeStart", s.packetsBeforeStart);
  visit("packetsBeforeWindow", s.packetsBeforeWindow);
  visit("packetsAfterWindow", s.packetsAfterWindow);
  visit("packetsRecorded", s.packetsRecorded);
  visit("packetsNotRecorded", s.packetsNotRecorded);
  visit("flaggedFraction", s.flaggedFraction);
  visit("preCorrelationFlagged", s.preCorrelationFlagged);
  visit("postCorrelationFlagged", s.postCorrelationFlagged);
  visit("brokenSubbandBlocks", s.brokenSubbandBlocks);
  visit("incoherentIntegrations", s.incoherentIntegrations);
  visit("subbandLevelFlagged", s.subbandLevelFlagged);
  visit("subbandLevelFlaggedBlocks", s.subbandLevelFlaggedBlocks);
}

std::string stationJson(const StationSummary& s) {
  std::string ports = "[";
  for (size_t k = 0; k < s.ports.size(); ++k)
    ports += std::string(k ? ", " : "") +
             "{\"packetsReceived\": " + std::to_string(s.ports[k].packetsReceived) +
             ", \"packetsExpected\": " + std::to_string(s.ports[k].packetsExpected) +
             ", \"packetsLost\": " + std::to_string(s.ports[k].packetsLost) + "}";
  std::string json = "{\"name\": " + jsonString(s.name);
  forEachStationNumber(s,
                       [&](const char* key, const auto& value) { appendNumber(json, key, value); });
  return json + ", \"ports\": " + ports + "]}";
}

std::string percent(double fraction) {
  std::ostringstream out;
  out << std::setprecision(3) << 100 * fraction << " %";
  return out.str();
}

/// Why a station's data are degraded, or "" when they are not.
std::string stationDegradation(const StationSummary& s) {
  std::vector<std::string> causes;
  if (s.lossFraction > kDegradedFraction) {
    std::string cause = percent(s.lossFraction) + " of its packets lost";
    if (s.packetsLate) cause += " (" + std::to_string(s.packetsLate) + " arrived late)";
    causes.push_back(cause);
  }
  if (s.flaggedFraction > kDegradedFraction)
    causes.push_back(percent(s.flaggedFraction) + " of its samples flagged");
  if (s.packetsImplausible)
    causes.push_back(std::to_string(s.packetsImplausible) +
                     " packets stamped after the observation or ahead of the clock rejected");
  if (s.packetsDuplicated)
    causes.push_back(std::to_string(s.packetsDuplicated) +
                     " duplicated packets (the first to arrive kept)");
  if (s.packetsRejected && s.lossFraction > kDegradedFraction)
    causes.push_back(std::to_string(s.packetsRejected) + " malformed packets rejected");
  std::string text;
  for (const std::string& cause : causes) text += (text.empty() ? "" : ", ") + cause;
  return text.empty() ? text : s.name + ": " + text;
}

using boost::property_tree::ptree;

/// The elements of a JSON array of strings (absent: empty).
std::vector<std::string> strings(const ptree& tree, const std::string& key) {
  std::vector<std::string> values;
  if (const auto array = tree.get_child_optional(key))
    for (const auto& [name, element] : *array) values.push_back(element.data());
  return values;
}

/// A number that may be written as an integer, a float or null.
template <typename T>
T number(const ptree& tree, const std::string& key) {
  const auto text = tree.get_optional<std::string>(key);
  if (!text || text->empty() || *text == "null") return T{};
  return T(std::stod(*text));
}

/// The members of a JSON object of numbers, by name.
template <typename T>
std::map<std::string, T> numbers(const ptree& tree, const std::string& key) {
  std::map<std::string, T> values;
  if (const auto object = tree.get_child_optional(key))
    for (const auto& [name, unused] : *object) values[name] = number<T>(*object, name);
  return values;
}

StationDataSummary stationData(const ptree& tree) {
  StationDataSummary d;
  d.directory = tree.get<std::string>("directory", "");
  d.parset = tree.get<std::string>("parset", "");
  d.status = tree.get<std::string>("status", "");
  d.from = tree.get<std::string>("from", "");
  d.to = tree.get<std::string>("to", "");
  d.stations = strings(tree, "stations");
  d.nrSubbands = number<int>(tree, "subbands");
  d.bytes = number<uint64_t>(tree, "bytes");
  d.packets = number<uint64_t>(tree, "packets");
  d.packetsNotRecorded = number<uint64_t>(tree, "packetsNotRecorded");
  d.missing = strings(tree, "missing");
  return d;
}

}  // namespace

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string StationDataSummary::line() const {
  std::ostringstream t;
  t << directory << ": " << status << ", " << bytes << " bytes, " << from << " .. " << to
    << " UTC, " << stations.size() << " station(s) (";
  for (size_t i = 0; i < stations.size(); ++i) t << (i ? ", " : "") << stations[i];
  t << "), " << nrSubbands << " subband(s); " << packets << " packets recorded, "
    << packetsNotRecorded << " not recorded";
  if (!missing.empty()) t << "; " << missing.size() << " part(s) missing";
  return t.str();
}

const char* toString(ObservationStatus status) {
  switch (status) {
    case ObservationStatus::kOk:
      return "ok";
    case ObservationStatus::kDegraded:
      return "degraded";
    case ObservationStatus::kFailed:
      return "failed";
  }
  return "failed";
}

void ObservationSummary::assess() {
  degradations.clear();
  for (const StationSummary& s : stations)
    if (std::string cause = stationDegradation(s); !cause.empty())
      degradations.push_back(std::move(cause));
  if (blocksDropped)
    degradations.push_back(std::to_string(blocksDropped) +
                           " blocks served flagged: the correlator ranks fell behind");
  if (integrationsExpected &&
      double(integrationsDropped) > kDegradedFraction * double(integrationsExpected))
    degradations.push_back(std::to_string(integrationsDropped) + " of " +
                           std::to_string(integrationsExpected) +
                           " integrations did not reach storage");
  for (const BeamFormedFileSummary& f : beamFormedFiles)
    if (f.blocksExpected > 0 && double(f.subbandBlocksLost) > kDegradedFraction *
                                                                  double(f.blocksExpected) *
                                                                  double(std::max(1, f.nrSubbands)))
      degradations.push_back(f.path + ": " + std::to_string(f.subbandBlocksLost) +
                             " subband-blocks lost (zeros of weight 0)");
}

std::string BeamFormedSendSummary::line() const {
  return std::to_string(queued) + " blocks queued, " + std::to_string(sent) + " sent, " +
         std::to_string(dropped) + " dropped, " + std::to_string(spooled) + " spooled, " +
         std::to_string(resent) + " resent, " + std::to_string(unprotected) + " not kept to resend";
}

namespace {

std::string beamFormedFileJson(const BeamFormedFileSummary& f) {
  std::string json = "{\"path\": " + jsonString(f.path);
  forEachFileNumber(f, [&](const char* key, const auto& value) { appendNumber(json, key, value); });
  return json + "}";
}

std::string beamFormedSendJson(const BeamFormedSendSummary& s) {
  std::string json = "{";
  forEachSendCount(s, [&](const char* key, const auto& value) { appendNumber(json, key, value); });
  return json + "}";
}

std::string stationDataJson(const StationDataSummary& d) {
  if (d.directory.empty()) return "null";
  std::ostringstream j;
  j << "{\"directory\": " << jsonString(d.directory) << ", \"parset\": " << jsonString(d.parset)
    << ", \"status\": " << jsonString(d.status) << ", \"from\": " << jsonString(d.from)
    << ", \"to\": " << jsonString(d.to) << ", \"stations\": [";
  for (size_t i = 0; i < d.stations.size(); ++i) j << (i ? ", " : "") << jsonString(d.stations[i]);
  j << "], \"subbands\": " << d.nrSubbands << ", \"bytes\": " << d.bytes
    << ", \"packets\": " << d.packets << ", \"packetsNotRecorded\": " << d.packetsNotRecorded
    << ", \"missing\": " << jsonList(d.missing, "    ") << "}";
  return j.str();
}

/// Its line() and the parts it lacks, a line each.
std::string stationDataText(const StationDataSummary& d) {
  std::string text = d.line() + "\n";
  for (const std::string& line : d.missing) text += "    missing     " + line + "\n";
  return text;
}

}  // namespace

std::string ObservationSummary::toJson() const {
  std::ostringstream j;
  j << "{\n"
    << "  \"observationId\": " << observationId << ",\n"
    << "  \"parset\": " << jsonString(parset) << ",\n"
    << "  \"status\": " << jsonString(toString(status())) << ",\n"
    << "  \"reason\": " << jsonString(reason) << ",\n"
    << "  \"degradations\": " << jsonList(degradations, "  ") << ",\n"
    << "  \"start\": " << jsonString(start) << ",\n"
    << "  \"stop\": " << jsonString(stop) << ",\n"
    << "  \"durationSeconds\": " << jsonNumber(durationSeconds) << ",\n"
    << "  \"wallSeconds\": " << jsonNumber(wallSeconds) << ",\n"
    << "  \"realTimeFactor\": " << jsonNumber(realTimeFactor) << ",\n"
    << "  \"bytesWritten\": " << bytesWritten << ",\n"
    << "  \"measurementSets\": " << jsonList(measurementSets, "  ") << ",\n"
    << "  \"partialMeasurementSets\": " << jsonList(partialMeasurementSets, "  ") << ",\n"
    << "  \"beamFormedFiles\": [";
  for (size_t i = 0; i < beamFormedFiles.size(); ++i)
    j << (i ? ",\n    " : "\n    ") << beamFormedFileJson(beamFormedFiles[i]);
  j << (beamFormedFiles.empty() ? "],\n" : "\n  ],\n")
    << "  \"beamFormedBlocks\": " << beamFormedSendJson(beamFormedBlocks) << ",\n"
    << "  \"stations\": [";
  for (size_t i = 0; i < stations.size(); ++i)
    j << (i ? ",\n    " : "\n    ") << stationJson(stations[i]);
  j << (stations.empty() ? "],\n" : "\n  ],\n") << "  \"blocksDropped\": " << blocksDropped << ",\n"
    << "  \"integrationsStored\": " << integrationsStored << ",\n"
    << "  \"integrationsFlagged\": " << integrationsFlagged << ",\n"
    << "  \"integrationsDropped\": " << integrationsDropped << ",\n"
    << "  \"integrationsExpected\": " << integrationsExpected << ",\n"
    << "  \"exitCodes\": {";
  size_t n = 0;
  for (const auto& [part, code] : exitCodes)
    j << (n++ ? ", " : "") << jsonString(part) << ": " << code;
  j << "},\n"
    << "  \"cpuSeconds\": {";
  n = 0;
  for (const auto& [part, seconds] : cpuSeconds)
    j << (n++ ? ", " : "") << jsonString(part) << ": " << jsonNumber(seconds);
  j << "},\n"
    << "  \"plots\": " << jsonList(plots, "  ") << ",\n"
    << "  \"recording\": " << stationDataJson(recording) << ",\n"
    << "  \"dumps\": [";
  for (size_t i = 0; i < dumps.size(); ++i)
    j << (i ? ",\n    " : "\n    ") << stationDataJson(dumps[i]);
  j << (dumps.empty() ? "],\n" : "\n  ],\n") << "  \"flagging\": " << jsonList(flagging, "  ")
    << ",\n"
    << "  \"warnings\": " << jsonList(warnings, "  ") << "\n"
    << "}\n";
  return j.str();
}

std::string ObservationSummary::toText() const {
  std::ostringstream t;
  t << "observation " << observationId << ": "
    << (status() == ObservationStatus::kFailed ? "FAILED" : toString(status()))
    << (reason.empty() ? "" : " (" + reason + ")") << "\n";
  for (const std::string& d : degradations) t << "  degraded      " << d << "\n";
  t << "  parset        " << parset << "\n  time          " << start << " .. " << stop << " UTC ("
    << durationSeconds << " s; " << std::setprecision(3) << wallSeconds
    << " s wall, real-time factor " << realTimeFactor << ")\n  written       " << bytesWritten
    << " bytes in " << measurementSets.size() << " MeasurementSet(s)\n";
  for (const std::string& ms : measurementSets) t << "    " << ms << "\n";
  for (const std::string& ms : partialMeasurementSets)
    t << "    " << ms << " (incomplete: the observation failed)\n";
  if (!beamFormedFiles.empty())
    t << "  beam-formed   " << beamFormedFiles.size()
      << " file(s): blocks written / expected, subband-blocks lost, bytes\n";
  for (const BeamFormedFileSummary& f : beamFormedFiles)
    t << "    " << f.path << ": " << f.blocksWritten << " / " << f.blocksExpected << ", "
      << f.subbandBlocksLost << " lost, " << f.bytes << " bytes\n";
  if (!beamFormedFiles.empty()) t << "    sent by ionproc: " << beamFormedBlocks.line() << "\n";
  t << "  stored        " << integrationsStored << " of " << integrationsExpected
    << " integrations in the MSs, " << integrationsFlagged << " flagged gaps\n"
    << "  dropped       " << blocksDropped << " blocks (ranks behind), " << integrationsDropped
    << " integrations (not stored)\n  stations      packets received / expected, lost\n";
  for (const StationSummary& s : stations) {
    t << "    " << std::left << std::setw(10) << s.name << std::right << " " << s.packetsReceived
      << " / " << s.packetsExpected << ", " << s.packetsLost << " (" << std::setprecision(3)
      << 100 * s.lossFraction << " %)";
    if (s.ports.size() > 1)
      for (size_t k = 0; k < s.ports.size(); ++k)
        t << (k ? ", " : "; ports: ") << k << ": "
          << (s.ports[k].packetsExpected ? std::to_string(s.ports[k].packetsLost) + " lost"
                                         : "unused");
    if (s.packetsLate || s.packetsDuplicated || s.packetsRejected || s.packetsImplausible ||
        s.packetsBeforeStart)
      t << "; not received: " << s.packetsLate << " late, " << s.packetsDuplicated
        << " duplicated, " << s.packetsRejected << " rejected, " << s.packetsImplausible
        << " implausible, " << s.packetsBeforeStart << " before the start";
    if (s.packetsBeforeWindow || s.packetsAfterWindow)
      t << "; outside start..stop: " << s.packetsBeforeWindow << " before, " << s.packetsAfterWindow
        << " after";
    if (s.packetsRecorded || s.packetsNotRecorded)
      t << "; recorded " << s.packetsRecorded << ", not recorded " << s.packetsNotRecorded;
    t << "; " << percent(s.flaggedFraction) << " flagged";
    if (!flagging.empty()) {
      t << "; flagged online: " << percent(s.preCorrelationFlagged) << " before correlation, "
        << percent(s.postCorrelationFlagged) << " after (AOFlagger)";
      if (s.brokenSubbandBlocks) t << ", broken in " << s.brokenSubbandBlocks << " subband-blocks";
      if (s.incoherentIntegrations)
        t << ", no sky in " << s.incoherentIntegrations << " subband-integrations";
      if (s.subbandLevelFlaggedBlocks)
        t << ", " << s.subbandLevelFlaggedBlocks << " subband-blocks far above the bandpass ("
          << percent(s.subbandLevelFlagged) << ")";
    }
    t << "\n";
  }
  if (!recording.directory.empty()) t << "  recording     " << stationDataText(recording);
  for (const StationDataSummary& dump : dumps) t << "  dump          " << stationDataText(dump);
  t << "  exit codes   ";
  for (const auto& [part, code] : exitCodes) t << " " << part << "=" << code;
  t << "\n";
  if (!cpuSeconds.empty()) {
    t << "  cpu seconds  ";
    for (const auto& [part, seconds] : cpuSeconds)
      t << " " << part << "=" << std::setprecision(3) << seconds;
    t << "\n";
  }
  for (const std::string& line : flagging) t << "  flagging      " << line << "\n";
  for (const std::string& plot : plots) t << "  plot          " << plot << "\n";
  for (const std::string& warning : warnings) t << "  warning       " << warning << "\n";
  return t.str();
}

void ObservationSummary::write(const std::string& directory) const {
  for (const auto& [name, text] :
       {std::pair{"summary.txt", toText()}, std::pair{"summary.json", toJson()}}) {
    const std::string path = directory + "/" + name;
    std::ofstream file(path);
    file << text;
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path);
  }
}

ObservationSummary ObservationSummary::fromFile(const std::string& path) {
  const std::optional<std::string> text = tryReadFile(path);
  if (!text) throw std::runtime_error(path + ": cannot open");
  return fromJson(*text, path);
}

ObservationSummary ObservationSummary::fromJson(const std::string& text, const std::string& name) {
  ptree tree;
  try {
    std::istringstream in(text);
    boost::property_tree::read_json(in, tree);
  } catch (const boost::property_tree::json_parser_error& e) {
    throw std::runtime_error(name + ":" + std::to_string(e.line()) + ": " + e.message());
  }
  ObservationSummary s;
  std::string status;
  try {
    s.observationId = number<int64_t>(tree, "observationId");
    s.parset = tree.get<std::string>("parset", "");
    status = tree.get<std::string>("status", "");
    s.reason = tree.get<std::string>("reason", "");
    s.start = tree.get<std::string>("start", "");
    s.stop = tree.get<std::string>("stop", "");
    s.durationSeconds = number<double>(tree, "durationSeconds");
    s.wallSeconds = number<double>(tree, "wallSeconds");
    s.realTimeFactor = number<double>(tree, "realTimeFactor");
    s.bytesWritten = number<uint64_t>(tree, "bytesWritten");
    s.measurementSets = strings(tree, "measurementSets");
    forEachSendCount(s.beamFormedBlocks, [&](const char* key, auto& value) {
      value = number<std::decay_t<decltype(value)>>(tree, std::string("beamFormedBlocks.") + key);
    });
    if (const auto files = tree.get_child_optional("beamFormedFiles"))
      for (const auto& entry : *files) {
        const ptree& f = entry.second;  // a lambda captures no structured binding (clang 14)
        BeamFormedFileSummary file;
        file.path = f.get<std::string>("path", "");
        forEachFileNumber(file, [&](const char* key, auto& value) {
          value = number<std::decay_t<decltype(value)>>(f, key);
        });
        s.beamFormedFiles.push_back(file);
      }
    if (const auto stations = tree.get_child_optional("stations"))
      for (const auto& entry : *stations) {
        const ptree& st = entry.second;
        StationSummary station;
        station.name = st.get<std::string>("name", "?");
        forEachStationNumber(station, [&](const char* key, auto& value) {
          value = number<std::decay_t<decltype(value)>>(st, key);
        });
        s.stations.push_back(station);
      }
    s.blocksDropped = number<uint64_t>(tree, "blocksDropped");
    s.integrationsStored = number<uint64_t>(tree, "integrationsStored");
    s.integrationsFlagged = number<uint64_t>(tree, "integrationsFlagged");
    s.integrationsDropped = number<uint64_t>(tree, "integrationsDropped");
    s.integrationsExpected = number<uint64_t>(tree, "integrationsExpected");
    s.degradations = strings(tree, "degradations");
    s.exitCodes = numbers<int>(tree, "exitCodes");
    s.cpuSeconds = numbers<double>(tree, "cpuSeconds");
    s.plots = strings(tree, "plots");
    if (const auto recording = tree.get_child_optional("recording");
        recording && !recording->empty())
      s.recording = stationData(*recording);
    if (const auto dumps = tree.get_child_optional("dumps"))
      for (const auto& [unused, d] : *dumps) s.dumps.push_back(stationData(d));
    s.flagging = strings(tree, "flagging");
    s.warnings = strings(tree, "warnings");
  } catch (const std::exception& e) {
    throw std::runtime_error(name + ": unexpected contents: " + e.what());
  }
  if (status != "ok" && status != "degraded" && status != "failed")
    throw std::runtime_error(name + ": status '" + status + "' is neither ok, degraded nor failed");
  s.ok = status != "failed";
  if (status == "degraded" && s.degradations.empty()) s.degradations.push_back("(no cause given)");
  if (status == "ok") s.degradations.clear();
  return s;
}

std::pair<std::string, std::string> splitHostPath(const std::string& entry) {
  const size_t colon = entry.find(':');
  if (colon == 0 || colon == std::string::npos || colon > entry.find('/')) return {"", entry};
  return {entry.substr(0, colon), entry.substr(colon + 1)};
}

}  // namespace rtcp
