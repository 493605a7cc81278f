#pragma once
// casacore measures tables for tests: IERS tables covering chosen dates and a leap-second
// table of a chosen date, in a directory of their own, with a casarc file that points
// casacore at them (set CASARCFILES to it in the environment of the program to test).
#include <string>

namespace rtcp::test {

struct MeasuresTableDates {
  double firstMjd = 0;        ///< first day the IERS tables hold
  double endMjd = 0;          ///< first day they no longer cover (their last row)
  double leapVersionMjd = 0;  ///< VS_DATE of the leap-second table
};

/// Writes dir/geodetic/{IERSeop97, IERSpredict} (UT1-UTC and polar motion 0 every day),
/// dir/geodetic/TAI_UTC (casacore's own leap seconds, dated leapVersionMjd) and dir/casarc
/// ("measures.directory: dir"); returns the casarc path.
std::string writeMeasuresTables(const std::string& dir, const MeasuresTableDates& dates);

/// Today's MJD (days).
double mjdNow();

/// Runs a program with CASARCFILES set to casarc (environment of this process restored after).
int runWithCasarc(const std::string& casarc, const std::string& command);

}  // namespace rtcp::test
