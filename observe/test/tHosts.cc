// An observation across hosts, each part on its own machine: network namespaces stand
// for 2 input hosts (4 stations each, their station-sims there too), 2 compute hosts (one
// rank each, placed by the parset's Cobalt.Nodes), 1 storage host and the launching
// host, each with its own name, address, /etc/hosts and disk. observe starts every part
// through mpiexec and a remote shell that enters the namespaces; the link runs over TCP,
// MPI over UCX's TCP transport (UCX_TLS=tcp,self: shared memory would quietly bypass the
// network between namespaces of one machine). A source 1 degree off the phase centre
// must show the fringes the MS's own UVW predict and image where it is.
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <string>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "SkyChecks.h"
#include "StorageTestUtil.h"
#include "TestHosts.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;

class HostsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(HostsTest);
  CPPUNIT_TEST(testEveryPartOnItsOwnHost);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryPartOnItsOwnHost() {
    TestHosts hosts("launch", {"in1", "in2", "cn1", "cn2", "st1"});
    SmallObservation o;
    o.obsId = 4720;
    placeSourceOffCentre(o);
    o.stations = {"CS001", "CS002", "CS302", "RS106", "CS028", "CS103", "RS205", "RS503"};
    for (size_t i = 0; i < o.stations.size(); ++i)
      o.inputs.push_back("udp:" + std::string(i < 4 ? "in1" : "in2") + ":" +
                         std::to_string(10000 + i));
    o.subbands = "[250, 400]";
    o.outputHost = "st1";
    o.outputDir = hosts.disk() + "/out";  // st1's own disk
    o.extra =
        "Cobalt.Nodes = [cn1_0, cn2_0]\nPIC.Core.Cobalt.cn1_0.host = "
        "cn1\nPIC.Core.Cobalt.cn2_0.host = cn2\n";
    const std::string parset =
        writeParset(hosts.disk() + "/hosts.parset", o);  // on the launching host
    const std::string obs = hosts.disk() + "/obs";
    const std::string logPath = hosts.disk() + "/observe.log";
    const std::vector<std::string> environment{"/usr/bin/env", "UCX_TLS=tcp,self",
                                               "UCX_LOG_LEVEL=info"};
    std::vector<std::string> command = environment;
    for (const std::string& a :
         observeCommand({parset, "--now", "--dir", obs, "--launcher-exec", hosts.remoteShell()}))
      command.push_back(a);
    const int code = runProgram(hosts.on("launch", command), logPath);
    const std::string log = readFile(logPath);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(log, 0, code);
    // Eight stations simulated in real time on one machine: late packets degrade the data
    // when it is loaded (the summary says so); the parts on their hosts are what is tested.
    const std::string status = summaryValue(obs, "status");
    CPPUNIT_ASSERT_MESSAGE(status + "\n" + log, status == "\"ok\"" || status == "\"degraded\"");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(log, std::string("0"), summaryValue(obs, "integrationsDropped"));

    // Every part on its host, started through mpiexec; logs and status came back here.
    for (const char* hostList :
         {"-hosts in1 ", "-hosts in2 ", "-hosts st1 ", "-hosts cn1:1,cn2:1 "})
      CPPUNIT_ASSERT_MESSAGE(std::string(hostList) + "\n" + log,
                             log.find(hostList) != std::string::npos);
    for (const char* part : {"ionproc", "ionproc-2", "correlator", "storage-sink@st1",
                             "station-sim@in1", "station-sim@in2"})
      CPPUNIT_ASSERT_MESSAGE(part, !readFile(obs + "/" + part + ".log").empty());
    CPPUNIT_ASSERT(readFile(obs + "/ionproc-2.out").find("rtcp-status ") != std::string::npos);
    CPPUNIT_ASSERT(std::filesystem::exists(obs + "/ionproc-2.status"));
    const std::string ranks = readFile(obs + "/correlator.log");
    CPPUNIT_ASSERT_MESSAGE(ranks, ranks.find("fetched from 2 ionprocs") != std::string::npos);
    // UCX (its log on standard output) names the host of each rank and the transports
    // between them: TCP over eth0, no shared memory.
    const std::string ucx = readFile(obs + "/correlator.out");
    CPPUNIT_ASSERT_MESSAGE(
        ucx, ucx.find("[cn1:") != std::string::npos && ucx.find("[cn2:") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(ucx, ucx.find("tag(tcp/eth0)") != std::string::npos);
    for (const char* sharedMemory : {"sysv/memory", "posix/memory", "cma/memory"})
      CPPUNIT_ASSERT_MESSAGE(ucx, ucx.find(sharedMemory) == std::string::npos);

    // The MSs are on the storage host's disk only; the summary names them there.
    CPPUNIT_ASSERT(!std::filesystem::exists(o.outputDir));
    const std::string written = summaryValue(obs, "measurementSets");
    std::vector<std::string> ms;
    for (const char* subband : {"000", "001"}) {  // LOFAR's names: the index of 250, 400
      const std::string name = "/out/L4720_SAP000_SB" + std::string(subband) + "_uv.MS";
      CPPUNIT_ASSERT_MESSAGE(written,
                             written.find("st1:" + hosts.disk() + name) != std::string::npos);
      ms.push_back(hosts.diskOf("st1") + name);
    }
    for (const std::string& path : ms) {
      const MsContents contents = readMeasurementSet(path);
      CPPUNIT_ASSERT_EQUAL(size_t(4 * 36),
                           contents.nrRows);  // 4 integrations of 36 baselines (with autos)
      checkFringes(contents, o);
    }
    checkImagePeak(ms, o, hosts.disk());
    // rtcp-inspect ran on st1, where the MSs are: its plots are beside them there, and the
    // summary names them host:path.
    const std::string plots = summaryValue(obs, "plots");
    const std::string autocorrelations = "/out/L4720_inspect/autocorrelations.png";
    CPPUNIT_ASSERT_MESSAGE(
        plots, plots.find("\"st1:" + hosts.disk() + autocorrelations + "\"") != std::string::npos);
    CPPUNIT_ASSERT(std::filesystem::exists(hosts.diskOf("st1") + autocorrelations));
    CPPUNIT_ASSERT(
        std::filesystem::exists(hosts.diskOf("st1") + "/out/L4720_inspect/msoverview.txt"));
    const std::string warnings = summaryValue(obs, "warnings");
    CPPUNIT_ASSERT_MESSAGE(warnings, warnings.find("rtcp-inspect") == std::string::npos);
    for (const char* host : {"in1", "in2", "cn1", "cn2", "st1"})
      CPPUNIT_ASSERT_MESSAGE(std::string("processes left on ") + host,
                             hosts.processes(host).empty());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(HostsTest);

}  // namespace rtcp::observe::test
