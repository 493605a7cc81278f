// What of a multi-host observation runs on one machine: `observe --mpi-hosts localhost`
// starts the ranks through mpiexec (`-hosts`, the parset on rank 0's standard input, the
// wrapper that reports exit codes), ionproc listens on every interface and the ranks
// reach it over TCP by this host's name (not the local unix socket); the observation
// completes with nothing dropped. With the console on, the ranks' status comes back as
// their `rtcp-rank-status` lines through mpiexec, which observe writes into their status
// files (as for ionproc's). observe_hosts_test runs parts on separate hosts.
#include <cppunit/extensions/HelperMacros.h>

#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/RankStatus.h"

namespace rtcp::observe::test {

using storage::test::TempDir;

class MpiHostsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(MpiHostsTest);
  CPPUNIT_TEST(testRanksStartedThroughHostList);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRanksStartedThroughHostList() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4716;
    o.seconds = 3;
    o.stations = {"CS001", "CS002", "RS106"};
    o.outputDir = dir.path() + "/out";
    const std::string log =
        observeSuccessfully(writeParset(dir.path() + "/hosts.parset", o), dir.path() + "/obs",
                            {"--now", "--mpi-hosts", "localhost", "--ranks", "2", "--console", "0"},
                            dir.path() + "/observe.log");
    CPPUNIT_ASSERT_MESSAGE(log, log.find("-hosts localhost -n 2") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        log, log.find("correlator -") != std::string::npos);  // the parset on standard input
    const std::string out = readFile(dir.path() + "/obs/correlator.out");
    CPPUNIT_ASSERT_MESSAGE(out,
                           out.find("rtcp-part-exit 0\nrtcp-part-exit 0\n") != std::string::npos ||
                               out.find("rtcp-part-exit 0\n") != out.rfind("rtcp-part-exit 0\n"));
    // The link listens on the ranks' host name, not on every interface.
    CPPUNIT_ASSERT_MESSAGE(log, log.find("--link tcp:") != std::string::npos &&
                                    log.find("--link tcp:0.0.0.0:") == std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(log, log.find("--ionproc tcp:") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(log, log.find("--status -") != std::string::npos);
    for (int rank = 0; rank < 2; ++rank) {
      const correlator::RankStatus status = correlator::RankStatus::read(
          dir.path() + "/obs/correlator-rank" + std::to_string(rank) + ".status");
      CPPUNIT_ASSERT_EQUAL(rank, status.rank);
      CPPUNIT_ASSERT(status.finished);
      CPPUNIT_ASSERT(status.blocks > 0 && status.blocks == status.nrBlocks);
      CPPUNIT_ASSERT(status.realTimeFactor() > 0 && !status.steps.empty());
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(MpiHostsTest);

}  // namespace rtcp::observe::test
