#include "LofarTables.h"

#include <casacore/casa/Arrays/Matrix.h>
#include <casacore/measures/TableMeasures/TableMeasDesc.h>
#include <casacore/measures/TableMeasures/TableMeasRefDesc.h>
#include <casacore/measures/TableMeasures/TableMeasValueDesc.h>
#include <casacore/measures/TableMeasures/TableQuantumDesc.h>
#include <casacore/tables/Tables/ArrColDesc.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/ScaColDesc.h>
#include <casacore/tables/Tables/ScalarColumn.h>
#include <casacore/tables/Tables/SetupNewTab.h>

#include "rtcp/CasacoreMeasures.h"
#include "rtcp/SampleTime.h"

#ifndef RTCP_VERSION
#define RTCP_VERSION "unknown"
#endif

namespace rtcp::storage {
namespace {

using casacore::IPosition;
using casacore::String;

constexpr const char* kLofarSubtables[] = {"LOFAR_STATION", "LOFAR_ANTENNA_FIELD",
                                           "LOFAR_ELEMENT_FAILURE"};

template <typename T>
void addScalar(casacore::TableDesc& td, const String& name, const String& comment) {
  td.addColumn(casacore::ScalarColumnDesc<T>(name, comment));
}

/// An array column: ndim < 0 any shape; a shape makes it fixed (and stored directly).
template <typename T>
void addArray(casacore::TableDesc& td, const String& name, const String& comment, int ndim,
              const IPosition& shape = IPosition()) {
  if (shape.empty())
    td.addColumn(casacore::ArrayColumnDesc<T>(name, comment, ndim));
  else
    td.addColumn(casacore::ArrayColumnDesc<T>(
        name, comment, shape, casacore::ColumnDesc::FixedShape | casacore::ColumnDesc::Direct));
}

/// QuantumUnits: the unit of each of n values of a measure (or of the one quantity).
void setUnits(casacore::TableDesc& td, const String& name, const String& unit, size_t n) {
  casacore::TableQuantumDesc(td, name, casacore::Vector<casacore::Unit>(n, casacore::Unit(unit)))
      .write(td);
}

/// MEASINFO: a column of positions (metres, ITRF), epochs (seconds, UTC) or directions.
void setPosition(casacore::TableDesc& td, const String& name) {
  casacore::TableMeasValueDesc value(td, name);
  casacore::TableMeasDesc<casacore::MPosition>(
      value, casacore::TableMeasRefDesc(casacore::MPosition::ITRF))
      .write(td);
  setUnits(td, name, "m", 3);
}

void setEpoch(casacore::TableDesc& td, const String& name) {
  casacore::TableMeasValueDesc value(td, name);
  casacore::TableMeasDesc<casacore::MEpoch>(value,
                                            casacore::TableMeasRefDesc(casacore::MEpoch::UTC))
      .write(td);
  setUnits(td, name, "s", 1);
}

void setDirection(casacore::TableDesc& td, const String& name, const std::string& type) {
  casacore::MDirection::Types ref;
  if (!casacore::MDirection::getType(ref, type))
    throw std::invalid_argument("unknown direction type '" + type + "' for " + std::string(name));
  casacore::TableMeasValueDesc value(td, name);
  casacore::TableMeasDesc<casacore::MDirection>(value, casacore::TableMeasRefDesc(ref)).write(td);
  setUnits(td, name, "rad", 2);
}

casacore::TableDesc stationDesc() {
  casacore::TableDesc td;
  addScalar<String>(td, "NAME", "Station name");
  addScalar<casacore::Int>(td, "CLOCK_ID", "Index of shared clock");
  addScalar<bool>(td, "FLAG_ROW", "Row flag");
  return td;
}

casacore::TableDesc antennaFieldDesc() {
  casacore::TableDesc td;
  addScalar<casacore::Int>(td, "ANTENNA_ID", "Antenna ID in ANTENNA table");
  addScalar<String>(td, "NAME", "Antenna field name");
  addArray<double>(td, "POSITION", "Center of light of antenna field", 1, IPosition(1, 3));
  setPosition(td, "POSITION");
  addArray<double>(td, "COORDINATE_AXES",
                   "Local field coordinates as P,Q,R (cartesian) direction vectors", 2,
                   IPosition(2, 3, 3));
  setPosition(td, "COORDINATE_AXES");
  addArray<double>(td, "ELEMENT_OFFSET",
                   "Position offsets of elements w.r.t. center of station field", 2);
  setPosition(td, "ELEMENT_OFFSET");
  addArray<casacore::Int>(td, "ELEMENT_RCU", "RCU used for the elements (for X and Y)", 2);
  addArray<bool>(td, "ELEMENT_FLAG", "T for inactive element receptors (for X and Y)", 2);
  addScalar<double>(td, "TILE_ROTATION", "Rotation of HBA tile w.r.t. station coordinates");
  setUnits(td, "TILE_ROTATION", "rad", 1);
  addArray<double>(td, "TILE_ELEMENT_OFFSET",
                   "Position offsets of dual dipole elements inside HBA tile w.r.t. tile center",
                   -1);
  setPosition(td, "TILE_ELEMENT_OFFSET");
  return td;
}

casacore::TableDesc elementFailureDesc() {
  casacore::TableDesc td;
  addScalar<casacore::Int>(td, "ANTENNA_FIELD_ID", "Reference to ANTENNA_FIELD");
  addScalar<casacore::Int>(td, "ELEMENT_INDEX", "Element index in ELEMENT_OFFSET array");
  addScalar<double>(td, "TIME", "Time of element failure");
  setEpoch(td, "TIME");
  return td;
}

/// A subtable written once at creation: without locking, whose lock-file updates casacore
/// syncs to disk at every flush (a dozen fsyncs per MS for these three small tables).
void createSubtable(casacore::MeasurementSet& ms, const String& name,
                    const casacore::TableDesc& desc) {
  casacore::SetupNewTable setup(ms.tableName() + "/" + name, desc, casacore::Table::New);
  ms.rwKeywordSet().defineTable(name, casacore::Table(setup, casacore::TableLock::NoLocking));
}

/// A casacore matrix [n][3] (3 fastest) of 3-vectors.
casacore::Matrix<double> vectors(const std::vector<Vector3>& values) {
  casacore::Matrix<double> m(3, values.size());
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t k = 0; k < 3; ++k) m(k, i) = values[i][k];
  return m;
}

/// LOFAR_ANTENNA_FIELD's columns, attached once for all rows.
struct AntennaFieldColumns {
  explicit AntennaFieldColumns(casacore::Table& t)
      : antennaId(t, "ANTENNA_ID"),
        name(t, "NAME"),
        position(t, "POSITION"),
        axes(t, "COORDINATE_AXES"),
        offsets(t, "ELEMENT_OFFSET"),
        rcus(t, "ELEMENT_RCU"),
        flags(t, "ELEMENT_FLAG"),
        tileRotation(t, "TILE_ROTATION"),
        tileOffsets(t, "TILE_ELEMENT_OFFSET") {}

  void put(casacore::rownr_t row, const LofarFieldRow& f) {
    antennaId.put(row, f.antennaId);
    name.put(row, f.name);
    position.put(row, casacore::Vector<double>{f.position[0], f.position[1], f.position[2]});
    axes.put(row, vectors({f.axes[0], f.axes[1], f.axes[2]}));
    offsets.put(row, vectors(f.elementOffsets));
    casacore::Matrix<casacore::Int> rcu(2, f.elementRcus.size());
    casacore::Matrix<bool> flag(2, f.elementFlags.size());
    for (size_t e = 0; e < f.elementRcus.size(); ++e)
      for (size_t p = 0; p < 2; ++p) {
        rcu(p, e) = f.elementRcus[e][p];
        flag(p, e) = f.elementFlags[e][p];
      }
    rcus.put(row, rcu);
    flags.put(row, flag);
    // LOFAR turns the tile elements in TILE_ELEMENT_OFFSET and writes TILE_ROTATION 0.
    tileRotation.put(row, 0.0);
    if (f.hasTiles) tileOffsets.put(row, vectors(f.tileElementOffsets));
  }

  casacore::ScalarColumn<casacore::Int> antennaId;
  casacore::ScalarColumn<String> name;
  casacore::ArrayColumn<double> position, axes, offsets;
  casacore::ArrayColumn<casacore::Int> rcus;
  casacore::ArrayColumn<bool> flags;
  casacore::ScalarColumn<double> tileRotation;
  casacore::ArrayColumn<double> tileOffsets;
};

casacore::Vector<String> strings(const std::vector<std::string>& values) {
  casacore::Vector<String> out(values.size());
  for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  return out;
}

}  // namespace

void addLofarAntennaColumns(casacore::TableDesc& td) {
  addScalar<casacore::Int>(td, "LOFAR_STATION_ID", "ID in LOFAR_STATION table");
  addArray<double>(td, "LOFAR_PHASE_REFERENCE", "Beamformer phase reference position", 1,
                   IPosition(1, 3));
  setPosition(td, "LOFAR_PHASE_REFERENCE");
}

void addLofarFieldColumns(casacore::TableDesc& td, const std::string& tileBeamType) {
  addArray<double>(td, "LOFAR_TILE_BEAM_DIR", "HBA tile beam direction (polynomial in time)", -1);
  setDirection(td, "LOFAR_TILE_BEAM_DIR", tileBeamType);
}

void addLofarObservationColumns(casacore::TableDesc& td) {
  addScalar<String>(td, "LOFAR_PROJECT_TITLE", "Project description");
  addScalar<String>(td, "LOFAR_PROJECT_PI", "Principal investigator");
  addArray<String>(td, "LOFAR_PROJECT_CO_I", "Co investigators", -1);
  addScalar<String>(td, "LOFAR_PROJECT_CONTACT", "Contact author");
  addScalar<String>(td, "LOFAR_OBSERVATION_ID", "Observation ID");
  addScalar<double>(td, "LOFAR_OBSERVATION_START", "Observation start");
  setEpoch(td, "LOFAR_OBSERVATION_START");
  addScalar<double>(td, "LOFAR_OBSERVATION_END", "Observation end");
  setEpoch(td, "LOFAR_OBSERVATION_END");
  const std::pair<const char*, const char*> frequencies[] = {
      {"MAX", "Maximum frequency"}, {"MIN", "Minimum frequency"}, {"CENTER", "Center frequency"}};
  for (const auto& [which, comment] : frequencies) {
    const String name = String("LOFAR_OBSERVATION_FREQUENCY_") + which;
    addScalar<double>(td, name, comment);
    setUnits(td, name, "MHz", 1);
  }
  addScalar<casacore::Int>(td, "LOFAR_SUB_ARRAY_POINTING", "Subarray pointing id");
  addScalar<casacore::Int>(td, "LOFAR_NOF_BITS_PER_SAMPLE", "Number of bits per sample");
  addScalar<String>(td, "LOFAR_ANTENNA_SET", "SAS Antenna set name");
  addScalar<String>(td, "LOFAR_FILTER_SELECTION", "SAS Filter selection");
  addScalar<double>(td, "LOFAR_CLOCK_FREQUENCY", "SAS Clock setting");
  setUnits(td, "LOFAR_CLOCK_FREQUENCY", "MHz", 1);
  addArray<String>(td, "LOFAR_TARGET", "List of targets", -1);
  addScalar<String>(td, "LOFAR_SYSTEM_VERSION", "Version of the system");
  addScalar<String>(td, "LOFAR_PIPELINE_NAME", "Pipeline identification");
  addScalar<String>(td, "LOFAR_PIPELINE_VERSION", "Pipeline version");
  addScalar<String>(td, "LOFAR_FILENAME", "Name of raw data set");
  addScalar<String>(td, "LOFAR_FILETYPE", "Data type (uv)");
  addScalar<double>(td, "LOFAR_FILEDATE", "File creation time");
  setEpoch(td, "LOFAR_FILEDATE");
}

void createLofarSubtables(casacore::MeasurementSet& ms) {
  createSubtable(ms, kLofarSubtables[0], stationDesc());
  createSubtable(ms, kLofarSubtables[1], antennaFieldDesc());
  createSubtable(ms, kLofarSubtables[2], elementFailureDesc());
}

void fillLofarSubtables(casacore::MeasurementSet& ms, const LofarAntennaFields& fields) {
  casacore::Table stations = ms.keywordSet().asTable("LOFAR_STATION");
  stations.reopenRW();
  const size_t nrStations = fields.stations.size();
  stations.addRow(nrStations);
  casacore::Vector<String> names(nrStations);
  casacore::Vector<casacore::Int> clocks(nrStations);
  for (size_t i = 0; i < nrStations; ++i) {
    names[i] = fields.stations[i].name;
    clocks[i] = fields.stations[i].clockId;
  }
  casacore::ScalarColumn<String>(stations, "NAME").putColumn(names);
  casacore::ScalarColumn<casacore::Int>(stations, "CLOCK_ID").putColumn(clocks);
  casacore::ScalarColumn<bool>(stations, "FLAG_ROW")
      .putColumn(casacore::Vector<bool>(nrStations, false));
  casacore::Table antennaFields = ms.keywordSet().asTable("LOFAR_ANTENNA_FIELD");
  antennaFields.reopenRW();
  antennaFields.addRow(fields.fields.size());
  AntennaFieldColumns columns(antennaFields);
  for (size_t i = 0; i < fields.fields.size(); ++i) columns.put(i, fields.fields[i]);
}

void closeLofarSubtables(casacore::MeasurementSet& ms) {
  for (const char* name : kLofarSubtables) {
    ms.keywordSet().asTable(name).flush(false, false);
    ms.keywordSet().closeTable(name);
  }
}

void fillLofarObservation(casacore::Table& table, const MeasurementSetDescription& d,
                          const std::string& filename) {
  const double start = unixToMjdSeconds(d.startTime), stop = unixToMjdSeconds(d.stopTime);
  const auto put = [&](const char* column, const auto& value) {
    using T = std::decay_t<decltype(value)>;
    casacore::ScalarColumn<T>(table, column).put(0, value);
  };
  put("LOFAR_PROJECT_TITLE", String(d.campaign.title));
  put("LOFAR_PROJECT_PI", String(d.campaign.pi));
  casacore::ArrayColumn<String>(table, "LOFAR_PROJECT_CO_I")
      .put(0, strings(d.campaign.coInvestigators));
  put("LOFAR_PROJECT_CONTACT", String(d.campaign.contact));
  put("LOFAR_OBSERVATION_ID", String(std::to_string(d.observationId)));
  put("LOFAR_OBSERVATION_START", start);
  put("LOFAR_OBSERVATION_END", stop);
  put("LOFAR_OBSERVATION_FREQUENCY_MAX", d.maxFrequency / 1e6);
  put("LOFAR_OBSERVATION_FREQUENCY_MIN", d.minFrequency / 1e6);
  put("LOFAR_OBSERVATION_FREQUENCY_CENTER", (d.minFrequency + d.maxFrequency) / 2e6);
  put("LOFAR_SUB_ARRAY_POINTING", casacore::Int(d.beam));
  put("LOFAR_NOF_BITS_PER_SAMPLE", casacore::Int(d.bitsPerSample));
  put("LOFAR_ANTENNA_SET", String(d.antennaSet));
  put("LOFAR_FILTER_SELECTION", String(d.bandFilter));
  put("LOFAR_CLOCK_FREQUENCY", d.clockHz / 1e6);
  casacore::ArrayColumn<String>(table, "LOFAR_TARGET").put(0, strings(d.targets));
  put("LOFAR_SYSTEM_VERSION", String("rtcp " RTCP_VERSION));
  put("LOFAR_PIPELINE_NAME", String());
  put("LOFAR_PIPELINE_VERSION", String());
  put("LOFAR_FILENAME", String(filename));
  put("LOFAR_FILETYPE", String("uv"));
  put("LOFAR_FILEDATE", start);
}

}  // namespace rtcp::storage
