#pragma once
/// \file LofarTables.h
/// LOFAR's tables and columns of a MeasurementSet, with the names, types, units and
/// measure keywords of LOFAR's writer (LCS/MSLofar: MSLofarAntenna, MSLofarField,
/// MSLofarObservation, MSStation, MSAntennaField, MSElementFailure), and their contents.

#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/Tables/TableDesc.h>

#include <string>

#include "MeasurementSetDescription.h"

namespace rtcp::storage {

/// ANTENNA: LOFAR_STATION_ID, LOFAR_PHASE_REFERENCE.
void addLofarAntennaColumns(casacore::TableDesc& antenna);
/// FIELD: LOFAR_TILE_BEAM_DIR, a direction of the given casacore type (J2000, AZELGEO, ...).
void addLofarFieldColumns(casacore::TableDesc& field, const std::string& tileBeamType);
/// OBSERVATION: LOFAR_PROJECT_TITLE ... LOFAR_FILEDATE.
void addLofarObservationColumns(casacore::TableDesc& observation);

/// Creates LOFAR_STATION, LOFAR_ANTENNA_FIELD and LOFAR_ELEMENT_FAILURE (empty: rtcp knows
/// of no failed elements) and registers them as subtables of the MS.
void createLofarSubtables(casacore::MeasurementSet& ms);

/// Fills LOFAR_STATION and LOFAR_ANTENNA_FIELD.
void fillLofarSubtables(casacore::MeasurementSet& ms, const LofarAntennaFields& fields);
/// Writes LOFAR's subtables out (without fsync) and closes them, so that the MS's flush
/// with fsync leaves them alone: their rows never change after creation, and 13 more
/// fsyncs per MS would cost seconds over an observation's hundreds of MSs.
void closeLofarSubtables(casacore::MeasurementSet& ms);
/// Fills the OBSERVATION row's LOFAR columns; filename is the MS's base name.
void fillLofarObservation(casacore::Table& observation, const MeasurementSetDescription& d,
                          const std::string& filename);

}  // namespace rtcp::storage
