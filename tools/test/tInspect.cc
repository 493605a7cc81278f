// rtcp-inspect on MeasurementSets that the real storage-sink wrote: a 4-station, 2-subband
// observation (autocorrelations, three baseline waterfalls, flags), a single-station one
// (baseline plots skipped, said so) and one where everything is flagged.
#include <cppunit/extensions/HelperMacros.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <set>
#include <sstream>

#include "StorageSink.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "TestPrograms.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {
namespace {

using namespace std::chrono_literals;

using rtcp::test::readFile;

/// Writes the MSs of an observation through a StorageSink: every integration of every
/// subband, or (flagged = true) nothing at all, so that the sink pads the grid with
/// flagged integrations.
std::vector<std::string> writeObservation(const TestObservation& observation, bool flagged) {
  const ObservationSettings s =
      ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
  SinkOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.staging.capacityBytes = 1 << 20;
  options.staging.flushIntervalSeconds = 0.1;
  options.secret = testSecret();
  StorageSink sink(s, options);
  auto run = std::async(std::launch::async, [&] { return sink.run(); });
  if (!flagged) {
    std::vector<uint8_t> bytes;
    for (const SubbandSettings& sb : s.subbands)
      for (int64_t i = 0; i < s.nrIntegrations(); ++i) {
        const auto block = makeBlock(s.nrStations(), s.channelsPerSubband, sb.index, i)
                               .serialise(uint64_t(s.observationId));
        bytes.insert(bytes.end(), block.begin(), block.end());
      }
    sendBytes(sink.port(), bytes, s.observationId);
  } else {
    sink.requestStop("test: nothing sent");
  }
  CPPUNIT_ASSERT(run.wait_for(60s) == std::future_status::ready);
  const SinkSummary summary = run.get();
  CPPUNIT_ASSERT(!summary.failed);
  std::vector<std::string> paths;
  for (const auto& out : summary.outputs) paths.push_back(out.path);
  return paths;
}

struct Result {
  int exitCode = -1;
  std::vector<std::string> pngs;  ///< the PNG paths printed
  std::string overview;           ///< the overview's path printed ("" when none)
  std::string errors;             ///< standard error
};

Result inspect(const std::string& dir, const std::vector<std::string>& ms) {
  std::string command = rtcp::test::binaryDir() + "/tools/rtcp-inspect --out " + dir + "/plots";
  for (const std::string& path : ms) command += " " + path;
  command += " > " + dir + "/inspect.out 2> " + dir + "/inspect.err";
  const int status = std::system(command.c_str());
  Result r;
  r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream out(readFile(dir + "/inspect.out"));
  for (std::string line; std::getline(out, line);)
    (line.ends_with(".png") ? r.pngs.emplace_back() : r.overview) = line;
  r.errors = readFile(dir + "/inspect.err");
  return r;
}

uint32_t bigEndian(const unsigned char* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

/// Checks a PNG: the signature, an IHDR of a sensible size, and the IEND chunk.
void checkPng(const std::string& path) {
  CPPUNIT_ASSERT_MESSAGE(path, std::filesystem::exists(path));
  const std::string bytes = readFile(path);
  CPPUNIT_ASSERT_MESSAGE(path, bytes.size() > 5000);
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data());
  CPPUNIT_ASSERT_MESSAGE(path, bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CPPUNIT_ASSERT_MESSAGE(path, bytes.compare(12, 4, "IHDR") == 0);
  const uint32_t width = bigEndian(b + 16), height = bigEndian(b + 20);
  CPPUNIT_ASSERT_MESSAGE(path, width >= 400 && width <= 4000);
  CPPUNIT_ASSERT_MESSAGE(path, height >= 150 && height <= 4000);
  CPPUNIT_ASSERT_MESSAGE(path, bytes.compare(bytes.size() - 8, 4, "IEND") == 0);
}

/// Runs rtcp-msoverview; its standard output, exit code into code.
std::string msoverview(const std::string& dir, const std::vector<std::string>& ms, int& code) {
  std::string command = rtcp::test::binaryDir() + "/tools/rtcp-msoverview";
  for (const std::string& path : ms) command += " " + path;
  command += " > " + dir + "/overview.out 2> " + dir + "/overview.err";
  const int status = std::system(command.c_str());
  code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return readFile(dir + "/overview.out") + readFile(dir + "/overview.err");
}

void checkContains(const std::string& text, const std::vector<std::string>& expected) {
  for (const std::string& e : expected)
    CPPUNIT_ASSERT_MESSAGE("missing '" + e + "' in:\n" + text, text.find(e) != std::string::npos);
}

std::set<std::string> names(const std::vector<std::string>& paths) {
  std::set<std::string> result;
  for (const std::string& p : paths) result.insert(std::filesystem::path(p).filename().string());
  return result;
}

}  // namespace

class InspectTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(InspectTest);
  CPPUNIT_TEST(testFourStations);
  CPPUNIT_TEST(testSingleStation);
  CPPUNIT_TEST(testEverythingFlagged);
  CPPUNIT_TEST(testNotAMeasurementSet);
  CPPUNIT_TEST(testOverview);
  CPPUNIT_TEST(testSamplesLongObservations);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testFourStations() {
    TempDir dir;
    TestObservation o;  // CS001, CS002, CS003, RS106; subbands 300, 301; 6 integrations
    o.location = "localhost:" + dir.path();
    const Result r = inspect(dir.path(), writeObservation(o, false));
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.errors, 0, r.exitCode);
    // Shortest (CS002-CS003 ... whatever the table says), a middle and the longest
    // (to RS106): three different cross baselines, the longest one with RS106.
    CPPUNIT_ASSERT_EQUAL(size_t(5), r.pngs.size());
    const std::set<std::string> files = names(r.pngs);
    CPPUNIT_ASSERT(files.count("autocorrelations.png") && files.count("flags.png"));
    int withRs106 = 0;
    for (const std::string& f : files)
      withRs106 += f.starts_with("baseline_") && f.find("RS106") != std::string::npos;
    CPPUNIT_ASSERT(withRs106 >= 1);
    for (const std::string& png : r.pngs) checkPng(png);
    // ...and writes the overview of both MSs beside them.
    CPPUNIT_ASSERT_EQUAL(dir.path() + "/plots/overview.txt", r.overview);
    const std::string overview = readFile(r.overview);
    checkContains(overview,
                  {"L4242_SAP000_SB000_uv.MS", "L4242_SAP000_SB001_uv.MS", "Stations (4)"});
    // One line per MS: its window, integrations, rows and flagged data (channel 0 of 8).
    checkContains(overview, {"Subbands (2)", "SB-0", "SB-1", "           6         60  12.50 %"});
  }

  void testOverview() {
    TempDir dir;
    TestObservation o;  // CS001, CS002, CS003, RS106; 6 integrations of 0.99999 s, LBA_OUTER
    o.location = "localhost:" + dir.path();
    o.extra = "Observation.Campaign.name = LC9_042\nObservation.Beam[0].target = 3C196\n";
    const std::vector<std::string> ms = writeObservation(o, false);
    int code = -1;
    const std::string text = msoverview(dir.path(), {ms[0]}, code);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 0, code);
    checkContains(
        text, {"MeasurementSet " + ms[0], "Observation   L4242, project LC9_042, target 3C196",
               "antenna set LBA_OUTER, filter LBA_30_90, clock 200 MHz, 16-bit samples",
               "Time          2025-06-01 12:00:00.0 to 12:00:05.9 UTC: 6 integrations of 0.99999",
               "Rows          60 (10 baselines x 6 times)",
               "flagged: 12.50 % of the data, 0.00 % of the rows",  // channel 0 of 8
               "DATA (complex, 8 channels x 4 correlations)", "UVW (J2000)", "Fields (1)",
               "0  BEAM_0     phase centre RA 19:59:28.358 Dec +40.44.02.42 (J2000)",
               "Spectral windows (1)",
               "0  SB-0       8 channels of 24.4141 kHz, 58.4961 MHz to 58.667 MHz",
               "Polarisations XX XY YX YY", "Stations (4)", "0   CS001", "3   RS106", "LBA 48/96",
               "LOFAR fields (elements used) flagged"});
    // Per station, the rows with it: channel 0 of 8 flagged everywhere.
    for (const char* station : {"CS001", "RS106"}) {
      const size_t at = text.find(std::string(station) + "LBA  ");
      CPPUNIT_ASSERT_MESSAGE(text, at != std::string::npos);
      const std::string line = text.substr(at, text.find('\n', at) - at);
      CPPUNIT_ASSERT_MESSAGE(line, line.ends_with("12.50 %"));
    }
    // A missing MS: said so, non-zero.
    const std::string missing = msoverview(dir.path(), {ms[0], dir.path() + "/none.MS"}, code);
    CPPUNIT_ASSERT_EQUAL(2, code);
    checkContains(missing, {"none.MS: not a MeasurementSet", "Stations (4)"});
  }

  void testSingleStation() {
    TempDir dir;
    TestObservation o;
    o.stations = {"CS001"};
    o.location = "localhost:" + dir.path();
    const Result r = inspect(dir.path(), writeObservation(o, false));
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.errors, 0, r.exitCode);
    CPPUNIT_ASSERT((names(r.pngs) == std::set<std::string>{"autocorrelations.png", "flags.png"}));
    CPPUNIT_ASSERT(r.errors.find("baseline plots skipped") != std::string::npos);
    for (const std::string& png : r.pngs) checkPng(png);
  }

  void testEverythingFlagged() {
    TempDir dir;
    TestObservation o;
    o.stations = {"CS001", "CS002"};
    o.location = "localhost:" + dir.path();
    const Result r = inspect(dir.path(), writeObservation(o, true));
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.errors, 0, r.exitCode);
    CPPUNIT_ASSERT_EQUAL(size_t(3), r.pngs.size());  // one cross baseline
    CPPUNIT_ASSERT(r.errors.find("every autocorrelation is flagged") != std::string::npos);
    for (const std::string& png : r.pngs) checkPng(png);
  }

  void testSamplesLongObservations() {
    // 300 integrations of 0.1 s: more than rtcp-inspect reads (256), so every second one is
    // read, and the plots and the overview say so; everything is flagged (nothing sent).
    TempDir dir;
    TestObservation o;
    o.stations = {"CS001", "CS002"};
    o.subbands = "[300]";
    o.steps = 2441;  // 8 * 2441 samples: 0.099983 s
    o.stop = "2025-06-01 12:00:30";
    o.location = "localhost:" + dir.path();
    const Result r = inspect(dir.path(), writeObservation(o, true));
    CPPUNIT_ASSERT_EQUAL_MESSAGE(r.errors, 0, r.exitCode);
    CPPUNIT_ASSERT_EQUAL(size_t(3), r.pngs.size());
    for (const std::string& png : r.pngs) checkPng(png);
    const std::string overview = readFile(r.overview);
    checkContains(overview, {"Subbands (1)", "(of the integrations read, every 2nd integration)",
                             "         300        900 100.00 %"});
  }

  void testNotAMeasurementSet() {
    TempDir dir;
    const Result r = inspect(dir.path(), {dir.path() + "/missing.MS"});
    CPPUNIT_ASSERT(r.exitCode != 0);
    CPPUNIT_ASSERT(r.errors.find("missing.MS") != std::string::npos);
    CPPUNIT_ASSERT(r.pngs.empty());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(InspectTest);

}  // namespace rtcp::storage::test
