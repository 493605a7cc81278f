// End to end through the real storage-sink executable over TCP: analytic correlator
// products of a point source off the phase centre, imaged by WSClean, must peak where
// the source is on the sky (a conjugation or UVW sign error mirrors it through the
// centre, a transposition swaps the offsets). taql and aoflagger must read the same MS,
// and none of the three may warn about it (run with measures tables that cover the date,
// so that casacore has nothing to warn about either).
#include <cppunit/extensions/HelperMacros.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "FitsImage.h"
#include "MeasuresTables.h"
#include "MsReader.h"
#include "OutputLayout.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "TestPrograms.h"
#include "rtcp/Baselines.h"
#include "rtcp/DelayModel.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::storage::test {
using ::rtcp::test::FitsImage;  // shared with the observe tests (test/FitsImage.h)
namespace {

constexpr double kDegree = M_PI / 180;

/// The lines of a tool's log that warn or complain (case-insensitive), "" when none do.
std::string complaints(const std::string& log) {
  std::istringstream text(::rtcp::test::readFile(log));
  std::string found;
  for (std::string line; std::getline(text, line);) {
    std::string lower = line;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    for (const char* word : {"warn", "severe", "error", "exception", "cannot", "not found"})
      if (lower.find(word) != std::string::npos) {
        found += line + "\n";
        break;
      }
  }
  return found;
}

uint16_t freePort() {
  TcpListener probe("127.0.0.1", 0);
  return probe.port();
}

}  // namespace

class WscleanImageTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(WscleanImageTest);
  CPPUNIT_TEST(testSourceLandsWhereItIs);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSourceLandsWhereItIs() {
    TempDir dir;
    TestObservation observation;
    observation.obsId = 777;
    observation.stations = {"CS001", "CS002", "CS003", "CS004", "CS005", "RS106", "RS205", "RS305"};
    observation.subbands = "[200, 300, 400]";  // 39 to 78 MHz: radial uv coverage
    observation.channels = 8;
    observation.steps = 732421;  // 30 s integrations
    observation.start = "2025-06-01 22:00:00";
    observation.stop = "2025-06-01 22:30:00";  // 60 integrations, 7.5 degrees of hour angle
    observation.location = "localhost:" + dir.path();
    const std::string parset = writeParset(dir.path(), observation);
    const ObservationSettings settings =
        ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
    const Direction centre = settings.beams[0];
    const Direction source{centre.ra + 0.6 * kDegree / std::cos(centre.dec),
                           centre.dec + 0.8 * kDegree};

    const uint16_t port = freePort();
    const pid_t sink = ::rtcp::test::startProgram(
        {rtcp::test::binaryDir() + "/storage-sink/storage-sink", parset, "--secret-file",
         writeSecret(dir.path()), "--port", std::to_string(port), "--host", "127.0.0.1",
         "--staging-mb", "1"},
        dir.path() + "/storage-sink.log");
    std::vector<std::thread> senders;  // a connection per subband, all at once
    for (int s = 0; s < settings.nrSubbands(); ++s)
      senders.emplace_back([&, s] { sendModel(settings, s, centre, source, port); });
    for (std::thread& sender : senders) sender.join();
    CPPUNIT_ASSERT_EQUAL(
        0, ::rtcp::test::waitProgram(sink));  // exits by itself once every integration arrived

    // casacore tables covering the observation (Debian's are too old or absent).
    const double today = std::floor(::rtcp::test::mjdNow());
    const std::string casarc = ::rtcp::test::writeMeasuresTables(dir.path() + "/measures",
                                                                 {60800, today + 60, today - 10});
    const auto run = [&](const std::string& command, const std::string& log) {
      const int status = ::rtcp::test::runWithCasarc(casarc, command + " > " + log + " 2>&1");
      CPPUNIT_ASSERT_EQUAL_MESSAGE(command + ": " + ::rtcp::test::readFile(log), 0, status);
      CPPUNIT_ASSERT_EQUAL_MESSAGE(command + " complains", std::string(), complaints(log));
    };

    std::string measurementSets;
    for (int index : {0, 1, 2})
      measurementSets +=
          " " + dir.path() + "/" + ObservationSettings::defaultFilename(777, 0, index);
    const std::string ms = dir.path() + "/" + ObservationSettings::defaultFilename(777, 0, 1);
    const std::string image = dir.path() + "/image";
    run("wsclean -j 2 -size 256 256 -scale 30asec -niter 0 -name " + image + measurementSets,
        dir.path() + "/wsclean.log");
    checkPeak(FitsImage::read(image + "-image.fits"), source, centre);

    // casacore's query tool reads the MS: 8 x 7 / 2 cross-correlations per integration.
    CPPUNIT_ASSERT_EQUAL(size_t(60 * 28),
                         taqlCount("select from " + ms + " where ANTENNA1 != ANTENNA2"));
    run("taql -noph 'select gmax(abs(UVW - mscal.uvwj2000())) from " + ms + "'",
        dir.path() + "/taql.log");
    run("taql -noph 'select from " + ms + "::LOFAR_ANTENNA_FIELD where NAME == \"LBA\"'",
        dir.path() + "/taql-fields.log");
    // AOFlagger flags a copy in place.
    const std::string copy = dir.path() + "/copy.MS";
    std::filesystem::copy(ms, copy, std::filesystem::copy_options::recursive);
    run("aoflagger -v " + copy, dir.path() + "/aoflagger.log");
    CPPUNIT_ASSERT_EQUAL(size_t(60 * 36), readMeasurementSet(copy).nrRows);
  }

 private:
  /// Sends the correlator's products x_s1 conj(x_s2) of a 1 Jy point source as DESIGN
  /// §2.3 defines them: after delay compensation toward the centre, station s holds
  /// x_s = exp(+2 pi i f dtau_s) with dtau_s = tau_s(source) - tau_s(centre) from the
  /// delay model (independent of the writer's UVW). The MS then holds the conjugate,
  /// conj(x_s1) x_s2 (DESIGN §2.5).
  static void sendModel(const ObservationSettings& settings, int subbandIndex,
                        const Direction& centre, const Direction& source, uint16_t port) {
    const DelayModel delays(settings);
    const int nrStations = settings.nrStations();
    std::unique_ptr<Stream> stream = connectSink(port, settings.observationId, 20.0);
    const double start = SampleClock(settings.clockMHz).unixTime(settings.startSample());
    for (int64_t i = 0; i < settings.nrIntegrations(); ++i) {
      const double time = start + (double(i) + 0.5) * settings.integrationDuration();
      const std::vector<double> toSource = delays.delays(source, time);
      const std::vector<double> toCentre = delays.delays(centre, time);
      CorrelatedData block(nrStations, settings.channelsPerSubband);
      block.subband = subbandIndex;
      block.integration = i;
      for (int b = 0; b < nrBaselines(nrStations); ++b) {
        const auto [s1, s2] = baselineStations(b);
        const double dtau1 = toSource[size_t(s1)] - toCentre[size_t(s1)];
        const double dtau2 = toSource[size_t(s2)] - toCentre[size_t(s2)];
        for (int c = 0; c < settings.channelsPerSubband; ++c) {
          const double phase =
              2 * M_PI * settings.channelFrequency(subbandIndex, c) * (dtau1 - dtau2);
          const uint32_t n = 1000;
          block.valid(b, c) = n;
          for (int p : {0, 3})  // XX, YY; WSClean's Stokes I is their mean
            block.visibility(b, c, p) =
                float(n) * std::complex<float>(float(std::cos(phase)), float(std::sin(phase)));
        }
      }
      const std::vector<uint8_t> bytes = block.serialise(uint64_t(settings.observationId));
      stream->write(bytes.data(), bytes.size());
    }
    CPPUNIT_ASSERT(stream->finishWriting(30));
  }

  static void checkPeak(const FitsImage& image, const Direction& source, const Direction& centre) {
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.0, std::remainder(centre.ra / kDegree - image.crval1, 360.0),
                                 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(centre.dec / kDegree, image.crval2, 1e-6);
    size_t peak = 0;
    for (size_t i = 0; i < image.pixels.size(); ++i)
      if (image.pixels[i] > image.pixels[peak]) peak = i;
    double ra = 0, dec = 0;
    image.worldOf(double(peak % size_t(image.width)), double(peak / size_t(image.width)), ra, dec);
    const double pixel = 30.0 / 3600 * kDegree;
    const double error = ::rtcp::test::angularDistance(ra, dec, source.ra, source.dec);
    const double separation =
        ::rtcp::test::angularDistance(source.ra, source.dec, centre.ra, centre.dec);
    std::ostringstream where;
    where << "peak " << image.pixels[peak] << " at RA " << ra / kDegree << " Dec " << dec / kDegree
          << ", source at RA " << source.ra / kDegree << " Dec " << source.dec / kDegree
          << ": off by " << error / pixel << " pixels (source " << separation / kDegree
          << " deg from the centre)";
    CPPUNIT_ASSERT_MESSAGE(where.str(), error <= pixel);
    CPPUNIT_ASSERT_MESSAGE(where.str(), image.pixels[peak] > 0.5f);  // a 1 Jy source, no beam
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(WscleanImageTest);

}  // namespace rtcp::storage::test
