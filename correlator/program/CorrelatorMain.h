#pragma once
/// \file CorrelatorMain.h
/// The correlator program (correlator.cc): its options, its ranks fetching station blocks
/// from ionproc over the link and sending their correlated blocks back, the pipeline and
/// the final report. The tests' program (test/correlator-local.cc) runs the same main with
/// a LocalMode: ranks that read recordings themselves, with no ionproc.

#include <boost/program_options/options_description.hpp>
#include <memory>
#include <vector>

#include "StationBlockFetcher.h"
#include "VisibilityOutput.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::correlator {

/// Where a rank's blocks come from and its visibilities go without --ionproc.
class LocalMode {
 public:
  virtual ~LocalMode() = default;
  /// Adds the mode's options to the program's.
  virtual void addOptions(boost::program_options::options_description& options) = 0;
  /// Checks them; withIonproc: --ionproc was given. Throws boost::program_options::error.
  virtual void check(bool withIonproc) const = 0;
  /// The blocks of the given stations (indices).
  virtual std::unique_ptr<StationBlockFetcher> fetcher(const ObservationSettings& settings,
                                                       const std::vector<int>& stations) = 0;
  /// Where rank `rank`'s correlated blocks go.
  virtual std::unique_ptr<VisibilityOutput> output(const ObservationSettings& settings,
                                                   int rank) = 0;
};

/// The program: MPI_Init to MPI_Finalize. local: nullptr (--ionproc is required) or the
/// mode used without --ionproc. Returns the exit code.
int correlatorMain(int argc, char** argv, LocalMode* local);

}  // namespace rtcp::correlator
