// LOFAR's own beam-formed parsets (test/data/lofar-parsets, README there), after the edits
// an operator makes here (inputs pointed at this machine, a block size): they give the TABs,
// Stokes settings and files they ask for (COBALT's file names, in COBALT's order).
#include <cppunit/extensions/HelperMacros.h>

#include "SettingsTestUtil.h"
#include "rtcp/Files.h"

namespace {

using namespace rtcp::test::settings;
using rtcp::BeamFormedFile;
using rtcp::BeamFormedSettings;
using rtcp::StokesKind;
using rtcp::TabOrigin;

std::string readParset(const std::string& name) {
  const std::string text =
      rtcp::readFile(rtcp::test::sourceDir() + "/test/data/lofar-parsets/" + name);
  CPPUNIT_ASSERT_MESSAGE(name, !text.empty());
  return text;
}

ObservationSettings accepted(const std::string& text) {
  return ObservationSettings::fromParset(Parset::fromString(text, "lofar.parset"), table());
}

std::string errorsOf(const std::string& text) {
  try {
    accepted(text);
  } catch (const ParsetError& e) {
    return e.what();
  }
  CPPUNIT_FAIL("expected errors");
  return {};
}

/// `perField` local UDP ports for each field (one per RSP board its data slots use).
std::string ports(const std::vector<std::string>& fields, int perField = 1) {
  std::string text;
  int port = 11000;
  for (const std::string& field : fields) {
    text += "PIC.Core." + field + ".RSP.ports = [";
    for (int i = 0; i < perField; ++i)
      text += (i ? ", " : "") + std::string("udp:127.0.0.1:") + std::to_string(port++);
    text += "]\n";
  }
  return text;
}

bool warned(const ObservationSettings& s, const std::string& key, const std::string& part) {
  for (const rtcp::ParsetWarning& w : s.warnings)
    if (w.key == key && contains(w.message, part)) return true;
  return false;
}

/// Every file carries COBALT's name for its SAP, TAB, component and part.
void assertCobaltNames(const ObservationSettings& s) {
  for (const BeamFormedFile& f : s.beamFormed.files)
    CPPUNIT_ASSERT_EQUAL(
        BeamFormedSettings::defaultFilename(s.observationId, f.sap, f.tab, f.component, f.part),
        f.filename);
}

}  // namespace

class BeamFormedParsetsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedParsetsTest);
  CPPUNIT_TEST(testSasTwoTabsWithDispersionMeasures);
  CPPUNIT_TEST(testCobaltCoherentAndIncoherent);
  CPPUNIT_TEST(testBgpCoherentAndIncoherent);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// SAS's task specification for DE602: two coherent TABs, each with its own DM, 3 TAB
  /// rings, coherent I and incoherent IQUV.
  void testSasTwoTabsWithDispersionMeasures() {
    const std::string original = readParset("task_spec_78958.parset") + ports({"DE602HBA"}, 4);
    // As it is: the block placeholder and a ring size of 4 rad are named.
    const std::string errors = errorsOf(original);
    CPPUNIT_ASSERT_MESSAGE(errors, contains(errors, "key 'Observation.Beam[0].tabRingSize'"));
    CPPUNIT_ASSERT_MESSAGE(errors, contains(errors, "more than 90 degrees"));
    // A block of whole coherent (16 x 15) and incoherent (2 x 17) samples and high-resolution
    // spectra (4096): 2^12 x 3 x 5 x 17; rings 0.01 rad apart.
    const ObservationSettings s =
        accepted(original +
                 "ObsSW.Observation.ObservationControl.OnlineControl.Cobalt.blockSize = 1044480\n"
                 "ObsSW.Observation.Beam[0].tabRingSize = 0.01\n");
    const BeamFormedSettings& bf = s.beamFormed;
    CPPUNIT_ASSERT(bf.coherentEnabled && bf.incoherentEnabled);
    CPPUNIT_ASSERT(bf.coherent.kind == StokesKind::kI);
    CPPUNIT_ASSERT_EQUAL(16, bf.coherent.nrChannels);  // 0: BG/P's "as the correlator"
    CPPUNIT_ASSERT(warned(s, "Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband", "BG/P"));
    CPPUNIT_ASSERT_EQUAL(15, bf.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT(bf.incoherent.kind == StokesKind::kIQUV);
    CPPUNIT_ASSERT_EQUAL(2, bf.incoherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(17, bf.incoherent.timeIntegrationFactor);
    // Two manual TABs at their absolute directions with their DMs, then 1 + 6 + 12 + 18.
    const auto& tabs = bf.saps.at(0).tabs;
    CPPUNIT_ASSERT_EQUAL(size_t(2 + 37), tabs.size());
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.514140156, tabs[0].direction.ra, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.23456789, tabs[0].dispersionMeasure, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.403039045, tabs[1].direction.ra, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.07461926, tabs[1].direction.dec, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.1223344, tabs[1].dispersionMeasure, 0);
    CPPUNIT_ASSERT(bf.dedispersed(tabs[1]));
    CPPUNIT_ASSERT(tabs[2].origin == TabOrigin::kRing);
    // No incoherent TAB: the incoherent output makes nothing, and says so.
    CPPUNIT_ASSERT(
        warned(s, "Observation.DataProducts.Output_IncoherentStokes.enabled", "makes no file"));
    // 244 subbands, 243 per file: two parts per TAB.
    CPPUNIT_ASSERT_EQUAL(size_t(39 * 2), bf.files.size());
    CPPUNIT_ASSERT_EQUAL(243, bf.files[0].nrSubbands);
    CPPUNIT_ASSERT_EQUAL(1, bf.files[1].nrSubbands);
    CPPUNIT_ASSERT_EQUAL(243, bf.files[1].firstSubband);
    CPPUNIT_ASSERT_EQUAL(std::string("L78958_SAP000_B001_S0_P001_bf.h5"), bf.files[3].filename);
    assertCobaltNames(s);
  }

  /// A COBALT observation of 2014: 3 SAPs, each with 12 coherent TABs, 1 incoherent TAB and
  /// 4 rings (61 TABs); coherent and incoherent Stokes I; its own file names and places.
  void testCobaltCoherentAndIncoherent() {
    std::vector<std::string> fields;
    for (const char* station : {"CS007", "CS005", "CS002", "CS004", "CS006", "CS003"})
      for (const char* field : {"HBA0", "HBA1"}) fields.push_back(std::string(station) + field);
    const ObservationSettings s = accepted(readParset("cs+is-221197.parset") + ports(fields, 4));
    const BeamFormedSettings& bf = s.beamFormed;
    CPPUNIT_ASSERT_EQUAL(12, s.nrStations());
    CPPUNIT_ASSERT(!s.correlatedOutput.enabled);
    CPPUNIT_ASSERT_EQUAL(size_t(3), bf.saps.size());
    CPPUNIT_ASSERT_EQUAL(16, bf.coherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(6, bf.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT_EQUAL(196608 / 96, bf.coherent.outputSamplesPerBlock(s.samplesPerBlock()));
    CPPUNIT_ASSERT_EQUAL(64, bf.nrHighResolutionChannels);
    CPPUNIT_ASSERT_EQUAL(64, bf.nrDelayCompensationChannels);
    CPPUNIT_ASSERT(!bf.coherentDedispersion);
    for (const auto& sap : bf.saps) {
      CPPUNIT_ASSERT_EQUAL(13 + 61, int(sap.tabs.size()));
      CPPUNIT_ASSERT_EQUAL(1, sap.nrIncoherent());
    }
    // TAB 0: absoluteAngle1/2 (COBALT of 2014), not the offsets angle1/2.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.929341866350011, bf.saps[0].tabs[0].direction.ra, 0);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.987581228492432, bf.saps[0].tabs[0].direction.dec, 0);
    CPPUNIT_ASSERT(!bf.saps[0].tabs[12].coherent);
    CPPUNIT_ASSERT(bf.saps[0].tabs[12].direction == s.beams[0]);
    // The parset's 219 coherent and 3 incoherent names are COBALT's for rtcp's TABs, in order.
    CPPUNIT_ASSERT_EQUAL(size_t(222), bf.files.size());
    assertCobaltNames(s);
    const BeamFormedFile& incoherent = bf.files[size_t(bf.saps[1].tabs[12].files.at(0))];
    CPPUNIT_ASSERT_EQUAL(std::string("L221197_SAP001_B012_S0_P000_bf.h5"), incoherent.filename);
    CPPUNIT_ASSERT_EQUAL(std::string("locus003"), incoherent.host);
    CPPUNIT_ASSERT_EQUAL(std::string("/data/L221197/"), incoherent.directory);
    CPPUNIT_ASSERT_EQUAL(162, incoherent.nrSubbands);
    CPPUNIT_ASSERT_EQUAL(162, incoherent.firstSubband);
  }

  /// The BG/P parset of 2013: OLAP.CNProc_*Stokes keys only, a coherent and an incoherent TAB
  /// at each beam's centre (offsets 0, 0).
  void testBgpCoherentAndIncoherent() {
    const ObservationSettings s = accepted(
        readParset("obs99275-bgp.parset") +
        "Observation.VirtualInstrument.stationList = [CS001LBA, CS002LBA, RS106LBA]\n"
        "Observation.Beam[0].subbandList = [102, 127]\n"
        "Observation.Beam[1].subbandList = [102, 127]\n"
        "Observation.DataProducts.Output_Correlated.filenames = []\n"
        "Observation.DataProducts.Output_Correlated.locations = [localhost:/tmp/L99275]\n"
        "Observation.DataProducts.Output_Beamformed.enabled = false\n"
        "Observation.DataProducts.Output_CoherentStokes.filenames = []\n"
        "Observation.DataProducts.Output_CoherentStokes.locations = [localhost:/tmp/L99275]\n"
        "Observation.DataProducts.Output_IncoherentStokes.filenames = []\n"
        "Observation.DataProducts.Output_IncoherentStokes.locations = [localhost:/tmp/L99275]\n" +
        ports({"CS001LBA", "CS002LBA", "RS106LBA"}));
    const BeamFormedSettings& bf = s.beamFormed;
    CPPUNIT_ASSERT(s.correlatedOutput.enabled && bf.coherentEnabled && bf.incoherentEnabled);
    CPPUNIT_ASSERT_EQUAL(64, bf.coherent.nrChannels);
    CPPUNIT_ASSERT_EQUAL(30, bf.coherent.timeIntegrationFactor);
    CPPUNIT_ASSERT_EQUAL(1, bf.incoherent.timeIntegrationFactor);
    for (size_t b = 0; b < 2; ++b) {
      CPPUNIT_ASSERT_EQUAL(size_t(2), bf.saps[b].tabs.size());
      CPPUNIT_ASSERT(bf.saps[b].tabs[0].direction == s.beams[b]);  // offsets 0, 0 (BG/P)
      CPPUNIT_ASSERT(!bf.saps[b].tabs[1].coherent);
    }
    CPPUNIT_ASSERT_EQUAL(size_t(4), bf.files.size());
    CPPUNIT_ASSERT_EQUAL(std::string("L99275_SAP001_B001_S0_P000_bf.h5"), bf.files[3].filename);
    CPPUNIT_ASSERT_EQUAL(2, bf.files[3].firstSubband);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedParsetsTest);
