#include "rtcp/StatusFile.h"

#include "rtcp/StatusText.h"

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
  visit("samplesLevelFlagged", s.samplesLevelFlagged);
  visit("subbandBlocksLevelFlagged", s.subbandBlocksLevelFlagged);
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
  StatusWriter out;
  forEachCounter(*this, [&](const char* key, const auto& value) { out.add(key, value); });
  if (!trigger.empty()) out.add("trigger", trigger);
  out.add("stations", stations.size());
  for (size_t i = 0; i < stations.size(); ++i) {
    const std::string prefix = stationPrefix(i);
    out.add(prefix + "name", stations[i].name);
    forEachStationCounter(
        stations[i], [&](const char* key, const auto& value) { out.add(prefix + key, value); });
    out.add(prefix + "ports", stations[i].portsAccepted.size());
    for (size_t k = 0; k < stations[i].portsAccepted.size(); ++k)
      out.add(prefix + "port[" + std::to_string(k) + "].accepted", stations[i].portsAccepted[k]);
  }
  return out.text();
}

IonStatus IonStatus::parse(const std::string& text) {
  const StatusReader in(text);
  IonStatus status;
  forEachCounter(status, [&](const char* key, auto& value) { in.take(key, value); });
  in.take("trigger", status.trigger);
  size_t nrStations = 0;
  in.take("stations", nrStations);
  for (size_t i = 0; i < nrStations; ++i) {
    Station station;
    const std::string prefix = stationPrefix(i);
    in.take(prefix + "name", station.name);
    forEachStationCounter(station,
                          [&](const char* key, auto& value) { in.take(prefix + key, value); });
    size_t nrPorts = 0;
    in.take(prefix + "ports", nrPorts);
    station.portsAccepted.assign(nrPorts, 0);
    for (size_t k = 0; k < nrPorts; ++k)
      in.take(prefix + "port[" + std::to_string(k) + "].accepted", station.portsAccepted[k]);
    status.stations.push_back(station);
  }
  return status;
}

IonStatus IonStatus::read(const std::string& path) { return readStatusFile(path, &parse); }

std::string IonStatus::formatLine() const { return statusLine(kLinePrefix, format()); }

std::optional<IonStatus> IonStatus::parseLine(const std::string& line) {
  return parseStatusLine(kLinePrefix, line, &parse);
}

}  // namespace rtcp::ion
