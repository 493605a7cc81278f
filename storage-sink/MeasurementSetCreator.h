#pragma once
/// \file MeasurementSetCreator.h
/// Creates an empty MeasurementSet for one subband (DESIGN §2.5): the main table with
/// throughput-oriented storage managers and every subtable filled from the settings.

#include <casacore/ms/MeasurementSets/MeasurementSet.h>

#include <string>
#include <vector>

#include "MeasurementSetDescription.h"

namespace rtcp::storage {

/// Creates the MS at path (which must not exist) and returns it opened for writing; with
/// sync, flushed to the disk (fsync) too.
casacore::MeasurementSet createMeasurementSet(const std::string& path,
                                              const MeasurementSetDescription& description,
                                              bool sync = true);

/// Rewrites, in a copy at path of another subband's MS, what is the subband's own: FIELD,
/// SPECTRAL_WINDOW with DATA_DESCRIPTION, OBSERVATION with PROCESSOR (its beam, targets,
/// frequencies, file name), exactly as createMeasurementSet() writes them.
void rewriteSubbandTables(const std::string& path, const MeasurementSetDescription& description);

/// Integrations per tile of DATA (about 1 MiB, whole integrations; rows are
/// integration-major). Writing this many at once fills whole tiles.
int integrationsPerTile(int nrChannels, int nrBaselines);

/// Name of the OBSERVATION column that holds the observation id (a String, as in LOFAR).
inline const char* kObservationIdColumn = "LOFAR_OBSERVATION_ID";

}  // namespace rtcp::storage
