#pragma once
// Helpers of the observe tests: small simulated observations, running observe and
// station-sim, reading the effective parset and the MSs back.

#include <sys/types.h>

#include <string>
#include <vector>

#include "TestPrograms.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::observe::test {

using rtcp::test::readFile;
using rtcp::test::runProgram;
using rtcp::test::startProgram;
using rtcp::test::waitProgram;

constexpr double kDegree = 3.14159265358979323846 / 180;
constexpr double kCentreRa = 5.2336866848, kCentreDec = 0.7109425145;  ///< the beam (J2000)

/// A short LBA observation of a simulated point source, udp: inputs on free local ports.
struct SmallObservation {
  int64_t obsId = 4711;
  std::string start = "2026-01-01 00:00:00";
  double seconds = 4;
  std::vector<std::string> stations = {"CS001", "CS002", "RS106", "RS205"};
  std::string subbands = "[300, 301]";
  int channels = 16;
  int steps = 12207;             ///< spectra per block: 16 x 12207 samples = 0.99999 s
  int blocksPerIntegration = 1;  ///< OLAP.IONProc.integrationSteps
  double beamRa = kCentreRa, beamDec = kCentreDec;  ///< the phase centre (J2000)
  double sourceRa = kCentreRa, sourceDec = kCentreDec;
  double flux = 4;
  bool realTime = true;
  bool delayCompensation = true;
  std::string outputHost = "localhost";  ///< Output_Correlated.locations = [outputHost:outputDir]
  std::string outputDir;
  std::vector<std::string> inputs;  ///< per station; empty: udp:127.0.0.1:<free port>
  std::string extra;                ///< more parset lines
};

std::string makeParset(const SmallObservation& o);
/// Writes the parset to path and returns the path.
std::string writeParset(const std::string& path, const SmallObservation& o);
/// Right ascension (radians) that transits at LOFAR's core now: a beam there is high in
/// the sky for a short observation started with observe --now.
double raTransitingNow();
/// A UDP port that was free a moment ago.
int freeUdpPort();

/// observe from the build tree, with arguments.
std::vector<std::string> observeCommand(const std::vector<std::string>& arguments);
std::string executable(const std::string& part);  ///< e.g. "station-sim/station-sim"

/// Reads the observation directory's summary.json with Debian's python3 and returns the
/// value of a top-level key as JSON text (throws when the file is not valid JSON).
std::string summaryValue(const std::string& directory, const std::string& key);

/// Runs `observe parset --dir observationDir arguments...` with its output in logPath and
/// asserts a good observation: exit 0, status ok, no integration dropped. Returns the log.
std::string observeSuccessfully(const std::string& parset, const std::string& observationDir,
                                const std::vector<std::string>& arguments,
                                const std::string& logPath);

}  // namespace rtcp::observe::test
