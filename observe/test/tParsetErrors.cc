// observe as a user meets it with a broken parset: a non-zero exit, every error with its
// key, and nothing started (no observation directory, no logs).
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <fstream>

#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"

namespace rtcp::observe::test {

class ParsetErrorsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ParsetErrorsTest);
  CPPUNIT_TEST(testEveryErrorAndNothingStarted);
  CPPUNIT_TEST(testHelp);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryErrorAndNothingStarted() {
    storage::test::TempDir dir;
    SmallObservation o;
    o.start = "2020-01-01 00:00:00";  // in the past, no --now
    o.stations = {"CS001", "CS999", "RS106"};
    const int port = freeUdpPort();
    o.inputs = {"udp:127.0.0.1:" + std::to_string(port), "udp:127.0.0.1:" + std::to_string(port + 1),
                "udp:localhost:" + std::to_string(port)};
    o.subbands = "[300, 777]";
    o.outputDir = dir.path() + "/out";
    o.extra = "Observation.stopTime = '2019-12-31 23:59:00'\nOLAP.realTme = T\n";  // replaces the stop time
    const std::string parset = writeParset(dir.path() + "/broken.parset", o);
    const std::string obs = dir.path() + "/obs";
    const std::string log = dir.path() + "/observe.log";
    CPPUNIT_ASSERT(runProgram(observeCommand({parset, "--dir", obs, "--ranks", "64"}), log) != 0);
    const std::string text = readFile(log);
    for (const std::string& expected : std::vector<std::string>{
             "key 'Observation.stopTime': stop time '2019-12-31 23:59:00' is not after start time",
          "key 'Observation.startTime': start time '2020-01-01 00:00:00' is in the past",
          "key 'Observation.VirtualInstrument.stationList': unknown station 'CS999'",
          "key 'Observation.Beam[0].subbandList': subband 777 is outside 0..511",
          "key 'PIC.Core.RS106LBA.RSP.ports': input 'udp:localhost:" + std::to_string(port) + "'",
          "--ranks 64: more ranks than the", "nothing started"})
      CPPUNIT_ASSERT_MESSAGE("missing '" + expected + "' in:\n" + text, text.find(expected) != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(text, !std::filesystem::exists(obs));
    CPPUNIT_ASSERT_MESSAGE(text, !std::filesystem::exists(o.outputDir));
  }

  void testHelp() {
    storage::test::TempDir dir;
    CPPUNIT_ASSERT_EQUAL(0, runProgram(observeCommand({"--help"}), dir.path() + "/help.log"));
    CPPUNIT_ASSERT(readFile(dir.path() + "/help.log").find("usage: observe PARSET") != std::string::npos);
    CPPUNIT_ASSERT(runProgram(observeCommand({}), dir.path() + "/none.log") != 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ParsetErrorsTest);

}  // namespace rtcp::observe::test
