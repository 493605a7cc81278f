#include "rtcp/StatusFile.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

namespace rtcp::ion {
namespace {

/// The per-station counters with their key names, for writing and reading alike.
template <typename StationT, typename Visit>
void forEachStationCounter(StationT& s, Visit visit) {
  visit("packetsReceived", s.packetsReceived);
  visit("packetsAccepted", s.packetsAccepted);
  visit("acceptedBeforeStart", s.acceptedBeforeStart);
  visit("acceptedAfterStop", s.acceptedAfterStop);
  visit("late", s.late);
  visit("duplicated", s.duplicated);
  visit("rejected", s.rejected);
  visit("implausible", s.implausible);
  visit("beforeStart", s.beforeStart);
  visit("blocksServed", s.blocksServed);
  visit("samplesServed", s.samplesServed);
  visit("samplesFlagged", s.samplesFlagged);
  visit("blocksGone", s.blocksGone);
  visit("lastBlock", s.lastBlock);
  visit("packetsRecorded", s.packetsRecorded);
  visit("packetsNotRecorded", s.packetsNotRecorded);
}

/// The observation-wide numbers with their key names.
template <typename StatusT, typename Visit>
void forEachCounter(StatusT& s, Visit visit) {
  visit("time", s.wallTime);
  visit("finished", s.finished);
  visit("blocks", s.nrBlocks);
  visit("blockDuration", s.blockDuration);
  visit("newestBlock", s.newestBlock);
  visit("newestBlockLag", s.newestBlockLag);
  visit("integrator.blocks", s.blocksIntegrated);
  visit("integrator.integrations", s.integrations);
  visit("integrator.incomplete", s.incompleteIntegrations);
  visit("storage.queued", s.storageQueued);
  visit("storage.sent", s.storageSent);
  visit("storage.dropped", s.storageDropped);
  visit("storage.connections", s.storageConnections);
  visit("beamformed.queued", s.beamFormedQueued);
  visit("beamformed.sent", s.beamFormedSent);
  visit("beamformed.dropped", s.beamFormedDropped);
  visit("beamformed.spooled", s.beamFormedSpooled);
  visit("beamformed.resent", s.beamFormedResent);
  visit("beamformed.unprotected", s.beamFormedUnprotected);
  visit("link.connectionsRefused", s.linkConnectionsRefused);
}

std::string stationPrefix(size_t i) { return "station[" + std::to_string(i) + "]."; }

}  // namespace

std::string IonStatus::format() const {
  std::ostringstream out;
  out << std::setprecision(17);
  forEachCounter(*this,
                 [&](const char* key, const auto& value) { out << key << '=' << value << '\n'; });
  if (!trigger.empty()) out << "trigger=" << trigger << '\n';
  out << "stations=" << stations.size() << '\n';
  for (size_t i = 0; i < stations.size(); ++i) {
    out << stationPrefix(i) << "name=" << stations[i].name << '\n';
    forEachStationCounter(stations[i], [&](const char* key, const auto& value) {
      out << stationPrefix(i) << key << '=' << value << '\n';
    });
    out << stationPrefix(i) << "ports=" << stations[i].portsAccepted.size() << '\n';
    for (size_t k = 0; k < stations[i].portsAccepted.size(); ++k)
      out << stationPrefix(i) << "port[" << k << "].accepted=" << stations[i].portsAccepted[k]
          << '\n';
  }
  return out.str();
}

IonStatus IonStatus::parse(const std::string& text) {
  std::map<std::string, std::string> values = parseStatusLines(text);
  IonStatus status;
  auto take = [&](const std::string& key, auto& value) {
    const auto it = values.find(key);
    if (it != values.end()) parseStatusValue(it->second, value, key);
  };
  forEachCounter(status, take);
  if (const auto it = values.find("trigger"); it != values.end()) status.trigger = it->second;
  size_t nrStations = 0;
  take("stations", nrStations);
  for (size_t i = 0; i < nrStations; ++i) {
    Station station;
    const std::string prefix = stationPrefix(i);
    station.name = values[prefix + "name"];
    forEachStationCounter(station,
                          [&](const char* key, auto& value) { take(prefix + key, value); });
    size_t nrPorts = 0;
    take(prefix + "ports", nrPorts);
    station.portsAccepted.assign(nrPorts, 0);
    for (size_t k = 0; k < nrPorts; ++k)
      take(prefix + "port[" + std::to_string(k) + "].accepted", station.portsAccepted[k]);
    status.stations.push_back(station);
  }
  return status;
}

IonStatus IonStatus::read(const std::string& path) {
  const std::string text = readStatusText(path);
  try {
    return parse(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string IonStatus::formatLine() const {
  std::string line = format();  // station names and numbers hold no spaces
  std::replace(line.begin(), line.end(), '\n', ' ');
  if (!line.empty()) line.pop_back();
  return std::string(kLinePrefix) + line;
}

std::optional<IonStatus> IonStatus::parseLine(const std::string& line) {
  if (!line.starts_with(kLinePrefix)) return std::nullopt;
  std::string text = line.substr(kLinePrefix.size());
  std::replace(text.begin(), text.end(), ' ', '\n');
  return parse(text);
}

std::map<std::string, std::string> parseStatusLines(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream in(text);
  int lineNumber = 0;
  for (std::string line; std::getline(in, line);) {
    ++lineNumber;
    if (line.empty()) continue;
    const size_t equals = line.find('=');
    if (equals == std::string::npos || equals == 0)
      throw std::runtime_error("status line " + std::to_string(lineNumber) + ": no key=value: '" +
                               line + "'");
    values[line.substr(0, equals)] = line.substr(equals + 1);
  }
  return values;
}

std::string readStatusText(const std::string& path) {
  std::ifstream file(path);
  if (!file)
    throw std::runtime_error(path + ": cannot read the status file: " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

void writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream file(temporary, std::ios::trunc);
    file << text;
    file.close();
    if (!file) throw std::runtime_error(temporary + ": cannot write: " + std::strerror(errno));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0)
    throw std::runtime_error(path + ": cannot replace with " + temporary + ": " +
                             std::strerror(errno));
}

}  // namespace rtcp::ion
