// A beam-formed observation across hosts (network namespaces, TestHosts.h; the stations
// on an input host and one rank on a compute host, as in observe_hosts_test): the coherent
// TAB's file on the storage host of the MSs, the incoherent TAB's four files on a second
// storage host that holds nothing else. observe starts a storage-sink there too (through
// mpiexec) for those files alone; ionproc sends their blocks to it on its own
// authenticated connection; each sink's `--report` lines reach observe's summary as
// host:path.
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "BeamFormedChecks.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "TestHosts.h"

namespace rtcp::observe::test {

class BeamFormedHostsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedHostsTest);
  CPPUNIT_TEST(testFilesLandOnTheHostTheirLocationNames);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testFilesLandOnTheHostTheirLocationNames() {
    TestHosts hosts("launch", {"in1", "cn1", "st1", "st2"});
    SmallObservation o = beamFormedObservation(hosts.disk(), 4753);
    for (size_t i = 0; i < o.stations.size(); ++i)
      o.inputs.push_back("udp:in1:" + std::to_string(10000 + i));
    o.outputHost = "st1";
    o.extra =
        "Cobalt.Nodes = [cn1_0]\nPIC.Core.Cobalt.cn1_0.host = cn1\n" +
        twoTabKeys(o, {"st1:" + hosts.disk() + "/bf"}, {"st2:" + hosts.disk() + "/bf", "IQUV"});
    const std::string parset = writeParset(hosts.disk() + "/bf.parset", o);
    const std::string obs = hosts.disk() + "/obs";
    const std::string logPath = hosts.disk() + "/observe.log";
    // MPI between namespaces over TCP (shared memory would bypass their network).
    std::vector<std::string> command{"/usr/bin/env", "UCX_TLS=tcp,self"};
    for (const std::string& a :
         observeCommand({parset, "--now", "--dir", obs, "--launcher-exec", hosts.remoteShell()}))
      command.push_back(a);
    const int code = runProgram(hosts.on("launch", command), logPath);
    const std::string log = readFile(logPath);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(log, 0, code);
    const std::string status = summaryValue(obs, "status");
    CPPUNIT_ASSERT_MESSAGE(status + "\n" + log, status == "\"ok\"" || status == "\"degraded\"");
    for (const char* sink : {"-hosts st1 ", "-hosts st2 "})
      CPPUNIT_ASSERT_MESSAGE(log, log.find(sink) != std::string::npos);

    checkBeamFormedFiles(hosts.diskOf("st1") + "/bf", {beamFormedName(4753, 0, 0)});
    std::vector<std::string> incoherent;
    for (int component = 0; component < 4; ++component)
      incoherent.push_back(beamFormedName(4753, 1, component));
    checkBeamFormedFiles(hosts.diskOf("st2") + "/bf", incoherent);
    checkBeamFormedSummary(obs, "st1:" + hosts.disk() + "/bf", {beamFormedName(4753, 0, 0)});
    checkBeamFormedSummary(obs, "st2:" + hosts.disk() + "/bf", incoherent);
    CPPUNIT_ASSERT(std::filesystem::exists(hosts.diskOf("st1") + "/out/L4753_SAP000_SB000_uv.MS"));
    CPPUNIT_ASSERT(!std::filesystem::exists(hosts.diskOf("st2") + "/out"));
    CPPUNIT_ASSERT(!std::filesystem::exists(hosts.diskOf("launch") + "/bf"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedHostsTest);

}  // namespace rtcp::observe::test
