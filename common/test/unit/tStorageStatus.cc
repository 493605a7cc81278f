// storage-sink's status (StorageStatus.h): its text and its one-line form round-trip (the
// per-file beam-formed lists too), malformed entries are named, other lines are not taken
// for it.
#include <cppunit/extensions/HelperMacros.h>

#include <stdexcept>

#include "rtcp/StorageStatus.h"

namespace rtcp::storage::test {

class StorageStatusTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StorageStatusTest);
  CPPUNIT_TEST(testRoundTrip);
  CPPUNIT_TEST(testMalformed);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRoundTrip() {
    StorageStatus s;
    s.wallTime = 1795000000.25;
    s.listening = true;
    s.measurementSets = 488;
    s.measurementSetsCreated = 487;
    s.measurementSetsReady = 488;
    s.measurementSetsClosed = 3;
    s.integrationsExpected = 92720;
    s.blocksReceived = 1000;
    s.blocksRejected = 2;
    s.integrationsWritten = 990;
    s.integrationsFlagged = 7;
    s.backlog = 8;
    s.backlogBytes = 8 * 576;
    s.bytesReceived = 640000;
    s.bytesWritten = 450000;
    s.connectionsRefused = 3;
    s.blocksDuplicated = 1;
    // Per beam-formed file: names (one with a space), blocks written, subband-blocks lost.
    s.beamFormedFiles = 2;
    s.beamFormedFileNames = {"L78_SAP000_B000_S0_P000_bf.h5", "my file.h5"};
    s.beamFormedFileBlocks = {4, 3};
    s.beamFormedFileSubbandBlocksLost = {0, 2};
    CPPUNIT_ASSERT(s == StorageStatus::parse(s.format()));
    CPPUNIT_ASSERT(s.format().find("beamformed.fileBlocks=4,3\n") != std::string::npos);
    CPPUNIT_ASSERT(s.format().find("connections.refused=3\n") != std::string::npos);
    CPPUNIT_ASSERT(s.format().find("integrations.flagged=7\n") != std::string::npos);
    const std::string line = s.formatLine();
    CPPUNIT_ASSERT(line.starts_with("rtcp-storage-status time=1795000000.25 listening=1 "));
    CPPUNIT_ASSERT(line.find('\n') == std::string::npos);
    CPPUNIT_ASSERT(s == StorageStatus::parseLine(line));
    CPPUNIT_ASSERT(!StorageStatus::parseLine("rtcp-status time=1 finished=0"));  // ionproc's
  }

  void testMalformed() {
    try {
      StorageStatus::parse("time=1\nbacklog=many\n");
      CPPUNIT_FAIL("a bad value was accepted");
    } catch (const std::runtime_error& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find("backlog") != std::string::npos);
    }
    try {
      StorageStatus::parse("time=1\nno value here\n");
      CPPUNIT_FAIL("a line without '=' was accepted");
    } catch (const std::runtime_error& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find("line 2") != std::string::npos);
    }
    try {
      StorageStatus::parse("beamformed.fileNames=a.h5,b.h5\nbeamformed.fileBlocks=4\n");
      CPPUNIT_FAIL("per-file lists of different lengths were accepted");
    } catch (const std::runtime_error& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find("beamformed.fileNames") != std::string::npos);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StorageStatusTest);

}  // namespace rtcp::storage::test
