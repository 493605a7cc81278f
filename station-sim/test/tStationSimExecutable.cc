// The station-sim executable: --help, errors that name the problem, a small recording.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>

#include "SimTestUtil.h"
#include "TestData.h"

namespace rtcp::sim::test {
namespace {

struct Result {
  int status = -1;
  std::string output;  ///< standard output and error
};

Result run(const std::string& arguments) {
  const std::string command =
      rtcp::test::binaryDir() + "/station-sim/station-sim " + arguments + " 2>&1";
  Result result;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return result;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class StationSimExecutableTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationSimExecutableTest);
  CPPUNIT_TEST(testHelp);
  CPPUNIT_TEST(testMissingParset);
  CPPUNIT_TEST(testBadParsetValue);
  CPPUNIT_TEST(testBadReplayDestinations);
  CPPUNIT_TEST(testRecords);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testHelp() {
    const Result r = run("--help");
    CPPUNIT_ASSERT_EQUAL(0, r.status);
    CPPUNIT_ASSERT(contains(r.output, "usage: station-sim PARSET"));
    CPPUNIT_ASSERT(contains(r.output, "--record"));
    CPPUNIT_ASSERT(contains(r.output, "--replay-to"));
    // One options heading, after the description.
    const size_t heading = r.output.find("\noptions:\n");
    CPPUNIT_ASSERT(heading != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string::npos, r.output.find("options:", heading + 2));
  }

  void testMissingParset() {
    const Result r = run("/nonexistent/obs.parset --record /nonexistent/out");
    CPPUNIT_ASSERT(r.status != 0);
    CPPUNIT_ASSERT(contains(r.output, "/nonexistent/obs.parset"));
  }

  void testBadParsetValue() {
    TempDir dir;
    writeFile(dir / "bad.parset",
              makeParset({"CS001"}, "[300]", 16, "Observation.sampleClock = 201\n"));
    const Result r = run(dir / "bad.parset" + " --record " + dir / "out");
    CPPUNIT_ASSERT(r.status != 0);
    CPPUNIT_ASSERT(contains(r.output, "Observation.sampleClock"));
  }

  void testBadReplayDestinations() {
    TempDir dir;
    std::string parset = makeParset({"CS001"}, "[300]", 16, "");
    parset += "PIC.Core.CS001LBA.RSP.ports = [file:" + dir / "CS001LBA.rsp" + "]\n";
    writeFile(dir / "replay.parset", parset);
    const Result r = run(dir / "replay.parset" + " --replay-to udp:127.0.0.1:1,udp:127.0.0.1:2");
    CPPUNIT_ASSERT(r.status != 0);
    CPPUNIT_ASSERT(contains(r.output, "--replay-to"));
  }

  void testRecords() {
    TempDir dir;
    writeFile(dir / "obs.parset",
              makeParset({"CS001", "RS106"}, "[300..303]", 8, "Sim.seed = 2\n"));
    const Result r = run(dir / "obs.parset" + " --record " + dir / "rec" + " --duration 0.05");
    CPPUNIT_ASSERT_EQUAL(0, r.status);
    const int64_t packets = (int64_t(0.05 * 195312.5) + 1 + 15) / 16;
    for (const char* name : {"CS001LBA.rsp", "RS106LBA.rsp"})
      CPPUNIT_ASSERT_EQUAL(uintmax_t(packets * rspPacketSize(8, 4)),
                           std::filesystem::file_size(dir / (std::string("rec/") + name)));
    CPPUNIT_ASSERT(contains(r.output, "total: " + std::to_string(2 * packets) + " packets"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationSimExecutableTest);

}  // namespace rtcp::sim::test
