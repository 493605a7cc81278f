// Real LOFAR parsets (test/data/lofar-parsets, README there): as they are, rtcp names what
// it cannot do; after the edits an operator makes here (stations and subbands trimmed,
// inputs pointed at this machine, outputs local, beam-formed products off) they give the
// observation they ask for, with a short unknown-key summary.
#include <cppunit/extensions/HelperMacros.h>

#include <fstream>
#include <sstream>

#include "SettingsTestUtil.h"
#include "rtcp/Files.h"

namespace {

using namespace rtcp::test::settings;

std::string readParset(const std::string& name) {
  const std::string text =
      rtcp::readFile(rtcp::test::sourceDir() + "/test/data/lofar-parsets/" + name);
  CPPUNIT_ASSERT_MESSAGE(name, !text.empty());
  return text;
}

ObservationSettings settingsOfText(const std::string& text) {
  return ObservationSettings::fromParset(Parset::fromString(text, "lofar.parset"), table());
}

std::string errorsOfText(const std::string& text) {
  try {
    settingsOfText(text);
  } catch (const ParsetError& e) {
    return e.what();
  }
  CPPUNIT_FAIL("expected errors");
  return {};
}

/// Ports for the fields, one local UDP port each.
std::string ports(const std::vector<std::string>& fields) {
  std::string text;
  int port = 11000;
  for (const std::string& field : fields)
    text += "PIC.Core." + field + ".RSP.ports = [udp:127.0.0.1:" + std::to_string(port++) + "]\n";
  return text;
}

std::vector<std::string> names(const ObservationSettings& s) {
  std::vector<std::string> result;
  for (const rtcp::StationSettings& st : s.stations) result.push_back(st.name);
  return result;
}

}  // namespace

class ProductionParsetsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ProductionParsetsTest);
  CPPUNIT_TEST(testCobaltInterferometer);
  CPPUNIT_TEST(testBgpTwoBeams);
  CPPUNIT_TEST(testSasSpecification);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCobaltInterferometer() {
    const std::string original = readParset("CorrProc_173014.param");
    // As it is: 37 stations, none with input ports here, and 80 MSs on CEP's locus nodes.
    const std::string errors = errorsOfText(original);
    CPPUNIT_ASSERT(contains(errors, "station 'CS001HBA0' has no input streams"));
    CPPUNIT_ASSERT(contains(errors, "station 'RS509HBA' has no input streams"));
    const std::vector<std::string> fields{"CS001HBA0", "CS001HBA1", "CS002HBA0", "CS002HBA1",
                                          "RS106HBA"};
    const ObservationSettings s = settingsOfText(
        original +
        "Observation.VirtualInstrument.stationList = [CS002, RS106, CS001]\n"
        "Observation.Beam[0].subbandList = [96..99]\n"
        "Observation.DataProducts.Output_Correlated.filenames = []\n"
        "Observation.DataProducts.Output_Correlated.locations = [localhost:/tmp/L173014]\n" +
        ports(fields));
    CPPUNIT_ASSERT((names(s) == fields));
    CPPUNIT_ASSERT_EQUAL(8, s.bitsPerSample);
    CPPUNIT_ASSERT_EQUAL(64, s.channelsPerSubband);  // the later of its two values
    CPPUNIT_ASSERT_EQUAL(int64_t(196608), s.samplesPerBlock());
    CPPUNIT_ASSERT_EQUAL(2, s.blocksPerIntegration);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.01327, s.integrationDuration(), 1e-5);
    CPPUNIT_ASSERT_EQUAL(2, s.nyquistZone);
    CPPUNIT_ASSERT_EQUAL(std::string("L173014_SAP000_SB003_uv.MS"),
                         s.correlatedOutput.filenames[3]);
    // Its transitional OLAP.Correlator keys say otherwise: named, and COBALT's used.
    bool olapWarned = false;
    for (const rtcp::ParsetWarning& w : s.warnings)
      olapWarned = olapWarned || w.key == "OLAP.Correlator.nrChannelsPerSubband";
    CPPUNIT_ASSERT(olapWarned);
    CPPUNIT_ASSERT(s.unknownKeys.total > 250);
    CPPUNIT_ASSERT(s.unknownKeys.describe().size() < 40);  // a summary, not a key per line
  }

  void testBgpTwoBeams() {
    const std::string original = readParset("obs99275-bgp.parset");
    const std::string edits =
        "Observation.VirtualInstrument.stationList = [CS001LBA, CS002LBA, RS106LBA]\n"
        "Observation.Beam[0].subbandList = [102, 127]\n"
        "Observation.Beam[1].subbandList = [102, 127]\n"
        "Observation.DataProducts.Output_Correlated.filenames = []\n"
        "Observation.DataProducts.Output_Correlated.locations = [localhost:/tmp/L99275]\n" +
        ports({"CS001LBA", "CS002LBA", "RS106LBA"});
    // BG/P's complex voltages (Output_Beamformed) are named, with what to ask for instead.
    const std::string errors = errorsOfText(original + edits);
    CPPUNIT_ASSERT_MESSAGE(errors, contains(errors,
                                            "key 'Observation.DataProducts.Output_Beamformed"
                                            ".enabled'") &&
                                       contains(errors, "which = XXYY"));
    const ObservationSettings s =
        settingsOfText(original + edits +
                       "Observation.DataProducts.Output_Beamformed.enabled = false\n"
                       "Observation.DataProducts.Output_CoherentStokes.enabled = false\n"
                       "Observation.DataProducts.Output_IncoherentStokes.enabled = false\n");
    CPPUNIT_ASSERT((names(s) == std::vector<std::string>{"CS001LBA", "CS002LBA", "RS106LBA"}));
    CPPUNIT_ASSERT_EQUAL(size_t(2), s.beams.size());
    CPPUNIT_ASSERT_EQUAL(4, s.nrSubbands());
    CPPUNIT_ASSERT_EQUAL(1, s.subbands[2].beam);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(5.822544921023853, s.beams[1].ra, 1e-15);
    CPPUNIT_ASSERT_EQUAL(std::string("LBA_10_90"), s.bandFilter);
    CPPUNIT_ASSERT_EQUAL(64, s.channelsPerSubband);
    CPPUNIT_ASSERT_EQUAL(720, s.spectraPerBlock);
    CPPUNIT_ASSERT_EQUAL(4, s.blocksPerIntegration);
    // The parset's own positions and clock corrections.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(3826923.546, s.stations[0].position[0], 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.755947e-06, s.instrumentalDelay(0), 1e-18);
    CPPUNIT_ASSERT_EQUAL(std::string("L99275_SAP001_SB002_uv.MS"), s.correlatedOutput.filenames[2]);
    // OLAP.Correlator.integrationTime = 1.0 is not what 720 x 64 x 4 samples give.
    bool timeWarned = false;
    for (const rtcp::ParsetWarning& w : s.warnings)
      timeWarned = timeWarned || (w.key == "OLAP.Correlator.integrationTime" &&
                                  contains(w.message, "0.943718 s"));
    CPPUNIT_ASSERT(timeWarned);
    CPPUNIT_ASSERT(s.unknownKeys.describe().size() < 60);
  }

  void testSasSpecification() {
    const std::string original = readParset("task_spec_78958.parset");
    const std::string errors = errorsOfText(original);
    // Its beam-formed outputs are taken (not refused): what it lacks is named.
    CPPUNIT_ASSERT(!contains(errors, "Output_CoherentStokes.enabled"));
    CPPUNIT_ASSERT(contains(errors, "station 'DE602HBA' has no input streams"));
    // Its Cobalt.blockSize = 1 (a placeholder the scheduler fills in) is named too.
    CPPUNIT_ASSERT(contains(errors, "key 'Cobalt.blockSize': a block of 1 samples"));
    const ObservationSettings s = settingsOfText(
        original +
        "ObsSW.Observation.DataProducts.Output_CoherentStokes.enabled = false\n"
        "ObsSW.Observation.DataProducts.Output_IncoherentStokes.enabled = false\n"
        "ObsSW.Observation.DataProducts.Output_Correlated.enabled = true\n"
        "ObsSW.Observation.ObservationControl.OnlineControl.Cobalt.blockSize = 196608\n"
        "ObsSW.Observation.Beam[0].subbandList = [200, 201]\n"
        "Observation.DataProducts.Output_Correlated.locations = [localhost:/tmp/L78958]\n" +
        ports({"DE602HBA"}));
    CPPUNIT_ASSERT_EQUAL(int64_t(78958), s.observationId);
    CPPUNIT_ASSERT((names(s) == std::vector<std::string>{"DE602HBA"}));
    CPPUNIT_ASSERT_EQUAL(16, s.channelsPerSubband);
    CPPUNIT_ASSERT_EQUAL(12288, s.spectraPerBlock);
    CPPUNIT_ASSERT_EQUAL(std::string("L78958_SAP000_SB001_uv.MS"), s.correlatedOutput.filenames[1]);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ProductionParsetsTest);
