// The --status file: its text round-trips, malformed lines are named, replacement is
// atomic, and the ionproc executable writes it (finished=1 at the end).
#include <cppunit/extensions/HelperMacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "TestData.h"
#include "rtcp/Files.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/StatusFile.h"

namespace rtcp::ion {

class StatusFileTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StatusFileTest);
  CPPUNIT_TEST(testRoundTrip);
  CPPUNIT_TEST(testMalformedLine);
  CPPUNIT_TEST(testAtomicReplace);
  CPPUNIT_TEST(testIonprocWritesStatus);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    char pattern[] = "/tmp/rtcp-status-XXXXXX";
    CPPUNIT_ASSERT(mkdtemp(pattern));
    dir_ = pattern;
  }
  void tearDown() override {
    if (!std::getenv("RTCP_KEEP_TEST_DIRS")) std::filesystem::remove_all(dir_);
  }

  void testRoundTrip() {
    IonStatus status;
    status.wallTime = 1795000000.123456;
    status.finished = true;
    status.nrBlocks = 30;
    status.blockDuration = 0.99999744;
    status.newestBlock = 12;
    status.newestBlockLag = -0.25;
    // name, received, accepted, late, duplicated, rejected (implausible, before the start),
    // blocks served, samples served, flagged, blocks gone, last block, per port.
    status.stations = {{"CS001", 100, 98, 1, 2, 5, 3, 1, 13, 13000, 16, 0, 12, {50, 48}},
                       {"RS106", 7, 7, 0, 0, 0, 0, 0, 2, 2000, 0, 3, 11, {7}}};
    status.stations[0].samplesLevelFlagged = 4096;  // the view across subbands
    status.stations[0].subbandBlocksLevelFlagged = 2;
    status.blocksIntegrated = 26;
    status.integrations = 24;
    status.incompleteIntegrations = 1;
    status.storageQueued = 24;
    status.storageSent = 23;
    status.storageDropped = 1;
    status.storageConnections = 2;
    CPPUNIT_ASSERT(status == IonStatus::parse(status.format()));
    CPPUNIT_ASSERT(status.format().find("station[1].blocksGone=3\n") != std::string::npos);
    CPPUNIT_ASSERT(status.format().find("station[0].implausible=3\n") != std::string::npos);
    CPPUNIT_ASSERT(status.format().find("station[0].duplicated=2\n") != std::string::npos);
    // The one-line form for a stream (ionproc --status -, forwarded by mpiexec).
    const std::string line = status.formatLine();
    CPPUNIT_ASSERT(line.starts_with("rtcp-status time=1795000000.123456 finished=1 "));
    CPPUNIT_ASSERT(line.find('\n') == std::string::npos);
    CPPUNIT_ASSERT(status == IonStatus::parseLine(line));
    CPPUNIT_ASSERT(!IonStatus::parseLine("2026-01-01 00:00:00.000 ionproc[1] INFO ionproc: up"));
  }

  void testMalformedLine() {
    try {
      IonStatus::parse("time=1\nfinished\n");
      CPPUNIT_FAIL("a line without '=' must be refused");
    } catch (const std::runtime_error& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find("line 2") != std::string::npos);
    }
    CPPUNIT_ASSERT_THROW(IonStatus::parse("blocks=many\n"), std::runtime_error);
  }

  void testAtomicReplace() {
    const std::string path = dir_ + "/status";
    writeFileAtomically(path, "blocks=1\n");
    writeFileAtomically(path, "blocks=2\n");
    CPPUNIT_ASSERT_EQUAL(int64_t(2), IonStatus::read(path).nrBlocks);
    CPPUNIT_ASSERT(!std::filesystem::exists(path + ".tmp"));
    CPPUNIT_ASSERT_THROW(writeFileAtomically(dir_ + "/no/such/dir/status", "x=1\n"),
                         std::runtime_error);
  }

  /// An observation long past with no input: ionproc gives up at once (linger 0) and
  /// leaves a final status naming the observation's block count.
  void testIonprocWritesStatus() {
    const std::string parset = dir_ + "/past.parset";
    std::ofstream(parset)
        << "Observation.ObsID = 5\n"
           "Observation.startTime = '2020-01-01 00:00:00'\n"
           "Observation.stopTime = '2020-01-01 00:00:04'\n"
           "Observation.antennaSet = LBA_OUTER\nObservation.bandFilter = LBA_30_90\n"
           "Observation.VirtualInstrument.stationList = [CS001]\n"
           "Observation.channelsPerSubband = 16\n"
           "Observation.Beam[0].angle1 = 5.23\nObservation.Beam[0].angle2 = 0.71\n"
           "Observation.Beam[0].subbandList = [300]\n"
           "PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:1]\n"
           "OLAP.CNProc.integrationSteps = 12207\n"
           "Observation.DataProducts.Output_Correlated.locations = [localhost:" +
               dir_ + "]\n";
    const std::string status = dir_ + "/ionproc.status";
    const std::string secret = dir_ + "/observation.secret";
    ObservationSecret::generate().writeFile(secret);
    const std::string command = test::binaryDir() + "/ionproc/ionproc " + parset +
                                " --no-input --link tcp:127.0.0.1:0 --linger 0 --secret-file " +
                                secret + " --status " + status + " 2> " + dir_ + "/ionproc.log";
    CPPUNIT_ASSERT_EQUAL(0, std::system(command.c_str()));
    const IonStatus result = IonStatus::read(status);
    CPPUNIT_ASSERT(result.finished);
    CPPUNIT_ASSERT_EQUAL(int64_t(4), result.nrBlocks);  // 4 s of 12207 x 16 samples
    CPPUNIT_ASSERT_EQUAL(int64_t(-1), result.newestBlock);
    CPPUNIT_ASSERT(result.stations.empty());
  }

 private:
  std::string dir_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(StatusFileTest);

}  // namespace rtcp::ion
