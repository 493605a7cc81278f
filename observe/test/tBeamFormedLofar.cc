// LOFAR's own beam-formed parsets (test/data/lofar-parsets, README there) observed through
// the real executables after only an operator's edits: fewer stations and subbands, a
// stop three seconds after the start (two blocks), the inputs on this machine (station-sim
// plays them, in real time), the output locations here, no compute nodes of LOFAR's
// cluster; for the specification also what it left to be filled in (a block size, a ring
// size). They give exactly the files they ask for, with their own
// names (COBALT's parset: its 222 filenames; SAS's DE602 specification: COBALT's default
// names), readable in h5py with the attributes that say what each holds.
#include <cppunit/extensions/HelperMacros.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "BeamFormedChecks.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "rtcp/BeamFormedTiming.h"
#include "rtcp/Files.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"

namespace rtcp::observe::test {

using storage::test::TempDir;

namespace {

/// A parset of test/data/lofar-parsets with an operator's edits, `perField` local UDP
/// ports for each antenna field, its beam-formed outputs located in DIR/bf.
std::string edited(const std::string& name, const std::string& edits,
                   const std::vector<std::string>& fields, int perField, const std::string& dir) {
  std::ostringstream text;
  text << rtcp::readFile(rtcp::test::testDataDir() + "/lofar-parsets/" + name);
  CPPUNIT_ASSERT_MESSAGE(name, text.str().size() > 1000);
  text << "\n# An operator's edits\n" << edits;
  for (const std::string& field : fields) {
    text << "PIC.Core." << field << ".RSP.ports = [";
    for (int i = 0; i < perField; ++i) text << (i ? ", " : "") << "udp:127.0.0.1:" << freeUdpPort();
    text << "]\n";
  }
  for (const char* kind : {"CoherentStokes", "IncoherentStokes"})
    text << "Observation.DataProducts.Output_" << kind << ".locations = [localhost:" << dir
         << "/bf]\n";
  text << "Sim.nrSources = 1\nSim.Source[0].flux = 4\nSim.noisePower = 1.0\nSim.seed = 5\n";
  return text.str();
}

/// Observes the text with --now; the settings of the effective parset.
ObservationSettings observeText(const std::string& dir, const std::string& text) {
  const std::string parset = dir + "/lofar.parset";
  std::ofstream(parset) << text;
  observeSuccessfully(parset, dir + "/obs", {"--now"}, dir + "/observe.log");
  return ObservationSettings::fromFile(dir + "/obs/observation.parset");
}

/// The values of a list key of the original parset.
std::vector<std::string> listOf(const std::string& name, const std::string& key) {
  return Parset::fromFile(rtcp::test::testDataDir() + "/lofar-parsets/" + name)
      .getStringVector(key, {});
}

/// check_beamformed.py's line of one file.
std::string lineOf(const std::string& checked, const std::string& name) {
  const size_t at = checked.find(name + " ");
  CPPUNIT_ASSERT_MESSAGE(name + "\n" + checked, at != std::string::npos);
  return checked.substr(at, checked.find('\n', at) - at);
}

/// "shape=RxC" of a file of a TAB that holds `blocks` blocks: the rows the filter bank's
/// and the dedispersion's delay leave of them (rtcp/BeamFormedTiming.h), C columns.
std::string shapeOf(const ObservationSettings& s, const TabSettings& tab, int64_t blocks,
                    int columns) {
  const StokesSettings& st = s.beamFormed.stokes(tab);
  const int64_t rows = blocks * st.outputSamplesPerBlock(s.samplesPerBlock()) -
                       beamFormedDelay(s, tab) / st.inputSamplesPerSample();
  return "shape=" + std::to_string(rows) + "x" + std::to_string(columns) + " ";
}

/// Asserts that a file's line holds each part.
void assertHolds(const std::string& checked, const std::string& name,
                 const std::vector<std::string>& parts) {
  const std::string line = lineOf(checked, name);
  for (const std::string& part : parts)
    CPPUNIT_ASSERT_MESSAGE(part + "\n" + line, line.find(part) != std::string::npos);
}

}  // namespace

class BeamFormedLofarTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedLofarTest);
  CPPUNIT_TEST(testCobaltCoherentAndIncoherent);
  CPPUNIT_TEST(testSasDe602TwoTabsWithDispersionMeasures);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// COBALT's L221197: 3 SAPs of 74 TABs (12 coherent, 1 incoherent, 4 rings), coherent
  /// and incoherent Stokes I of 16 channels integrated 6 times, no correlation; one core
  /// station (its two HBA fields) and one subband per SAP.
  void testCobaltCoherentAndIncoherent() {
    TempDir dir;
    const std::string name = "cs+is-221197.parset";
    const ObservationSettings s =
        observeText(dir.path(), edited(name,
                                       "Cobalt.Nodes = []\n"
                                       "Observation.VirtualInstrument.stationList = [CS002]\n"
                                       "Observation.Beam[0].subbandList = [100]\n"
                                       "Observation.Beam[1].subbandList = [100]\n"
                                       "Observation.Beam[2].subbandList = [100]\n"
                                       "Observation.stopTime = 2014-04-22 15:37:03\n"
                                       "Sim.Source[0].angle1 = 0.9293418663500114\n"
                                       "Sim.Source[0].angle2 = 0.952579228492432\n",
                                       {"CS002HBA0", "CS002HBA1"}, 4, dir.path()));
    // Exactly the parset's own file names.
    std::vector<std::string> names =
        listOf(name, "Observation.DataProducts.Output_CoherentStokes.filenames");
    const std::vector<std::string> incoherent =
        listOf(name, "Observation.DataProducts.Output_IncoherentStokes.filenames");
    names.insert(names.end(), incoherent.begin(), incoherent.end());
    CPPUNIT_ASSERT_EQUAL(size_t(222), names.size());
    const std::string checked = checkBeamFormedFiles(dir.path() + "/bf", names);
    // Two blocks of 2048 samples (196608 / (16 x 6)) of 16 channels, less the final filter
    // bank's delay.
    const std::string shape = shapeOf(s, s.beamFormed.saps[1].tabs[12], 2, 16);
    CPPUNIT_ASSERT_EQUAL(std::string("shape=4095x16 "), shape);
    assertHolds(checked, "L221197_SAP001_B012_S0_P000_bf.h5",
                {"SUB_ARRAY_POINTING_001 BEAM_012 STOKES_0 I INCOHERENT " + shape +
                 "OBSERVATION_ID=221197 CHANNELS_PER_SUBBAND=16 NOF_SUBBANDS=1 "
                 "DISPERSION_MEASURE=0.0 DEDISPERSION=NONE"});
    assertHolds(checked, "L221197_SAP002_B073_S0_P000_bf.h5",
                {"SUB_ARRAY_POINTING_002 BEAM_073 STOKES_0 I COHERENT " + shape});
    checkBeamFormedSummary(dir.path() + "/obs", dir.path() + "/bf", names);
    CPPUNIT_ASSERT(!s.correlatedOutput.enabled);
  }

  /// SAS's task specification for DE602 (MAC's ObsSW. keys): two coherent TABs with their
  /// own dispersion measures (coherently dedispersed) and 3 rings, coherent Stokes I of 16
  /// channels integrated 15 times; its incoherent output has no TAB and makes no file. The
  /// operator sets a block of whole output samples and high-resolution spectra and a ring
  /// size the specification left at a placeholder.
  void testSasDe602TwoTabsWithDispersionMeasures() {
    TempDir dir;
    // Unprefixed keys given later win over the specification's ObsSW. ones (Parset.h).
    const ObservationSettings s =
        observeText(dir.path(), edited("task_spec_78958.parset",
                                       "Cobalt.blockSize = 195840\n"
                                       "Cobalt.BeamFormer.nrHighResolutionChannels = 16\n"
                                       "Observation.Beam[0].tabRingSize = 0.01\n"
                                       "Observation.Beam[0].subbandList = [200, 201]\n"
                                       "Observation.stopTime = 2015-02-04 11:27:03\n"
                                       "Sim.Source[0].angle1 = 0.514140156\n"
                                       "Sim.Source[0].angle2 = 1.085720371\n",
                                       {"DE602HBA"}, 4, dir.path()));
    std::vector<std::string> names;
    for (int tab = 0; tab < 39; ++tab) names.push_back(beamFormedName(78958, tab, 0));
    CPPUNIT_ASSERT_EQUAL(size_t(39), s.beamFormed.files.size());
    const std::string checked = checkBeamFormedFiles(dir.path() + "/bf", names);
    // The dedispersed TABs with their own DMs, a ring's without; two blocks of 816 samples
    // (195840 / (16 x 15)) less the dedispersion's delay; two subbands of 16 channels.
    const auto& tabs = s.beamFormed.saps[0].tabs;
    assertHolds(
        checked, "L78958_SAP000_B000_S0_P000_bf.h5",
        {"SUB_ARRAY_POINTING_000 BEAM_000 STOKES_0 I COHERENT " + shapeOf(s, tabs[0], 2, 32) +
         "OBSERVATION_ID=78958 CHANNELS_PER_SUBBAND=16 NOF_SUBBANDS=2 "
         "DISPERSION_MEASURE=1.23456789 DEDISPERSION=COHERENT"});
    assertHolds(checked, "L78958_SAP000_B001_S0_P000_bf.h5",
                {"BEAM_001 STOKES_0 I COHERENT " + shapeOf(s, tabs[1], 2, 32) +
                 "OBSERVATION_ID=78958 CHANNELS_PER_SUBBAND=16 NOF_SUBBANDS=2 "
                 "DISPERSION_MEASURE=1.1223344 DEDISPERSION=COHERENT"});
    CPPUNIT_ASSERT_EQUAL(std::string("shape=1632x32 "), shapeOf(s, tabs[38], 2, 32));
    assertHolds(checked, "L78958_SAP000_B038_S0_P000_bf.h5",
                {"SUB_ARRAY_POINTING_000 BEAM_038 STOKES_0 I COHERENT shape=1632x32 "
                 "OBSERVATION_ID=78958 CHANNELS_PER_SUBBAND=16 NOF_SUBBANDS=2 "
                 "DISPERSION_MEASURE=0.0 DEDISPERSION=NONE"});
    checkBeamFormedSummary(dir.path() + "/obs", dir.path() + "/bf", names);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedLofarTest);

}  // namespace rtcp::observe::test
