#include "rtcp/AntennaFields.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace rtcp {
namespace {

bool isCoreStation(const std::string& station) { return station.starts_with("CS"); }

/// The fields one station gives in an antenna set; empty for an unknown set.
std::vector<std::string> fieldsOf(const std::string& station, const std::string& set) {
  const bool core = isCoreStation(station);
  if (set == "LBA" || set == "LBA_INNER" || set == "LBA_OUTER" || set == "LBA_X" ||
      set == "LBA_Y" || set == "LBA_SPARSE_EVEN" || set == "LBA_SPARSE_ODD")
    return {"LBA"};
  if (set == "HBA" || set == "HBA_JOINED" || set == "HBA_JOINED_INNER") return {"HBA"};
  if (set == "HBA_ZERO" || set == "HBA_ZERO_INNER") return {core ? "HBA0" : "HBA"};
  if (set == "HBA_ONE" || set == "HBA_ONE_INNER") return {core ? "HBA1" : "HBA"};
  if (set == "HBA_DUAL" || set == "HBA_DUAL_INNER")
    return core ? std::vector<std::string>{"HBA0", "HBA1"} : std::vector<std::string>{"HBA"};
  return {};
}

}  // namespace

const std::vector<std::string>& knownAntennaSets() {
  static const std::vector<std::string> sets{"LBA_INNER",      "LBA_OUTER",        "LBA_X",
                                             "LBA_Y",          "LBA_SPARSE_EVEN",  "LBA_SPARSE_ODD",
                                             "HBA_JOINED",     "HBA_JOINED_INNER", "HBA_ZERO",
                                             "HBA_ZERO_INNER", "HBA_ONE",          "HBA_ONE_INNER",
                                             "HBA_DUAL",       "HBA_DUAL_INNER"};
  return sets;
}

bool stationNameLess(const std::string& a, const std::string& b) {
  if (a.size() >= 5 && b.size() >= 5) {
    const bool aDutch = (a[0] == 'C' || a[0] == 'R') && a[1] == 'S';
    const bool bDutch = (b[0] == 'C' || b[0] == 'R') && b[1] == 'S';
    if (aDutch && bDutch) return a < b;
    if (aDutch != bDutch) return aDutch;
    return std::strcmp(a.c_str() + 2, b.c_str() + 2) < 0;
  }
  return a < b;
}

std::vector<AntennaFieldName> antennaFieldNames(const std::vector<std::string>& stations,
                                                const std::string& antennaSet) {
  if (fieldsOf("CS001", antennaSet).empty()) {
    std::string known;
    for (const std::string& set : knownAntennaSets()) known += (known.empty() ? "" : ", ") + set;
    throw std::invalid_argument("unknown antenna set '" + antennaSet + "' (" + known + ")");
  }
  std::vector<std::string> sorted = stations;
  std::stable_sort(sorted.begin(), sorted.end(), stationNameLess);
  std::vector<AntennaFieldName> fields;
  for (const std::string& entry : sorted) {
    if (entry.size() <= 5) {
      for (const std::string& field : fieldsOf(entry, antennaSet)) fields.push_back({entry, field});
      continue;
    }
    const AntennaFieldName named{entry.substr(0, 5), entry.substr(5)};
    if (named.field != "LBA" && named.field != "HBA" && named.field != "HBA0" &&
        named.field != "HBA1")
      throw std::invalid_argument("'" + entry +
                                  "' names neither a station nor an antenna field "
                                  "(LBA, HBA, HBA0, HBA1) of one");
    if (named.field.substr(0, 3) != antennaSet.substr(0, 3))
      throw std::invalid_argument("antenna field '" + entry + "' is not part of antenna set '" +
                                  antennaSet + "'");
    fields.push_back(named);
  }
  return fields;
}

}  // namespace rtcp
