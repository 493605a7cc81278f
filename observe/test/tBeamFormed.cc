// Beam-formed observations through the real executables (observe, station-sim, ionproc,
// the correlator ranks, storage-sink): the files the parset names, and only those, land
// where its locations say, readable in h5py with every attribute (check_beamformed.py),
// their data not all zero and their weights full; observe's summary lists each with its
// blocks expected, written and lost.
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <string>
#include <vector>

#include "BeamFormedChecks.h"
#include "StorageTestUtil.h"
#include "rtcp/RankStatus.h"

namespace rtcp::observe::test {

using storage::test::TempDir;

class BeamFormedObservationTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedObservationTest);
  CPPUNIT_TEST(testCoherentAndIncoherentStokesBesideCorrelation);
  CPPUNIT_TEST(testFlysEyeAlone);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// Two coherent TABs of Stokes I (one on the source, one 2 degrees off) and an incoherent
  /// one of IQUV, correlated output at once: six files, and the MSs.
  void testCoherentAndIncoherentStokesBesideCorrelation() {
    TempDir dir;
    SmallObservation o = beamFormedObservation(dir.path(), 4751);
    const std::string bf = "localhost:" + dir.path() + "/bf";
    o.extra = beamFormedKeys(o, {bf, "I", 4}, {bf, "IQUV", 16},
                             {{}, {.decOffset = 2 * kDegree}, {.coherent = false}});
    const std::string obs = dir.path() + "/obs";
    const std::string log =
        observeSuccessfully(writeParset(dir.path() + "/bf.parset", o), obs,
                            {"--now", "--console", "0"}, dir.path() + "/observe.log");
    // The console's TAB power (observe/README.md, "The console"), from the ranks' status:
    // every TAB at the last block, the one on the source above the one 2 degrees off.
    for (int rank = 0; rank < 2; ++rank) {
      const correlator::RankStatus status =
          correlator::RankStatus::read(obs + "/correlator-rank" + std::to_string(rank) + ".status");
      CPPUNIT_ASSERT_EQUAL(size_t(3), status.tabs.size());
      CPPUNIT_ASSERT_EQUAL(std::string("SAP0 TAB1"), status.tabs[1]);
      CPPUNIT_ASSERT_EQUAL(status.nrBlocks - 1, status.tabBlock);
      for (const double power : status.tabPower) CPPUNIT_ASSERT(power > 0);
      CPPUNIT_ASSERT_MESSAGE(status.format(), status.tabPower[0] > status.tabPower[1]);
    }
    const std::vector<std::string> files{beamFormedName(4751, 0, 0), beamFormedName(4751, 1, 0),
                                         beamFormedName(4751, 2, 0), beamFormedName(4751, 2, 1),
                                         beamFormedName(4751, 2, 2), beamFormedName(4751, 2, 3)};
    const std::string checked = checkBeamFormedFiles(dir.path() + "/bf", files);
    CPPUNIT_ASSERT_MESSAGE(checked, checked.find("INCOHERENT") != std::string::npos);
    for (const char* subband : {"000", "001"})
      CPPUNIT_ASSERT_MESSAGE(
          log, std::filesystem::exists(o.outputDir + "/L4751_SAP000_SB" + subband + "_uv.MS"));
    checkBeamFormedSummary(obs, dir.path() + "/bf", files);
  }

  /// Fly's eye without correlated output: one file of Stokes I per station, and no MS.
  void testFlysEyeAlone() {
    TempDir dir;
    SmallObservation o = beamFormedObservation(dir.path(), 4752);
    o.extra =
        "Observation.DataProducts.Output_Correlated.enabled = F\n"
        "Observation.DataProducts.Output_CoherentStokes.enabled = T\n"
        "Observation.DataProducts.Output_CoherentStokes.locations = [localhost:" +
        dir.path() +
        "/bf]\n"
        "Cobalt.BeamFormer.flysEye = T\n"
        "Cobalt.BeamFormer.CoherentStokes.which = I\n"
        "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16\n"
        "Cobalt.BeamFormer.CoherentStokes.timeIntegrationFactor = 16\n";
    const std::string obs = dir.path() + "/obs";
    observeSuccessfully(writeParset(dir.path() + "/flyseye.parset", o), obs, {"--now"},
                        dir.path() + "/observe.log");
    std::vector<std::string> files;
    for (int station = 0; station < 4; ++station) files.push_back(beamFormedName(4752, station, 0));
    checkBeamFormedFiles(dir.path() + "/bf", files);
    CPPUNIT_ASSERT(!std::filesystem::exists(o.outputDir));
    checkBeamFormedSummary(obs, dir.path() + "/bf", files);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedObservationTest);

}  // namespace rtcp::observe::test
