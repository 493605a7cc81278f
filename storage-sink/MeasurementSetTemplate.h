#pragma once
/// \file MeasurementSetTemplate.h
/// Creates an observation's MeasurementSets in seconds rather than minutes. casacore takes
/// tens of milliseconds of CPU and tens of fsyncs to create an MS from scratch (its main
/// table, twelve standard and three LOFAR subtables), which for 488 subbands took about
/// half a minute. So the first MS of each kind is created from scratch and every other MS
/// whose description differs from it only in the subband's own values (FIELD,
/// SPECTRAL_WINDOW, the OBSERVATION row's beam, targets and file name) is a copy of its
/// files with those tables rewritten by the same code that fills them at creation
/// (rewriteSubbandTables). Nothing is fsync'd per MS; one syncfs at the end makes them
/// all durable.
///
/// No casacore in this header.

#include <functional>
#include <string>
#include <vector>

#include "MeasurementSetDescription.h"

namespace rtcp::storage {

/// The description with the values a copy rewrites blanked: two MSs whose keys are equal
/// differ only in those values.
MeasurementSetDescription templateKey(MeasurementSetDescription description);

/// Creates the MS at paths[i] from descriptions[i] for every path that does not exist
/// yet (the others are left as they are: a restart reopens them), in the order of paths
/// as far as the threads go (the first of each kind first). madeOne(i) is called, on the
/// thread that made it, as soon as paths[i] is made (not yet synced to the disk), then
/// created() with the number made so far. Returns how many were made. Throws
/// std::runtime_error naming the MS that could not be made.
int createMeasurementSets(const std::vector<MeasurementSetDescription>& descriptions,
                          const std::vector<std::string>& paths,
                          const std::function<void(int)>& created = {},
                          const std::function<void(size_t)>& madeOne = {});

}  // namespace rtcp::storage
