#pragma once
/// \file LofarAntennaFields.h
/// What a LOFAR MeasurementSet says about the stations' antennas beyond their positions:
/// LOFAR_ANTENNA_FIELD (one row per antenna field: its centre, p/q/r axes, the offsets of
/// its elements and which of them the antenna set uses, the HBA tile layout),
/// LOFAR_STATION and ANTENNA's LOFAR_STATION_ID, as LOFAR's writer (MSLofar/BeamTables)
/// fills them. Plain types, computed once per observation and shared by all its MSs.

#include <array>
#include <string>
#include <vector>

#include "rtcp/AntennaFieldTable.h"
#include "rtcp/StationTable.h"

namespace rtcp::storage {

/// One row of LOFAR_ANTENNA_FIELD.
struct LofarFieldRow {
  int antennaId = 0;                              ///< row of the MS's ANTENNA table
  std::string name;                               ///< LBA, HBA, HBA0 or HBA1
  Vector3 position{};                             ///< field centre, ITRF metres
  std::array<Vector3, 3> axes{};                  ///< [p, q, r][x, y, z]: COORDINATE_AXES
  bool hasTiles = false;                          ///< HBA: TILE_ROTATION / TILE_ELEMENT_OFFSET hold
  std::vector<Vector3> tileElementOffsets;        ///< [16][x, y, z], metres from the tile centre
  std::vector<Vector3> elementOffsets;            ///< [element][x, y, z], metres from position
  std::vector<std::array<int, 2>> elementRcus;    ///< [element][X, Y]: RCU, -1 when unused
  std::vector<std::array<bool, 2>> elementFlags;  ///< [element][X, Y]: true when unused
};

/// One row of LOFAR_STATION.
struct LofarStationRow {
  std::string name;  ///< station name (CS001), a superstation's joined names
  int clockId = 0;   ///< 0 for the core stations (one clock), 1, 2, ... for the others
};

/// ANTENNA's LOFAR columns of one antenna.
struct LofarAntennaInfo {
  int stationId = 0;        ///< LOFAR_STATION_ID: row of LOFAR_STATION
  double dishDiameter = 0;  ///< DISH_DIAMETER: extent of the used elements (LOFAR's rule)
};

struct LofarAntennaFields {
  std::vector<LofarFieldRow> fields;
  std::vector<LofarStationRow> stations;
  std::vector<LofarAntennaInfo> antennas;  ///< [antenna], as the MS's ANTENNA table
  std::vector<std::string> warnings;       ///< what the tables could not provide
};

/// An antenna field of a station: CS001 + LBA, CS001 + HBA (core: HBA0 and HBA1 joined),
/// CS001 + HBA0, RS106 + HBA, ...
struct FieldOfStation {
  std::string station;
  std::string field;
};

/// An antenna of the MS: one station's field, or a superstation of several.
struct MsAntenna {
  std::string name;
  Vector3 position{};                   ///< ITRF metres (ANTENNA.POSITION)
  std::vector<FieldOfStation> members;  ///< one, or a superstation's
};

/// LOFAR_ANTENNA_FIELD and friends for the antennas under an antenna set (LBA_OUTER, ...).
/// A joined HBA field of a core station gets two rows, HBA0 and HBA1, as in LOFAR (one,
/// the half in use, under HBA_ZERO or HBA_ONE); an
/// HBA0 or HBA1 field one row, with the other half's tiles flagged. A superstation gets one
/// row with the elements of all its members, relative to its position, and the axes (and
/// tiles) of its first member. Fields the tables lack get rows without elements and a
/// warning.
LofarAntennaFields describeLofarAntennaFields(const std::vector<MsAntenna>& antennas,
                                              const std::string& antennaSet,
                                              const AntennaFieldTable& geometry,
                                              const StationTable& centres);

/// The 16 element offsets of an HBA tile (metres, ETRS): a 4 x 4 grid 1.25 m apart in the
/// field's p, q plane, turned clockwise by the tile rotation (degrees), in LOFAR's order
/// (rows of constant q from +q to -q, each from -p to +p).
std::vector<Vector3> hbaTileElementOffsets(const std::array<Vector3, 3>& axes,
                                           double rotationDegrees);

}  // namespace rtcp::storage
