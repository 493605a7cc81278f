// One ionproc per input host (DESIGN §1), on one machine: stations whose inputs arrive
// on 127.0.0.1 and on 127.0.0.2 stand for two input hosts. observe starts an ionproc
// for each (the second with --no-output), the ranks fetch every station from the
// ionproc that serves it, and baselines between stations of different ionprocs are
// as good as the others: full weights, and phase ~0 toward a source at the phase centre.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <string>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

class InputHostsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(InputHostsTest);
  CPPUNIT_TEST(testOneIonprocPerInputHost);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testOneIonprocPerInputHost() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4717;
    o.seconds = 3;
    o.stations = {"CS001", "CS002", "RS106"};
    o.inputs = {"udp:127.0.0.1:" + std::to_string(freeUdpPort()),
                "udp:127.0.0.2:" + std::to_string(freeUdpPort()),
                "udp:127.0.0.2:" + std::to_string(freeUdpPort())};
    o.outputDir = dir.path() + "/out";
    const std::string obs = dir.path() + "/obs";
    const std::string log =
        observeSuccessfully(writeParset(dir.path() + "/hosts.parset", o), obs,
                            {"--now", "--ranks", "2"}, dir.path() + "/observe.log");
    CPPUNIT_ASSERT_MESSAGE(log, log.find("--stations CS001LBA\n") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        log, log.find("--stations CS002LBA,RS106LBA --no-output") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(log, std::filesystem::exists(obs + "/ionproc-2.log"));
    const std::string ranks = readFile(obs + "/correlator.log");
    CPPUNIT_ASSERT_MESSAGE(ranks, ranks.find("fetched from 2 ionprocs") != std::string::npos);

    for (const char* subband : {"000", "001"}) {
      const MsContents ms =
          readMeasurementSet(o.outputDir + "/L4717_SAP000_SB" + subband + "_uv.MS");
      CPPUNIT_ASSERT_EQUAL(size_t(3 * 6), ms.nrRows);  // 3 integrations of 6 baselines
      double weightedPhase = 0, amplitude = 0;
      for (size_t row = 0; row < ms.nrRows; ++row) {
        for (size_t i = row * size_t(ms.nrChannels) * 4; i < (row + 1) * size_t(ms.nrChannels) * 4;
             ++i) {
          // Nothing lost: flags only in channel 0 (the subband's edge, always flagged) and
          // in the first integration (its filter history precedes the start).
          const bool edge = (i / 4) % size_t(ms.nrChannels) == 0;
          if (row >= 6 && !edge)
            CPPUNIT_ASSERT_MESSAGE("row " + std::to_string(row) + " flagged", !ms.flag[i]);
          if (ms.flag[i]) continue;
          if (ms.antenna1[row] == ms.antenna2[row] || i % 4 == 1 || i % 4 == 2) continue;
          weightedPhase += std::abs(ms.data[i]) * std::abs(std::arg(ms.data[i]));
          amplitude += std::abs(ms.data[i]);
        }
      }
      const double meanPhase = weightedPhase / amplitude / kDegree;
      CPPUNIT_ASSERT_MESSAGE("mean |phase| " + std::to_string(meanPhase) + " degrees",
                             meanPhase < 3);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(InputHostsTest);

}  // namespace rtcp::observe::test
