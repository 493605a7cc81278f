#pragma once
/// \file MeasuresData.h
/// Do casacore's measures tables cover a date? casacore converts between time scales and
/// frames with its IERS Earth-orientation tables (IERSeop97 measured, IERSpredict
/// predicted: UT1-UTC and polar motion per day) and its leap-second table TAI_UTC. Where a
/// date lies outside them it warns and carries on with UT1-UTC and polar motion set to 0
/// (delays and UVWs then off by up to ~0.9 s of Earth rotation) or with leap seconds it
/// does not know. This reads the tables casacore itself would use (found as casacore finds
/// them: measures.directory in ~/.casarc or $CASARCFILES, else its built-in data directory,
/// /var/lib/casacore/data on Debian) and says which dates they cover.

#include <string>

namespace rtcp {

/// One of casacore's measures tables.
struct MeasuresTable {
  std::string name;         ///< IERSeop97, IERSpredict or TAI_UTC
  std::string path;         ///< where casacore finds it; "" when it finds none
  double firstMjd = 0;      ///< first day it covers (MJD)
  double endMjd = 0;        ///< first day it no longer covers (MJD)
  std::string versionDate;  ///< its VS_DATE keyword (the date of its contents)

  bool found() const { return !path.empty(); }
  bool covers(double mjd) const { return found() && mjd >= firstMjd && mjd < endMjd; }
};

/// casacore's IERS and leap-second tables as casacore finds them in this process.
struct MeasuresCoverage {
  MeasuresTable measured;     ///< IERSeop97
  MeasuresTable predicted;    ///< IERSpredict
  MeasuresTable leapSeconds;  ///< TAI_UTC: valid until 180 days after its VS_DATE (casacore's
                              ///< own rule; leap seconds are announced about 6 months ahead)

  /// Earth orientation for every day of [startMjd, stopMjd] (days, MJD).
  bool coversEarthOrientation(double startMjd, double stopMjd) const;
  bool coversLeapSeconds(double stopMjd) const { return leapSeconds.covers(stopMjd); }
};

/// Finds and reads the tables (casacore's own search; its log messages are held back).
MeasuresCoverage findMeasuresTables();

/// What an operator needs to know when the tables do not cover [startUnix, stopUnix]
/// (Unix seconds, UTC): which table falls short, what that costs, and how to install or
/// point casacore at newer tables. "" when everything is covered.
std::string measuresProblem(const MeasuresCoverage& coverage, double startUnix, double stopUnix);

}  // namespace rtcp
