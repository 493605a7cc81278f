// What of a multi-host observation runs on one machine: `observe --mpi-hosts localhost`
// starts the ranks with `mpirun -hosts`, ionproc listens on every interface and the
// ranks reach it over TCP by this host's name (not the local unix socket); the
// observation completes with nothing dropped.
#include <cppunit/extensions/HelperMacros.h>

#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"

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
    const std::string log = observeSuccessfully(writeParset(dir.path() + "/hosts.parset", o), dir.path() + "/obs",
                                                {"--now", "--mpi-hosts", "localhost", "--ranks", "2"},
                                                dir.path() + "/observe.log");
    CPPUNIT_ASSERT_MESSAGE(log, log.find("-hosts localhost -np 2") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(log, log.find("--link tcp:0.0.0.0:") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(log, log.find("--ionproc tcp:") != std::string::npos);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(MpiHostsTest);

}  // namespace rtcp::observe::test
