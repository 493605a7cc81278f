// Whole observations of what LOFAR parsets ask for: two beams (SAPs) on two simulated
// sources, each beam's MSs fringe-stopped on its own source and imaged by WSClean where
// it is; HBA_DUAL's core stations as two antenna fields each; a station with an extra
// cable delay per polarisation, zero phase with the matching delay.X/Y and phase0
// correction and not without; a beam that tracks the Sun; and two of LOFAR's own
// production parsets (COBALT's and BG/P's), run after only an operator's edits.
#include <casacore/ms/MeasurementSets/MSColumns.h>
#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "FitsImage.h"
#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "rtcp/Files.h"
#include "rtcp/StationTable.h"

namespace rtcp::observe::test {
namespace {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

/// A short live observation with the given fields, free local ports for each.
struct LofarObservation {
  int64_t obsId = 4800;
  std::string antennaSet = "LBA_OUTER", bandFilter = "LBA_30_90";
  std::vector<std::string> stations = {"CS001", "CS002", "RS106"};
  std::vector<std::string> fields;  ///< antenna fields (for their ports)
  std::string beams;                ///< Observation.nrBeams and Observation.Beam[n].* lines
  std::string sky;                  ///< Sim.* lines
  std::string extra;
  std::string outputDir;

  std::string text() const {
    std::ostringstream p;
    p.precision(17);
    p << "Observation.ObsID = " << obsId << "\n"
      << "Observation.startTime = '2026-01-01 00:00:00'\nObservation.stopTime = '2026-01-01 "
         "00:00:04'\n"
      << "Observation.antennaSet = " << antennaSet << "\nObservation.bandFilter = " << bandFilter
      << "\n"
      << "Observation.VirtualInstrument.stationList = [";
    for (size_t i = 0; i < stations.size(); ++i) p << (i ? ", " : "") << stations[i];
    p << "]\nObservation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]\n"
      << "Cobalt.Correlator.nrChannelsPerSubband = 16\n"
      << "Cobalt.blockSize = 195312\n"  // 16 x 12207 samples: 0.99999 s
      << "Cobalt.Correlator.nrBlocksPerIntegration = 1\n"
      << beams;
    for (const std::string& field : fields)
      p << "PIC.Core." << field << ".RSP.ports = [udp:127.0.0.1:" << freeUdpPort() << "]\n";
    p << "Observation.DataProducts.Output_Correlated.locations = [localhost:" << outputDir << "]\n"
      << "Sim.noisePower = 1.0\nSim.seed = 3\n"
      << sky << extra;
    return p.str();
  }
};

std::string beam(int b, double ra, double dec, const std::string& subbands,
                 const std::string& type = "J2000") {
  std::ostringstream p;
  p.precision(17);
  p << "Observation.Beam[" << b << "].directionType = " << type << "\n"
    << "Observation.Beam[" << b << "].angle1 = " << ra << "\nObservation.Beam[" << b
    << "].angle2 = " << dec << "\n"
    << "Observation.Beam[" << b << "].subbandList = " << subbands << "\n";
  return p.str();
}

std::string source(int i, double ra, double dec, double flux, const std::string& type = "J2000") {
  std::ostringstream p;
  p.precision(17);
  p << "Sim.Source[" << i << "].directionType = " << type << "\nSim.Source[" << i
    << "].angle1 = " << ra << "\nSim.Source[" << i << "].angle2 = " << dec << "\nSim.Source[" << i
    << "].flux = " << flux << "\n";
  return p.str();
}

/// Runs it with --now; the settings of its effective parset.
ObservationSettings observe(const std::string& dir, const std::string& name,
                            const LofarObservation& o) {
  const std::string parset = dir + "/" + name + ".parset";
  std::ofstream(parset) << o.text();
  observeSuccessfully(parset, dir + "/" + name + "-obs", {"--now"}, dir + "/" + name + ".log");
  return ObservationSettings::fromFile(dir + "/" + name + "-obs/observation.parset");
}

/// Amplitude-weighted mean |phase| (degrees) of the unflagged cross-correlations of the
/// given products (0 XX, 1 XY, 2 YX, 3 YY) on baselines that `pick` accepts.
template <typename Pick>
double meanPhase(const MsContents& ms, std::initializer_list<int> products, Pick pick) {
  double weighted = 0, amplitude = 0;
  for (size_t row = 0; row < ms.nrRows; ++row) {
    if (ms.antenna1[row] == ms.antenna2[row] || !pick(ms.antenna1[row], ms.antenna2[row])) continue;
    for (int c = 0; c < ms.nrChannels; ++c)
      for (const int pol : products) {
        const size_t i = (row * size_t(ms.nrChannels) + size_t(c)) * 4 + size_t(pol);
        if (ms.flag[i]) continue;
        weighted += std::abs(ms.data[i]) * std::abs(std::arg(ms.data[i]));
        amplitude += std::abs(ms.data[i]);
      }
  }
  CPPUNIT_ASSERT_MESSAGE("no unflagged cross-correlation", amplitude > 0);
  return weighted / amplitude / kDegree;
}

double meanPhase(const MsContents& ms, std::initializer_list<int> products = {0, 3}) {
  return meanPhase(ms, products, [](int, int) { return true; });
}

std::string msPath(const ObservationSettings& s, int subband) {
  return s.correlatedOutput.directories[size_t(subband)] + "/" +
         s.correlatedOutput.filenames[size_t(subband)];
}

/// The FIELD's phase direction as casacore gives it: its frame and angles.
std::string phaseDirection(const std::string& ms) {
  const casacore::MeasurementSet table(ms);
  const casacore::MDirection dir =
      casacore::MSFieldColumns(table.field()).phaseDirMeasCol()(0)(casacore::IPosition(1, 0));
  std::ostringstream text;
  text.precision(9);
  text << casacore::MDirection::showType(dir.getRef().getType()) << " " << dir.getValue().getLong()
       << " " << dir.getValue().getLat() << " "
       << casacore::MSFieldColumns(table.field()).name()(0);
  return text.str();
}

/// A production parset from test/data/lofar-parsets with an operator's edits: the given
/// stations and subbands, a local port per field, LOFAR's default MS names in outputDir,
/// five seconds from now, and a simulated sky.
std::string editedProductionParset(const std::string& name, const std::string& edits,
                                   const std::vector<std::string>& fields,
                                   const std::string& outputDir) {
  std::ostringstream text;
  text << rtcp::readFile(rtcp::test::testDataDir() + "/lofar-parsets/" + name);
  CPPUNIT_ASSERT_MESSAGE(name, text.str().size() > 1000);
  text << "\n# An operator's edits\n" << edits;
  for (const std::string& field : fields)
    text << "PIC.Core." << field << ".RSP.ports = [udp:127.0.0.1:" << freeUdpPort() << "]\n";
  text << "Observation.DataProducts.Output_Correlated.filenames = []\n"
       << "Observation.DataProducts.Output_Correlated.locations = [localhost:" << outputDir
       << "]\nSim.noisePower = 1.0\nSim.seed = 5\n";
  return text.str();
}

/// Runs a parset's text with --now; the settings of its effective parset.
ObservationSettings observeText(const std::string& dir, const std::string& name,
                                const std::string& text) {
  const std::string parset = dir + "/" + name + ".parset";
  std::ofstream(parset) << text;
  observeSuccessfully(parset, dir + "/" + name + "-obs", {"--now"}, dir + "/" + name + ".log");
  return ObservationSettings::fromFile(dir + "/" + name + "-obs/observation.parset");
}

/// What the MS of subband sb must hold for a production parset: the channels, the
/// integration time, the antenna fields and the beam's FIELD the parset asks for, and
/// zero phase toward the simulated source at the beam's centre.
void checkProductionMs(const ObservationSettings& s, int sb, int channels, double integration,
                       const std::vector<std::string>& fields, const std::array<double, 2>& beam) {
  const std::string path = msPath(s, sb);
  const MsContents ms = readMeasurementSet(path);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(path, channels, ms.nrChannels);
  CPPUNIT_ASSERT_MESSAGE(path, ms.nrRows > 0);
  CPPUNIT_ASSERT_DOUBLES_EQUAL(integration, ms.interval[0], 1e-5);
  CPPUNIT_ASSERT_MESSAGE(path, ms.antennaNames == fields);
  CPPUNIT_ASSERT_DOUBLES_EQUAL(beam[0], ms.phaseDirection[0], 1e-12);
  CPPUNIT_ASSERT_DOUBLES_EQUAL(beam[1], ms.phaseDirection[1], 1e-12);
  const std::string direction = phaseDirection(path);  // frame, angles, name
  CPPUNIT_ASSERT_MESSAGE(direction, direction.starts_with("J2000 "));
  CPPUNIT_ASSERT_MESSAGE(
      direction, direction.ends_with(" BEAM_" + std::to_string(s.subbands[size_t(sb)].beam)));
  const double phase = meanPhase(ms);
  CPPUNIT_ASSERT_MESSAGE(path + ": mean |phase| " + std::to_string(phase) + " degrees", phase < 3);
}

}  // namespace

class LofarObservationsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(LofarObservationsTest);
  CPPUNIT_TEST(testTwoBeamsTwoSources);
  CPPUNIT_TEST(testHbaDual);
  CPPUNIT_TEST(testCableDelay);
  CPPUNIT_TEST(testSunTracking);
  CPPUNIT_TEST(testCobaltProductionParset);
  CPPUNIT_TEST(testBgpProductionParset);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testTwoBeamsTwoSources() {
    TempDir dir;
    LofarObservation o;
    o.obsId = 4801;
    // Five stations: with three, the dirty image's fringes have other maxima as high as
    // the source's within the image at some hour angles.
    o.stations = {"CS001", "CS002", "CS003", "RS106", "RS205"};
    o.fields = {"CS001LBA", "CS002LBA", "CS003LBA", "RS106LBA", "RS205LBA"};
    o.outputDir = dir.path() + "/out";
    // Two SAPs 13 degrees apart, a source on each; the station beam (6 degrees wide)
    // hides each source from the other beam's subbands. Near the pole (Dec 83 degrees: 46
    // to 60 degrees high at LOFAR at any hour), so that the image does not depend on when
    // the test runs (a source low in the east stretched the beam a degree off).
    const double dec = 1.45, ra1 = kCentreRa + 0.3 / std::cos(dec);
    // Beam 1's two subbands 20 MHz apart: four seconds of ten baselines give few uv
    // points, and at one frequency the dirty image has maxima as high as the source's
    // elsewhere (88' off once); two frequencies spread each baseline radially.
    o.beams = "Observation.nrBeams = 2\n" + beam(0, kCentreRa, dec, "[300, 301]") +
              beam(1, ra1, dec, "[310, 410]");
    o.sky = "Sim.nrSources = 2\nSim.stationBeamWidth = 0.1\n" + source(0, kCentreRa, dec, 4) +
            source(1, ra1, dec, 4);
    const ObservationSettings s = observe(dir.path(), "beams", o);
    CPPUNIT_ASSERT_EQUAL(std::string("L4801_SAP000_SB001_uv.MS"), s.correlatedOutput.filenames[1]);
    CPPUNIT_ASSERT_EQUAL(std::string("L4801_SAP001_SB002_uv.MS"), s.correlatedOutput.filenames[2]);
    for (int sb = 0; sb < 4; ++sb) {
      const MsContents ms = readMeasurementSet(msPath(s, sb));
      const int b = s.subbands[size_t(sb)].beam;
      CPPUNIT_ASSERT_DOUBLES_EQUAL(s.beams[size_t(b)].ra, ms.phaseDirection[0], 1e-9);
      CPPUNIT_ASSERT_EQUAL(
          std::string("BEAM_") + std::to_string(b),
          phaseDirection(msPath(s, sb)).substr(phaseDirection(msPath(s, sb)).rfind(' ') + 1));
      const double phase = meanPhase(ms);
      CPPUNIT_ASSERT_MESSAGE("subband " + std::to_string(sb) + " of beam " + std::to_string(b) +
                                 ": mean |phase| " + std::to_string(phase) + " degrees",
                             phase < 3);
      // UVW toward the beam's own phase centre, as casacore derives it from FIELD (in
      // python-casacore: TaQL's mscal keeps conversion engines that are never freed).
      const std::string count = dir.path() + "/uvw-" + std::to_string(sb) + ".txt";
      CPPUNIT_ASSERT_EQUAL(
          0, runProgram(
                 {"/usr/bin/python3", "-c",
                  "from casacore import tables; print('mismatching rows:', tables.taql('select "
                  "from " +
                      msPath(s, sb) + " where any(abs(UVW - mscal.uvwj2000()) > 1e-3)').nrows())"},
                 count));
      CPPUNIT_ASSERT_MESSAGE(readFile(count),
                             readFile(count).find("mismatching rows: 0\n") != std::string::npos);
    }
    // WSClean images beam 1's source where it is (the image centre is FIELD's direction).
    const std::string image = dir.path() + "/beam1";
    const std::string wsclean = "wsclean -quiet -j 1 -size 128 128 -scale 1amin -niter 0 -name " +
                                image + " " + msPath(s, 2) + " " + msPath(s, 3) + " > " +
                                dir.path() + "/wsclean.log 2>&1";
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/wsclean.log"), 0,
                                 std::system(wsclean.c_str()));
    const rtcp::test::FitsImage::Peak peak =
        rtcp::test::FitsImage::read(image + "-image.fits").peak();
    const double offset = rtcp::test::angularDistance(peak.ra, peak.dec, ra1, dec);
    CPPUNIT_ASSERT_MESSAGE(std::to_string(offset / kDegree * 60) + " arcmin from the source",
                           offset < 2.5 / 60 * kDegree);
  }

  void testHbaDual() {
    TempDir dir;
    LofarObservation o;
    o.obsId = 4802;
    o.antennaSet = "HBA_DUAL";
    o.bandFilter = "HBA_110_190";
    o.stations = {"RS106", "CS002", "CS001"};
    o.fields = {"CS001HBA0", "CS001HBA1", "CS002HBA0", "CS002HBA1", "RS106HBA"};
    o.outputDir = dir.path() + "/out";
    o.beams = "Observation.nrBeams = 1\n" + beam(0, kCentreRa, kCentreDec, "[200, 201]");
    o.sky = "Sim.nrSources = 1\n" + source(0, kCentreRa, kCentreDec, 4);
    const ObservationSettings s = observe(dir.path(), "dual", o);
    const StationTable& table = StationTable::shipped();
    for (int sb = 0; sb < 2; ++sb) {
      const MsContents ms = readMeasurementSet(msPath(s, sb));
      CPPUNIT_ASSERT(
          (ms.antennaNames == std::vector<std::string>{"CS001HBA0", "CS001HBA1", "CS002HBA0",
                                                       "CS002HBA1", "RS106HBA"}));
      CPPUNIT_ASSERT(ms.antennaPositions[0] == table.find("CS001", "HBA0")->position);
      CPPUNIT_ASSERT(ms.antennaPositions[1] == table.find("CS001", "HBA1")->position);
      // HBA0 and HBA1 of one station: two antennas 129 m apart (UVW keeps the length),
      // fringe-stopped like any other pair.
      const auto& p0 = ms.antennaPositions[0];
      const auto& p1 = ms.antennaPositions[1];
      const double apart = std::hypot(p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(129.0, apart, 0.1);
      bool sawPair = false;
      for (size_t row = 0; row < ms.nrRows; ++row)
        if (ms.antenna1[row] == 0 && ms.antenna2[row] == 1) {
          const double length = std::hypot(ms.uvw[row][0], ms.uvw[row][1], ms.uvw[row][2]);
          CPPUNIT_ASSERT_DOUBLES_EQUAL(apart, length, 1e-3);
          sawPair = true;
        }
      CPPUNIT_ASSERT(sawPair);
      const double pair = meanPhase(ms, {0, 3}, [](int a, int b) { return a == 0 && b == 1; });
      CPPUNIT_ASSERT_MESSAGE("CS001HBA0-CS001HBA1: " + std::to_string(pair) + " degrees", pair < 3);
      CPPUNIT_ASSERT(meanPhase(ms) < 3);
    }
  }

  void testCableDelay() {
    TempDir dir;
    LofarObservation o;
    o.obsId = 4803;
    o.fields = {"CS001LBA", "CS002LBA", "RS106LBA"};
    o.outputDir = dir.path() + "/out";
    o.beams = "Observation.nrBeams = 1\n" + beam(0, kCentreRa, kCentreDec, "[300]");
    // CS002's signal path: 2.7 us on X, 2.2 us on Y and a 0.6 radian phase on Y.
    o.sky = "Sim.nrSources = 1\n" + source(0, kCentreRa, kCentreDec, 4) +
            "Sim.CS002LBA.delay.X = 2.7e-6\nSim.CS002LBA.delay.Y = 2.2e-6\nSim.CS002LBA.phase0.Y = "
            "0.6\n";
    auto withCs002 = [](int a, int b) { return a == 1 || b == 1; };
    const ObservationSettings without = observe(dir.path(), "uncorrected", o);
    const MsContents raw = readMeasurementSet(msPath(without, 0));
    const double uncorrected = meanPhase(raw, {0, 1, 2, 3}, withCs002);
    CPPUNIT_ASSERT_MESSAGE(std::to_string(uncorrected) + " degrees without the correction",
                           uncorrected > 30);
    CPPUNIT_ASSERT(meanPhase(raw, {0, 3}, [](int a, int b) { return a != 1 && b != 1; }) < 3);

    o.outputDir = dir.path() + "/out2";
    o.extra =
        "PIC.Core.CS002LBA.LBA_OUTER.LBA_30_90.delay.X = 2.7e-6\n"
        "PIC.Core.CS002LBA.LBA_OUTER.LBA_30_90.delay.Y = 2.2e-6\n"
        "PIC.Core.CS002LBA.LBA_OUTER.LBA_30_90.phase0.Y = 0.6\n";
    const ObservationSettings with = observe(dir.path(), "corrected", o);
    const double corrected =
        meanPhase(readMeasurementSet(msPath(with, 0)), {0, 1, 2, 3}, withCs002);
    CPPUNIT_ASSERT_MESSAGE(std::to_string(corrected) + " degrees with the correction",
                           corrected < 3);
  }

  void testSunTracking() {
    TempDir dir;
    LofarObservation o;
    o.obsId = 4804;
    o.fields = {"CS001LBA", "CS002LBA", "RS106LBA"};
    o.outputDir = dir.path() + "/out";
    o.beams = "Observation.nrBeams = 1\n" + beam(0, 0, 0, "[300]", "SUN");
    o.sky = "Sim.nrSources = 1\n" + source(0, 0, 0, 4, "SUN");
    const ObservationSettings s = observe(dir.path(), "sun", o);
    const MsContents ms = readMeasurementSet(msPath(s, 0));
    const double phase = meanPhase(ms);
    CPPUNIT_ASSERT_MESSAGE(std::to_string(phase) + " degrees toward the Sun", phase < 3);
    CPPUNIT_ASSERT_EQUAL(std::string("SUN 0 0 BEAM_0"), phaseDirection(msPath(s, 0)));
  }
  /// COBALT's CorrProc_173014 (HBA_DUAL_INNER, 8-bit, 64 channels, 2 blocks of 196608
  /// samples per integration: 2.01327 s).
  void testCobaltProductionParset() {
    TempDir dir;
    const std::vector<std::string> fields{"CS001HBA0", "CS001HBA1", "CS002HBA0", "CS002HBA1",
                                          "RS106HBA"};
    const double ra = 3.714678791505112, dec = 0.9111103547876606;  // its Beam[0]
    const std::string text =
        editedProductionParset("CorrProc_173014.param",
                               "Observation.VirtualInstrument.stationList = [CS002, RS106, CS001]\n"
                               "Observation.Beam[0].subbandList = [96..99]\n"
                               "Observation.stopTime = 2013-09-01 13:03:39\n"
                               "Sim.nrSources = 1\n" +
                                   source(0, ra, dec, 4),
                               fields, dir.path() + "/out");
    const ObservationSettings s = observeText(dir.path(), "cobalt", text);
    CPPUNIT_ASSERT_EQUAL(4, s.nrSubbands());
    for (int sb = 0; sb < 4; ++sb) {
      CPPUNIT_ASSERT_EQUAL("L173014_SAP000_SB00" + std::to_string(sb) + "_uv.MS",
                           s.correlatedOutput.filenames[size_t(sb)]);
      checkProductionMs(s, sb, 64, 2 * 196608 / 195312.5, fields, {ra, dec});
    }
  }

  /// BG/P's obs99275: two beams (SAPs), LBA_OUTER, 16-bit, 64 channels, 4 blocks of
  /// 720 x 64 samples per integration (0.943718 s, where its integrationTime says 1.0).
  void testBgpProductionParset() {
    TempDir dir;
    const std::vector<std::string> fields{"CS001LBA", "CS002LBA", "RS106LBA"};
    const std::array<double, 2> beam0{6.040199114275893, -0.10396635465921555};
    const std::array<double, 2> beam1{5.822544921023853, -0.2971728484139445};
    const std::string text = editedProductionParset(
        "obs99275-bgp.parset",
        "Observation.VirtualInstrument.stationList = [CS001LBA, CS002LBA, RS106LBA]\n"
        "Observation.Beam[0].subbandList = [102, 127]\n"
        "Observation.Beam[1].subbandList = [102, 127]\n"
        "Observation.startTime = '2013-03-05 08:46:00'\n"
        "Observation.stopTime = '2013-03-05 08:46:05'\n"
        "Observation.DataProducts.Output_Beamformed.enabled = false\n"
        "Observation.DataProducts.Output_CoherentStokes.enabled = false\n"
        "Observation.DataProducts.Output_IncoherentStokes.enabled = false\n"
        "Sim.nrSources = 2\nSim.stationBeamWidth = 0.1\n" +
            source(0, beam0[0], beam0[1], 4) + source(1, beam1[0], beam1[1], 4),
        fields, dir.path() + "/out");
    const ObservationSettings s = observeText(dir.path(), "bgp", text);
    CPPUNIT_ASSERT_EQUAL(4, s.nrSubbands());
    CPPUNIT_ASSERT_EQUAL(std::string("L99275_SAP001_SB003_uv.MS"), s.correlatedOutput.filenames[3]);
    for (int sb = 0; sb < 4; ++sb)
      checkProductionMs(s, sb, 64, 4 * 720 * 64 / 195312.5, fields, sb < 2 ? beam0 : beam1);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(LofarObservationsTest);

}  // namespace rtcp::observe::test
