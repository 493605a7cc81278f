// The correlator MPI program on recorded station data (correlator-local: each rank reads
// its stations' recordings itself, test/LocalMode.h): the visibilities do not depend on how many
// ranks share the work, every rank gets a share, and bad input stops every rank with a message
// naming it.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "DumpFile.h"
#include "Executables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"

namespace rtcp::correlator::test {

using observe::test::readFile;
using observe::test::runProgram;
using observe::test::SmallObservation;
using observe::test::writeParset;
using storage::test::TempDir;

namespace {

/// (integration, subband) -> the integration, from every rank<R>.vis of a dump directory.
using Integrations = std::map<std::pair<int64_t, int>, CorrelatedData>;

Integrations readDumps(const std::string& directory, std::vector<size_t>& perRank) {
  Integrations all;
  for (int rank = 0; std::filesystem::exists(directory + "/rank" + std::to_string(rank) + ".vis");
       ++rank) {
    std::vector<CorrelatedData> mine =
        ion::test::readDump(directory + "/rank" + std::to_string(rank) + ".vis");
    perRank.push_back(mine.size());
    for (CorrelatedData& data : mine) {
      const auto key = std::make_pair(data.integration, data.subband);
      CPPUNIT_ASSERT_MESSAGE("an integration written twice", !all.count(key));
      all.emplace(key, std::move(data));
    }
  }
  return all;
}

}  // namespace

class CorrelatorProgramTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(CorrelatorProgramTest);
  CPPUNIT_TEST(testRankCountDoesNotChangeVisibilities);
  CPPUNIT_TEST(testExchangePathsAgree);
  CPPUNIT_TEST(testMissingRecordingStopsAllRanks);
  CPPUNIT_TEST(testDumpNeedsLocalInput);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    o_.stations = {"CS001", "CS002", "CS003", "RS106", "RS205"};
    o_.subbands = "[300..302]";  // 3 subbands: an uneven share for 2 ranks
    o_.steps = 3052;             // 16 x 3052 samples = 0.25 s blocks
    o_.blocksPerIntegration = 2;
    o_.seconds = 2.1;  // 8 blocks, 4 integrations
    o_.outputDir = dir_.path() + "/unused";
    const std::string recordings = dir_.path() + "/recordings";
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({observe::test::executable("station-sim/station-sim"),
                       writeParset(dir_.path() + "/record.parset", o_), "--record", recordings},
                      dir_.path() + "/record.log"));
    o_.realTime = false;
    for (const std::string& station : o_.stations)
      o_.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");
  }

  void testRankCountDoesNotChangeVisibilities() {
    const std::string parset = writeParset(dir_.path() + "/replay.parset", o_);
    std::vector<size_t> oneRank, twoRanks;
    const Integrations one = correlate(parset, 1, oneRank);
    const Integrations two = correlate(parset, 2, twoRanks);

    CPPUNIT_ASSERT_EQUAL(size_t(4 * 3), one.size());
    CPPUNIT_ASSERT_EQUAL(size_t(2), twoRanks.size());
    CPPUNIT_ASSERT_EQUAL(size_t(6), twoRanks[0]);  // 12 (integration, subband) pairs dealt evenly
    CPPUNIT_ASSERT_EQUAL(size_t(6), twoRanks[1]);
    CPPUNIT_ASSERT_EQUAL(one.size(), two.size());
    const uint32_t fullCount = uint32_t(o_.blocksPerIntegration * o_.steps);
    for (const auto& [key, a] : one) {
      const CorrelatedData& b = two.at(key);
      CPPUNIT_ASSERT_EQUAL(a.visibilities.size(), b.visibilities.size());
      CPPUNIT_ASSERT_MESSAGE("visibilities of integration " + std::to_string(key.first) +
                                 " subband " + std::to_string(key.second) +
                                 " differ between 1 and 2 ranks",
                             std::memcmp(a.visibilities.data(), b.visibilities.data(),
                                         a.visibilities.size() * sizeof(a.visibilities[0])) == 0);
      CPPUNIT_ASSERT(
          std::equal(a.validSamples.begin(), a.validSamples.end(), b.validSamples.begin()));
      // Recorded without loss: after the first integration (whose filter history and
      // coarse delay reach before the recording), every sample counts.
      if (key.first > 0)
        for (size_t i = 0; i < a.validSamples.size(); ++i)
          if (i % size_t(a.nrChannels) != 0)  // channel 0 (the subband's edge) is always flagged
            CPPUNIT_ASSERT_EQUAL(fullCount, a.validSamples[i]);
      CPPUNIT_ASSERT(std::abs(a.visibilities[4]) >
                     0);  // baseline 0, channel 1 (channel 0 is flagged), XX
    }
  }

  /// Ranks on one node exchange through MPI-3 shared memory by default; by MPI messages
  /// (as across nodes) they give the same visibilities, bit for bit.
  void testExchangePathsAgree() {
    const std::string parset = writeParset(dir_.path() + "/replay.parset", o_);
    std::vector<size_t> perRank;
    const Integrations shared = correlate(parset, 2, perRank);
    CPPUNIT_ASSERT(readFile(dir_.path() + "/dump2.log").find("exchange in MPI-3 shared memory") !=
                   std::string::npos);
    const Integrations messages = correlate(parset, 2, perRank, {"--exchange", "messages"});
    CPPUNIT_ASSERT(readFile(dir_.path() + "/dump2.log").find("exchange by MPI messages") !=
                   std::string::npos);
    CPPUNIT_ASSERT_EQUAL(size_t(4 * 3), shared.size());
    CPPUNIT_ASSERT_EQUAL(shared.size(), messages.size());
    for (const auto& [key, a] : shared) {
      const CorrelatedData& b = messages.at(key);
      CPPUNIT_ASSERT(std::memcmp(a.visibilities.data(), b.visibilities.data(),
                                 a.visibilities.size() * sizeof(a.visibilities[0])) == 0);
      CPPUNIT_ASSERT(
          std::equal(a.validSamples.begin(), a.validSamples.end(), b.validSamples.begin()));
    }
  }

  void testMissingRecordingStopsAllRanks() {
    SmallObservation broken = o_;
    broken.inputs[3] = "file:" + dir_.path() + "/recordings/RS999.rsp";
    const std::string log = dir_.path() + "/broken.log";
    const int code = runProgram(
        {observe::mpirunExecutable(), "-np", "2", RTCP_CORRELATOR_LOCAL_EXE,
         writeParset(dir_.path() + "/broken.parset", broken), "--dump", dir_.path() + "/broken"},
        log);
    CPPUNIT_ASSERT(code != 0);
    CPPUNIT_ASSERT_MESSAGE(readFile(log), readFile(log).find("RS999.rsp") != std::string::npos);
  }

  /// The tests' program takes --dump or --ionproc, not both; the correlator program
  /// needs --ionproc (it reads no station input of its own).
  void testDumpNeedsLocalInput() {
    const std::string parset = writeParset(dir_.path() + "/replay.parset", o_);
    const std::string log = dir_.path() + "/options.log";
    int code = runProgram({observe::mpirunExecutable(), "-np", "1", RTCP_CORRELATOR_LOCAL_EXE,
                           parset, "--ionproc", "tcp:127.0.0.1:1", "--dump", dir_.path()},
                          log);
    CPPUNIT_ASSERT(code != 0);
    CPPUNIT_ASSERT_MESSAGE(readFile(log), readFile(log).find("--dump") != std::string::npos);
    code = runProgram(
        {observe::mpirunExecutable(), "-np", "1", observe::partExecutable("correlator"), parset},
        log);
    CPPUNIT_ASSERT(code != 0);
    CPPUNIT_ASSERT_MESSAGE(readFile(log),
                           readFile(log).find("--ionproc is required") != std::string::npos);
  }

 private:
  Integrations correlate(const std::string& parset, int ranks, std::vector<size_t>& perRank,
                         const std::vector<std::string>& options = {}) {
    const std::string dump = dir_.path() + "/dump" + std::to_string(ranks);
    const std::string log = dump + ".log";
    std::filesystem::remove_all(dump);
    std::vector<std::string> command{observe::mpirunExecutable(),
                                     "-np",
                                     std::to_string(ranks),
                                     RTCP_CORRELATOR_LOCAL_EXE,
                                     parset,
                                     "--dump",
                                     dump,
                                     "--threads",
                                     "1"};
    command.insert(command.end(), options.begin(), options.end());
    const int code = runProgram(command, log);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(log), 0, code);
    return readDumps(dump, perRank);
  }

  TempDir dir_;
  SmallObservation o_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(CorrelatorProgramTest);

}  // namespace rtcp::correlator::test
