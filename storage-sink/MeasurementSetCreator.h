#pragma once
/// \file MeasurementSetCreator.h
/// Creates an empty MeasurementSet for one subband (DESIGN §2.5): the main table with
/// throughput-oriented storage managers and every subtable filled from the settings.

#include <casacore/ms/MeasurementSets/MeasurementSet.h>

#include <string>
#include <vector>

#include "MeasurementSetDescription.h"

namespace rtcp::storage {

/// The main table's keyword that names the run that wrote the MS (DESIGN §2.5).
inline constexpr const char* kRunIdKeyword = "RTCP_RUN_ID";

/// Creates the MS at path (which must not exist) and returns it opened for writing; with
/// sync, flushed to the disk (fsync) too.
casacore::MeasurementSet createMeasurementSet(const std::string& path,
                                              const MeasurementSetDescription& description,
                                              bool sync = true);

/// Rewrites, in a copy at path of another subband's MS, what is the subband's own: FIELD,
/// SPECTRAL_WINDOW with DATA_DESCRIPTION, OBSERVATION with PROCESSOR (its beam, targets,
/// frequencies, file name), exactly as createMeasurementSet() writes them.
void rewriteSubbandTables(const std::string& path, const MeasurementSetDescription& description);

/// How the main table's array columns (DATA, FLAG, WEIGHT_SPECTRUM, UVW, WEIGHT, SIGMA)
/// are tiled: every column's tiles hold the same rowsPerTile rows, which are either
/// integrationsPerRun whole integrations or a whole fraction of one integration's rows
/// (rows are integration-major), so that writing integrationsPerRun integrations fills
/// whole tiles of every column and leaves none half written. A DATA tile holds at most
/// kTileBytes (one row at least): small tiles keep casacore's tile buffers on malloc's heap
/// (reused, not page-faulted in afresh) and an open MS's memory small.
struct MainTableTiling {
  int rowsPerTile = 1;
  int integrationsPerRun = 1;  ///< integrations the writer puts into the MS at once
};
MainTableTiling mainTableTiling(int nrChannels, int nrBaselines);

/// Name of the OBSERVATION column that holds the observation id (a String, as in LOFAR).
inline const char* kObservationIdColumn = "LOFAR_OBSERVATION_ID";

}  // namespace rtcp::storage
