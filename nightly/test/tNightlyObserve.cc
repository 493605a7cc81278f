// nightly --now with the real observe on a two-observation schedule: a parset naming an
// unknown station, then a good short simulated one. The good one completes, the report
// says which failed and why, nightly exits non-zero. And the overrun deadline counts from
// the planned end observe chose (--now after a long set-up), not from the launch.
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <fstream>

#include "ObserveTestUtil.h"

namespace rtcp::nightly::test {
namespace {

std::string parset(const std::string& stations, const std::string& dir, int port) {
  return "Observation.ObsID = 77\n"
         "Observation.startTime = '2026-11-22 20:00:00'\n"
         "Observation.stopTime = '2026-11-22 20:00:02'\n"
         "Observation.nrBitsPerSample = 16\n"
         "Observation.antennaSet = LBA_OUTER\n"
         "Observation.bandFilter = LBA_30_90\n"
         "Observation.VirtualInstrument.stationList = [" +
         stations +
         "]\n"
         "Observation.channelsPerSubband = 16\n"
         "Observation.Beam[0].angle1 = 5.2336866848\n"
         "Observation.Beam[0].angle2 = 0.7109425145\n"
         "Observation.Beam[0].subbandList = [300]\n"
         "PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:" +
         std::to_string(port) +
         "]\n"
         "PIC.Core.CS002LBA.RSP.ports = [udp:127.0.0.1:" +
         std::to_string(port + 1) +
         "]\n"
         "OLAP.CNProc.integrationSteps = 6104\n"  // 16 x 6104 samples = 0.5 s
         "OLAP.realTime = T\n"
         "Observation.DataProducts.Output_Correlated.locations = [localhost:" +
         dir +
         "]\n"
         "Sim.nrSources = 1\nSim.Source[0].angle1 = 5.2336866848\n"
         "Sim.Source[0].angle2 = 0.7109425145\nSim.Source[0].flux = 2\n";
}

}  // namespace

class NightlyObserveTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(NightlyObserveTest);
  CPPUNIT_TEST(testBrokenAndGood);
  CPPUNIT_TEST(testOverrunCountsFromThePlannedEnd);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testBrokenAndGood() {
    TempDir dir;
    std::ofstream(dir.path + "/broken.parset")
        << parset("CS001, XX999", dir.path + "/broken-out", 16410);
    std::ofstream(dir.path + "/good.parset")
        << parset("CS001, CS002", dir.path + "/good-out", 16420);
    std::ofstream(dir.path + "/night.schedule") << "# a broken, then a good observation\n"
                                                   "broken.parset\ngood.parset\n";
    const std::string report = dir.path + "/report";
    const int code = run(std::string(RTCP_NIGHTLY_EXECUTABLE) + " " + dir.path +
                         "/night.schedule --now --report " + report + " > " + dir.path +
                         "/nightly.out 2> " + dir.path + "/nightly.err");
    const std::string text = readFile(report + "/report.txt");
    CPPUNIT_ASSERT_MESSAGE(readFile(dir.path + "/nightly.err"), code == 1);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("[1] broken.parset  FAILED") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("XX999") != std::string::npos);  // the reason
    CPPUNIT_ASSERT_MESSAGE(text, text.find("[2] good.parset  OK") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("L77_SAP000_SB000_uv.MS") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("CS002LBA: 0 of ") != std::string::npos);  // no loss
    CPPUNIT_ASSERT(
        std::filesystem::exists(dir.path + "/good-out/L77_SAP000_SB000_uv.MS/table.dat"));
    CPPUNIT_ASSERT(!std::filesystem::exists(dir.path + "/broken-out/L77_SAP000_SB000_uv.MS"));
    const std::string html = readFile(report + "/report.html");
    CPPUNIT_ASSERT(html.find("<img src=\"02_good/plots/") != std::string::npos);
    CPPUNIT_ASSERT(html.find("XX999") != std::string::npos);
  }

  /// observe --now with a 20 s set-up margin (as a large ionproc buffer to fault in makes
  /// it) starts the 2 s observation 20 s after its launch: an overrun of 12 s counted from
  /// the launch would stop it before it began.
  void testOverrunCountsFromThePlannedEnd() {
    TempDir dir;
    std::ofstream(dir.path + "/good.parset")
        << parset("CS001, CS002", dir.path + "/good-out", 16430);
    std::ofstream(dir.path + "/night.schedule") << "good.parset\n";
    const std::string observe = dir.path + "/observe-slow-setup";
    std::ofstream(observe) << "#!/bin/sh\nexec " << RTCP_OBSERVE_EXECUTABLE
                           << " \"$@\" --margin 20\n";
    std::filesystem::permissions(observe, std::filesystem::perms::owner_exec,
                                 std::filesystem::perm_options::add);
    const std::string report = dir.path + "/report";
    const int code =
        run(std::string(RTCP_NIGHTLY_EXECUTABLE) + " " + dir.path +
            "/night.schedule --now --max-overrun 12 --observe " + observe + " --report " + report +
            " > " + dir.path + "/nightly.out 2> " + dir.path + "/nightly.err");
    const std::string text = readFile(report + "/report.txt");
    CPPUNIT_ASSERT_MESSAGE(text + readFile(dir.path + "/nightly.err"), code == 0);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("[1] good.parset  OK") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, text.find("stopped by nightly") == std::string::npos);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(NightlyObserveTest);

}  // namespace rtcp::nightly::test
