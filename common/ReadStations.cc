// ObservationSettings: antenna fields, their inputs, beamlets and corrections
// (SettingsReaders.h).
#include <map>
#include <set>
#include <stdexcept>

#include "SettingsReaders.h"
#include "rtcp/AntennaFields.h"
#include "rtcp/Logger.h"
#include "rtcp/ParsetLimits.h"

namespace rtcp::settings {
namespace {

const std::string kStationList = "Observation.VirtualInstrument.stationList";
const std::string kReference = "Observation.referencePhaseCenter";

/// The field's position: PIC.Core.<field>.phaseCenter, else the station table.
std::array<double, 3> fieldPosition(const Parset& p, const StationTable& table,
                                    const StationSettings& st) {
  const std::string key = fieldKey(st.name, "phaseCenter");
  if (p.isDefined(key)) return readPosition(p, key);
  if (const auto entry = table.find(st.station, st.field)) return entry->position;
  p.fail(kStationList, "station '" + st.name + "' has no position: neither " + key +
                           " nor the station table gives one");
}

/// Subband i on stream i / perPacket, beamlet i % perPacket (DESIGN §2.1).
std::vector<BeamletSlot> inOrder(int nrSubbands, int perPacket) {
  std::vector<BeamletSlot> slots;
  for (int i = 0; i < nrSubbands; ++i) slots.push_back({i / perPacket, i % perPacket});
  return slots;
}

/// COBALT's Observation.Dataslots.<field>.RSPBoardList / DataslotList (else
/// Observation.rspBoardList / rspSlotList): board = stream, slot = beamlet.
std::vector<BeamletSlot> fromDataslots(const Parset& p, const ObservationSettings& s,
                                       const std::string& field, std::string& key) {
  std::string boards = "Observation.Dataslots." + field + ".RSPBoardList";
  std::string slots = "Observation.Dataslots." + field + ".DataslotList";
  if (!p.isDefined(boards) && !p.isDefined(slots))
    boards = "Observation.rspBoardList", slots = "Observation.rspSlotList";
  if (!p.isDefined(boards) && !p.isDefined(slots)) return {};
  const std::vector<int64_t> board = p.getIntVector(boards), slot = p.getIntVector(slots);
  const size_t n = size_t(s.nrSubbands());
  for (const auto& [list, name] : {std::pair{&board, boards}, std::pair{&slot, slots}})
    if (list->size() < n)
      p.fail(name, "gives " + std::to_string(list->size()) + " entries for the " +
                       std::to_string(n) + " subbands of the observation");
  std::vector<BeamletSlot> result;
  for (size_t i = 0; i < n; ++i) result.push_back({int(board[i]), int(slot[i])});
  key = slots;
  return result;
}

/// BG/P's Observation.Beam[b].beamletList: beamlet g is slot g % perPacket of stream
/// g / perPacket.
std::vector<BeamletSlot> fromBeamletLists(const Parset& p, const ObservationSettings& s,
                                          std::string& key) {
  std::vector<BeamletSlot> result;
  for (size_t b = 0; b < s.beams.size(); ++b) {
    const std::string listKey = beamKey(b, "beamletList");
    const std::vector<int64_t> list = p.getIntVector(listKey, {});
    if (list.empty()) return {};  // all beams give one, or none is used
    const std::vector<int> subbands = s.subbandsOfBeam(int(b));
    if (list.size() != subbands.size())
      p.fail(listKey, std::to_string(list.size()) + " beamlets for the " +
                          std::to_string(subbands.size()) + " subbands of beam " +
                          std::to_string(b));
    for (const int64_t g : list) {
      if (g < 0) p.fail(listKey, "beamlet " + std::to_string(g) + " is negative");
      result.push_back({int(g / s.beamletsPerPacket()), int(g % s.beamletsPerPacket())});
    }
    key = listKey;
  }
  return result;
}

/// Checks that every subband has a stream the field has and a beamlet a packet holds,
/// and that no two subbands share a beamlet.
void checkBeamlets(const Parset& p, const ObservationSettings& s, const StationSettings& st,
                   const std::string& key, Problems& problems) {
  std::set<std::pair<int, int>> used;
  for (size_t i = 0; i < st.beamlets.size(); ++i) {
    const BeamletSlot& slot = st.beamlets[i];
    const std::string subband = "subband " + std::to_string(s.subbands[i].number);
    if (slot.stream < 0 || slot.stream >= int(st.inputs.size()))
      problems.error(key, subband + " of '" + st.name + "' is on board " +
                              std::to_string(slot.stream) + ", but " +
                              fieldKey(st.name, "RSP.ports") + " gives " +
                              std::to_string(st.inputs.size()) + " port(s)");
    else if (slot.beamlet < 0 || slot.beamlet >= s.beamletsPerPacket())
      problems.error(key, subband + " of '" + st.name + "' is in slot " +
                              std::to_string(slot.beamlet) + ", outside the " +
                              std::to_string(s.beamletsPerPacket()) + " beamlets of a " +
                              std::to_string(s.bitsPerSample) + "-bit packet");
    else if (!used.insert({slot.stream, slot.beamlet}).second)
      problems.error(key, subband + " of '" + st.name + "' shares board " +
                              std::to_string(slot.stream) + " slot " +
                              std::to_string(slot.beamlet) + " with another subband");
    else
      continue;
    return;  // one report per field
  }
  (void)p;
}

void readBeamlets(const Parset& p, const ObservationSettings& s, StationSettings& st,
                  Problems& problems) {
  std::string key;
  st.beamlets = fromDataslots(p, s, st.name, key);
  if (st.beamlets.empty()) st.beamlets = fromBeamletLists(p, s, key);
  if (!st.beamlets.empty()) {
    checkBeamlets(p, s, st, key, problems);
    return;
  }
  const std::string portsKey = fieldKey(st.name, "RSP.ports");
  const int64_t capacity = int64_t(st.inputs.size()) * s.beamletsPerPacket();
  if (s.nrSubbands() > capacity)
    problems.error(portsKey, std::to_string(s.nrSubbands()) + " subbands do not fit in " +
                                 std::to_string(st.inputs.size()) + " port(s) of " +
                                 std::to_string(s.beamletsPerPacket()) + " beamlets for station '" +
                                 st.name + "'");
  st.beamlets = inOrder(s.nrSubbands(), s.beamletsPerPacket());
}

/// Clock correction, per-polarisation delays and phases (COBALT's station calibration).
void readCorrections(const Parset& p, const ObservationSettings& s, StationSettings& st,
                     Problems& problems) {
  st.clockCorrection = p.getDouble(fieldKey(st.name, "clockCorrectionTime"), 0.0);
  const std::string calibration = st.name + "." + s.antennaSet + "." + s.bandFilter;
  const char* pols[] = {"X", "Y"};
  for (int pol = 0; pol < 2; ++pol) {
    st.delay[pol] = p.getDouble(fieldKey(calibration, std::string("delay.") + pols[pol]), 0.0);
    st.phase0[pol] = p.getDouble(fieldKey(calibration, std::string("phase0.") + pols[pol]), 0.0);
  }
  if ((st.delay[0] > 0 || st.delay[1] > 0) && st.clockCorrection != 0) {
    problems.warn(
        fieldKey(st.name, "clockCorrectionTime"),
        "ignored in favour of " + fieldKey(calibration, "delay.X/Y") + " (as COBALT does)");
    st.clockCorrection = 0;
  }
}

StationSettings readField(const Parset& p, const StationTable& table, Problems& problems,
                          const ObservationSettings& s, const AntennaFieldName& name) {
  StationSettings st;
  st.name = name.name();
  st.station = name.station;
  st.field = name.field;
  const auto id = table.stationId(name.station);
  if (!id)
    p.fail(kStationList, "unknown station '" + name.station + "' (not in the station table)");
  st.id = *id;
  problems.guard([&] { st.position = fieldPosition(p, table, st); });
  const std::string portsKey = fieldKey(st.name, "RSP.ports");
  if (!p.isDefined(portsKey)) {
    problems.error(kStationList, "station '" + st.name + "' has no input streams: key '" +
                                     portsKey + "' is missing");
  } else if (problems.guard([&] { st.inputs = p.getStringVector(portsKey); })) {
    problems.guard([&] { readBeamlets(p, s, st, problems); });
  }
  problems.guard([&] { readCorrections(p, s, st, problems); });
  return st;
}

}  // namespace

void readStations(const Parset& p, const StationTable& table, Problems& problems,
                  ObservationSettings& s) {
  if (s.antennaField.empty()) return;  // a bad antenna set is reported already
  std::vector<AntennaFieldName> fields;
  problems.guard([&] {
    const std::vector<std::string> names = p.getStringVector(kStationList);
    if (names.empty()) p.fail(kStationList, "the station list is empty");
    if (names.size() > kMaxStationListEntries)
      p.fail(kStationList, std::to_string(names.size()) + " entries, more than the " +
                               std::to_string(kMaxStationListEntries) + " a station list may have");
    try {
      fields = antennaFieldNames(names, s.antennaSet);
    } catch (const std::invalid_argument& e) {
      const bool badSet = std::string(e.what()).starts_with("unknown antenna set");
      p.fail(badSet ? "Observation.antennaSet" : kStationList, e.what());
    }
  });
  std::set<std::string> seen;
  for (const AntennaFieldName& field : fields) {
    if (!seen.insert(field.name()).second) {
      problems.error(kStationList, "station '" + field.name() + "' is listed twice");
      continue;
    }
    problems.guard([&] { s.stations.push_back(readField(p, table, problems, s, field)); });
  }
  problems.guard([&] {
    s.referencePhaseCenter = p.isDefined(kReference) ? readPosition(p, kReference)
                             : s.stations.empty()    ? std::array<double, 3>{}
                                                     : s.stations.front().position;
  });
}

void readTiedArray(const Parset& p, ObservationSettings& s) {
  const std::string key = "OLAP.tiedArrayStationNames";
  s.tiedArrayStationNames = p.getStringVector(key, {});
  std::set<std::string> seen;
  for (std::string& name : s.tiedArrayStationNames) {
    const int index = s.stationIndex(name);
    if (index < 0)
      p.fail(key, "station '" + name + "' is not in " + kStationList +
                      " (or names several of its antenna fields)");
    name = s.stations[size_t(index)].name;  // the field's name
    if (!seen.insert(name).second) p.fail(key, "station '" + name + "' is listed twice");
  }
}

}  // namespace rtcp::settings
