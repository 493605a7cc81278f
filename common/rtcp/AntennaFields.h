#pragma once
/// \file AntennaFields.h
/// LOFAR's antenna fields of an observation, formed as COBALT forms them from the station
/// list and the antenna set: LBA_* -> LBA; HBA_JOINED(_INNER) -> HBA; HBA_ZERO(_INNER) /
/// HBA_ONE(_INNER) -> HBA0 / HBA1 on core stations, HBA elsewhere; HBA_DUAL(_INNER) -> HBA0
/// and HBA1 on core stations, HBA elsewhere. A station-list entry that names a field
/// (CS001HBA0) is that field. The fields are sorted as COBALT sorts them (core, remote,
/// then international stations; by name within each), which fixes the antenna order of the
/// MeasurementSets.

#include <string>
#include <vector>

namespace rtcp {

struct AntennaFieldName {
  std::string station;  ///< CS001
  std::string field;    ///< LBA, HBA, HBA0, HBA1
  std::string name() const { return station + field; }
  bool operator==(const AntennaFieldName&) const = default;
};

/// The fields of the stations for an antenna set. Throws std::invalid_argument naming an
/// unknown antenna set, or a list entry whose field is not LBA, HBA, HBA0 or HBA1, or
/// whose field does not belong to the antenna set (an LBA field in an HBA observation).
std::vector<AntennaFieldName> antennaFieldNames(const std::vector<std::string>& stations,
                                                const std::string& antennaSet);

/// The antenna sets LOFAR knows (for messages).
const std::vector<std::string>& knownAntennaSets();

/// COBALT's station order: CS before RS (by name), then the others by the name after
/// their two-letter country code.
bool stationNameLess(const std::string& a, const std::string& b);

}  // namespace rtcp
