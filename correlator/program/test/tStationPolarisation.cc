// Polarised sources through the whole chain: station-sim records a source at the phase
// centre with Stokes fractions (Sim.Source[0].Q/U/V) and independent receiver noise per
// station; the correlator program delay-compensates, channelises and correlates. The
// cross-correlations of every baseline give, in COBALT's convention (DESIGN §2.2),
// Q/I = (XX - YY) / (XX + YY), U/I = 2 Re XY / I, V/I = 2 Im XY / I, and YX = conj(XY).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <filesystem>

#include "DumpFile.h"
#include "Executables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/Baselines.h"
#include "rtcp/Logger.h"

namespace rtcp::correlator::test {

using observe::test::readFile;
using observe::test::runProgram;
using observe::test::SmallObservation;
using observe::test::writeParset;
using storage::test::TempDir;

namespace {

using cd = std::complex<double>;

/// Sums of XX, XY, YX, YY over channels 1..C-1, integrations and subbands of one baseline.
struct Products {
  cd xx, xy, yx, yy;
};

Products crossProducts(const std::string& dumpDirectory, int s1, int s2) {
  Products sum;
  for (int rank = 0;
       std::filesystem::exists(dumpDirectory + "/rank" + std::to_string(rank) + ".vis"); ++rank)
    for (CorrelatedData& data :
         ion::test::readDump(dumpDirectory + "/rank" + std::to_string(rank) + ".vis")) {
      const int baseline = baselineIndex(s1, s2);
      for (int c = 1; c < data.nrChannels; ++c) {
        sum.xx += cd(data.visibility(baseline, c, 0));
        sum.xy += cd(data.visibility(baseline, c, 1));
        sum.yx += cd(data.visibility(baseline, c, 2));
        sum.yy += cd(data.visibility(baseline, c, 3));
      }
    }
  return sum;
}

}  // namespace

class StationPolarisationTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationPolarisationTest);
  CPPUNIT_TEST(testCrossCorrelationsGiveTheSourceStokes);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCrossCorrelationsGiveTheSourceStokes() {
    SmallObservation o;
    o.stations = {"CS001", "CS002", "RS106"};
    o.subbands = "[300, 301]";
    o.seconds = 1.6;
    o.flux = 4;  // 2 per polarisation against receiver noise of 1
    o.channels = 64;
    o.steps = 1024;  // blocks of 0.34 s
    o.outputDir = dir_.path() + "/unused";
    const double q = 0.5, u = -0.3, v = 0.4;
    o.extra = "Sim.Source[0].Q = " + std::to_string(q) +
              "\nSim.Source[0].U = " + std::to_string(u) +
              "\nSim.Source[0].V = " + std::to_string(v) + "\n";
    const std::string recordings = dir_.path() + "/recordings";
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({observe::test::executable("station-sim/station-sim"),
                       writeParset(dir_.path() + "/record.parset", o), "--record", recordings},
                      dir_.path() + "/record.log"));
    o.realTime = false;
    for (const std::string& station : o.stations)
      o.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");
    const std::string parset = writeParset(dir_.path() + "/correlate.parset", o);
    const std::string dump = dir_.path() + "/dump", log = dir_.path() + "/correlate.log";
    CPPUNIT_ASSERT_EQUAL_MESSAGE(
        readFile(log), 0,
        runProgram({observe::mpirunExecutable(), "-np", "1", RTCP_CORRELATOR_LOCAL_EXE, parset,
                    "--dump", dump, "--threads", "1"},
                   log));

    for (int s2 = 1; s2 < 3; ++s2)
      for (int s1 = 0; s1 < s2; ++s1) {
        const Products p = crossProducts(dump, s1, s2);
        const double i = (p.xx + p.yy).real();
        const std::string baseline = std::to_string(s1) + "-" + std::to_string(s2);
        RTCP_LOG_INFO("test", "baseline " << baseline << ": Q/I " << (p.xx - p.yy).real() / i
                                          << ", U/I " << 2 * p.xy.real() / i << ", V/I "
                                          << 2 * p.xy.imag() / i);
        CPPUNIT_ASSERT(i > 0);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(baseline + " Q/I", q, (p.xx - p.yy).real() / i, 0.02);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(baseline + " U/I", u, 2 * p.xy.real() / i, 0.02);
        CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(baseline + " V/I", v, 2 * p.xy.imag() / i, 0.02);
        CPPUNIT_ASSERT_MESSAGE(baseline + " YX = conj(XY)",
                               std::abs(p.yx - std::conj(p.xy)) < 0.02 * i);
        // At the phase centre after compensation: XX and YY real.
        CPPUNIT_ASSERT_MESSAGE(baseline + " XX real", std::abs(p.xx.imag()) < 0.02 * i);
      }
  }

 private:
  TempDir dir_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationPolarisationTest);

}  // namespace rtcp::correlator::test
