#pragma once
/// \file MeasurementSetHoldings.h
/// What an MS on disk holds, read back without writing to it: integrations on its time
/// grid with data, and integrations written as flagged gaps (MeasurementSetWriter.h: an
/// integration is nrBaselines rows, all flagged when it never arrived). observe counts an
/// observation's stored integrations with it, whatever its storage-sinks said or did not
/// get to say (killed, a directory that could not be written).
///
/// The casacore parts live in the .cc: users of this header need no casacore.

#include <cstdint>
#include <string>

namespace rtcp::storage {

struct MeasurementSetHoldings {
  int64_t integrations = 0;  ///< on the time grid (rows / nrBaselines)
  int64_t flagged = 0;       ///< of those, flagged gaps (every row flagged)
  int64_t withData() const { return integrations - flagged; }
};

/// Opens the MS at path read-only; throws std::runtime_error naming it when it cannot be
/// read or its rows are not whole integrations of nrBaselines rows.
MeasurementSetHoldings readHoldings(const std::string& path, int nrBaselines);

}  // namespace rtcp::storage
