// StorageSink over real TCP connections: rejects (bad magic, bad CRC, impossible sizes,
// unknown subband, truncated connection) keep the MS to exactly the good blocks; several
// concurrent connections; out-of-order blocks; completion; restart; the executable.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <cstring>
#include <future>
#include <sstream>
#include <thread>

#include "MsReader.h"
#include "StorageSink.h"
#include "StorageTestUtil.h"
#include "TestData.h"
#include "TestPrograms.h"
#include "rtcp/Baselines.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"
#include "rtcp/Stream.h"

namespace rtcp::storage::test {

using namespace std::chrono_literals;

namespace {

std::vector<uint8_t> block(int subband, int64_t integration, int64_t obsId = 4242) {
  return makeBlock(4, 8, subband, integration).serialise(uint64_t(obsId));
}

void append(std::vector<uint8_t>& stream, const std::vector<uint8_t>& bytes) {
  stream.insert(stream.end(), bytes.begin(), bytes.end());
}

/// Waits until n connections were accepted and all of them are closed again.
void waitForConnections(const StorageSink& sink, size_t n) {
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (sink.nrConnectionsAccepted() < n || sink.nrConnectionsOpen() > 0) {
    CPPUNIT_ASSERT(std::chrono::steady_clock::now() < deadline);
    std::this_thread::sleep_for(10ms);
  }
}

/// Checks that integration i of an MS holds block(…, i) (conjugated, normalised) or a gap.
/// samples: the observation's samples per integration (WEIGHT_SPECTRUM's divisor).
void checkIntegration(const MsContents& ms, int64_t i, bool present, int64_t samples) {
  const int nb = nrBaselines(4);
  for (int b = 0; b < nb; ++b) {
    const size_t row = size_t(i * nb + b);
    CPPUNIT_ASSERT_EQUAL(uint8_t(!present), ms.flagRow[row]);
    for (int c = 1; c < 8; ++c)
      for (int p = 0; p < 4; ++p) {
        const size_t cell = (row * 8 + size_t(c)) * 4 + size_t(p);
        const std::complex<float> expected = present ? std::conj(blockValue(b, c, p, i)) : 0.0f;
        CPPUNIT_ASSERT_DOUBLES_EQUAL(expected.real(), ms.data[cell].real(), 1e-4);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(expected.imag(), ms.data[cell].imag(), 1e-4);
        CPPUNIT_ASSERT_EQUAL(present ? blockWeight(b, c, i, samples) : 0.0f,
                             ms.weightSpectrum[cell]);
      }
  }
}

}  // namespace

class StorageSinkTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StorageSinkTest);
  CPPUNIT_TEST(testRejectsKeepExactlyTheGoodBlocks);
  CPPUNIT_TEST(testCompleteObservationOutOfOrder);
  CPPUNIT_TEST(testRestartAppends);
  CPPUNIT_TEST(testMakesMeasurementSetsWhileListening);
  CPPUNIT_TEST(testExecutable);
  CPPUNIT_TEST_SUITE_END();

 public:
  static ObservationSettings settings(const TestObservation& observation) {
    return ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
  }
  static SinkOptions options() {
    SinkOptions o;
    o.host = "127.0.0.1";
    o.port = 0;
    o.staging.capacityBytes = 64 * 1024;
    o.staging.flushIntervalSeconds = 0.1;
    o.secret = testSecret();
    return o;
  }

  void testRejectsKeepExactlyTheGoodBlocks() {
    TempDir dir;
    TestObservation observation;
    observation.location = "localhost:" + dir.path();
    StorageSink sink(settings(observation), options());
    auto run = std::async(std::launch::async, [&] { return sink.run(); });

    std::vector<uint8_t> a;  // skippable rejects between good blocks
    append(a, block(0, 0));
    std::vector<uint8_t> badCrc = makeBlock(4, 8, 0, 4).serialise(4242);
    badCrc[32] = 1;                                               // claims integration 1 ...
    std::memcpy(badCrc.data() + 48, block(0, 1).data() + 48, 8);  // ... with its CRC
    append(a, badCrc);
    append(a, block(0, 1));
    append(a, block(999, 2));    // not in the parset
    append(a, block(0, 2, 17));  // another observation
    append(a, block(0, 2));
    append(a, block(0, 6));  // beyond the observation
    append(a, block(0, 2));  // duplicate: the writer keeps the first
    std::vector<uint8_t> b;  // garbage ends the connection
    append(b, block(1, 0));
    append(b, std::vector<uint8_t>(64, 0xAB));
    append(b, block(1, 1));
    std::vector<uint8_t> c = block(1, 3);  // a half-sent block
    const std::vector<uint8_t> half = block(1, 4);
    c.insert(c.end(), half.begin(), half.begin() + long(half.size() / 2));
    std::vector<uint8_t> d(64);  // an impossible size
    CorrelatedHeader huge;
    huge.observationId = 4242;
    huge.subband = 1;
    huge.nrStations = 60000;
    huge.nrChannels = 65536;
    huge.payloadSize = huge.expectedPayloadSize();
    huge.write(d.data());
    std::vector<std::thread> senders;
    for (const auto* bytes : {&a, &b, &c, &d})
      senders.emplace_back([&sink, bytes] { sendBytes(sink.port(), *bytes); });
    for (std::thread& t : senders) t.join();
    waitForConnections(sink, 4);
    std::this_thread::sleep_for(300ms);  // the writers' timer
    sink.requestStop();
    const SinkSummary summary = run.get();

    auto rejected = [&](BlockReject r) { return summary.rejected[size_t(r)]; };
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kChecksum));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kSubband));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kObservationId));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kIntegration));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kDuplicate));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kMagic));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kTruncated));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), rejected(BlockReject::kShape));
    CPPUNIT_ASSERT_EQUAL(uint64_t(5), summary.blocksWritten);
    CPPUNIT_ASSERT(!summary.complete && !summary.failed);

    // The observation lies in the past, so both grids are complete: 6 integrations.
    const MsContents sb300 = readMeasurementSet(dir.path() + "/L4242_SAP000_SB000_uv.MS");
    const MsContents sb301 = readMeasurementSet(dir.path() + "/L4242_SAP000_SB001_uv.MS");
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 10), sb300.nrRows);
    CPPUNIT_ASSERT_EQUAL(size_t(6 * 10), sb301.nrRows);
    for (int64_t i = 0; i < 6; ++i) {
      checkIntegration(sb300, i, i <= 2, samplesPerIntegration(observation));
      checkIntegration(sb301, i, i == 0 || i == 3, samplesPerIntegration(observation));
    }
    CPPUNIT_ASSERT_EQUAL(int64_t(3), summary.outputs[0].missing);
    CPPUNIT_ASSERT_EQUAL(int64_t(4), summary.outputs[1].missing);
  }

  void testCompleteObservationOutOfOrder() {
    TempDir dir;
    TestObservation observation;
    observation.location = "localhost:" + dir.path();
    SinkOptions o = options();
    o.staging.capacityBytes = 3 * 3520;   // a few blocks: the receivers must wait for the writers
    o.staging.flushIntervalSeconds = 10;  // so only the watermarks trigger writing
    StorageSink sink(settings(observation), o);
    auto run = std::async(std::launch::async, [&] { return sink.run(); });
    std::vector<std::thread> senders;
    for (int subband : {0, 1})  // indices of subbands 300, 301
      senders.emplace_back([&, subband] {
        std::vector<uint8_t> bytes;
        for (int64_t i : {5, 0, 3, 1, 4, 2}) append(bytes, block(subband, i));
        sendBytes(sink.port(), bytes);
      });
    for (std::thread& t : senders) t.join();
    CPPUNIT_ASSERT(run.wait_for(30s) == std::future_status::ready);  // stops by itself
    const SinkSummary summary = run.get();
    CPPUNIT_ASSERT(summary.complete);
    CPPUNIT_ASSERT_EQUAL(uint64_t(12), summary.blocksWritten);
    CPPUNIT_ASSERT(summary.stagingHighWaterBytes <= summary.stagingCapacityBytes);
    for (const auto& out : summary.outputs) CPPUNIT_ASSERT_EQUAL(int64_t(0), out.missing);
    const MsContents ms = readMeasurementSet(dir.path() + "/L4242_SAP000_SB001_uv.MS");
    for (int64_t i = 0; i < 6; ++i)
      checkIntegration(ms, i, true, samplesPerIntegration(observation));
    for (size_t row = 10; row < ms.nrRows; ++row) CPPUNIT_ASSERT(ms.time[row] >= ms.time[row - 1]);
    checkLofarWeights(dir.path(), dir.path() + "/L4242_SAP000_SB001_uv.MS",
                      samplesPerIntegration(observation));
  }

  /// python-casacore reads the weights on LOFAR's scale, as LofarStMan gives them:
  /// WEIGHT_SPECTRUM the fraction of the integration's samples valid (<= 1; row 1 is
  /// baseline 1 of integration 0), WEIGHT = SIGMA = 1.
  static void checkLofarWeights(const std::string& dir, const std::string& ms, int64_t samples) {
    const std::string log = dir + "/weights.txt";
    const int status = rtcp::test::runProgram(
        {"/usr/bin/python3", "-c",
         "import sys\nfrom casacore.tables import table\nt = table(sys.argv[1], ack=False)\n"
         "w, weight, sigma = t.getcol('WEIGHT_SPECTRUM'), t.getcol('WEIGHT'), t.getcol('SIGMA')\n"
         "print(repr(float(w.max())), repr(float(w[1, 2, 0])), weight.min(), weight.max(), "
         "sigma.min(), sigma.max())",
         ms},
        log);
    const std::string text = rtcp::test::readFile(log);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, 0, status);
    std::istringstream values(text);
    double largest = 0, cell = 0, weightMin = 0, weightMax = 0, sigmaMin = 0, sigmaMax = 0;
    values >> largest >> cell >> weightMin >> weightMax >> sigmaMin >> sigmaMax;
    CPPUNIT_ASSERT_MESSAGE(text, !values.fail());
    CPPUNIT_ASSERT_MESSAGE(text, largest <= 1.0 && largest > 0.04);  // 1000-odd of 24414
    CPPUNIT_ASSERT_EQUAL_MESSAGE(text, double(blockWeight(1, 2, 0, samples)), cell);
    CPPUNIT_ASSERT_EQUAL(1.0, weightMin);
    CPPUNIT_ASSERT_EQUAL(1.0, weightMax);
    CPPUNIT_ASSERT_EQUAL(1.0, sigmaMin);
    CPPUNIT_ASSERT_EQUAL(1.0, sigmaMax);
  }

  void testRestartAppends() {
    TempDir dir;
    TestObservation observation;
    observation.location = "localhost:" + dir.path();
    observation.subbands = "[300]";
    observation.steps = 244140;  // 10 s integrations, six of them, ending in the future
    const double now = std::floor(
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count());
    observation.start = formatUtc(now - 1);
    observation.stop = formatUtc(now + 59);
    const std::string path = dir.path() + "/L4242_SAP000_SB000_uv.MS";
    {
      StorageSink sink(settings(observation), options());
      auto run = std::async(std::launch::async, [&] { return sink.run(); });
      std::vector<uint8_t> bytes;
      for (int64_t i : {0, 2}) append(bytes, block(0, i));
      sendBytes(sink.port(), bytes);
      waitForConnections(sink, 1);
      std::this_thread::sleep_for(300ms);
      sink.requestStop();  // as a crash or restart would, mid-observation
      const SinkSummary summary = run.get();
      CPPUNIT_ASSERT_EQUAL(int64_t(3), summary.outputs[0].gridSize);  // not padded: still observing
    }
    const MsContents before = readMeasurementSet(path);
    {
      StorageSink sink(settings(observation), options());
      auto run = std::async(std::launch::async, [&] { return sink.run(); });
      std::vector<uint8_t> bytes;
      for (int64_t i : {1, 3, 4, 5}) append(bytes, block(0, i));
      sendBytes(sink.port(), bytes);
      CPPUNIT_ASSERT(run.wait_for(30s) == std::future_status::ready);
      const SinkSummary summary = run.get();
      CPPUNIT_ASSERT(summary.complete);
      CPPUNIT_ASSERT_EQUAL(int64_t(0), summary.outputs[0].missing);
    }
    const MsContents after = readMeasurementSet(path);
    CPPUNIT_ASSERT_EQUAL(size_t(60), after.nrRows);
    for (int64_t i = 0; i < 6; ++i)
      checkIntegration(after, i, true, samplesPerIntegration(observation));
    for (size_t cell = 0; cell < 10 * 8 * 4; ++cell)
      CPPUNIT_ASSERT(before.data[cell] == after.data[cell]);
    for (size_t row = 0; row < 30; ++row) CPPUNIT_ASSERT_EQUAL(before.time[row], after.time[row]);
  }

  void testMakesMeasurementSetsWhileListening() {
    // 24 subbands: the sink listens once the first MS is made and takes every block at
    // once, the last subband's (whose MS is made last) first; each waits staged for its MS.
    TempDir dir;
    TestObservation observation;
    observation.location = "localhost:" + dir.path();
    observation.subbands = "[300..323]";
    SinkOptions o = options();
    o.staging.capacityBytes = 1 << 20;  // the whole observation (144 blocks of 3520 bytes)
    o.createWhileListening = true;
    StorageSink sink(settings(observation), o);
    const StorageStatus early = sink.status();
    CPPUNIT_ASSERT(early.listening);
    CPPUNIT_ASSERT(early.measurementSetsReady < 24);  // copies take milliseconds each
    auto run = std::async(std::launch::async, [&] { return sink.run(); });
    std::vector<uint8_t> bytes;
    for (int subband = 23; subband >= 0; --subband)
      for (int64_t i = 0; i < 6; ++i) append(bytes, block(subband, i));
    sendBytes(sink.port(), bytes);
    CPPUNIT_ASSERT(run.wait_for(60s) == std::future_status::ready);
    const SinkSummary summary = run.get();
    CPPUNIT_ASSERT(summary.complete && !summary.failed);
    CPPUNIT_ASSERT_EQUAL(uint64_t(144), summary.blocksWritten);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), summary.integrationsLost);
    CPPUNIT_ASSERT_EQUAL(uint64_t(24), sink.status().measurementSetsReady);
    for (const auto& out : summary.outputs) {
      CPPUNIT_ASSERT_EQUAL(int64_t(0), out.missing);
      const MsContents ms = readMeasurementSet(out.path);
      for (int64_t i = 0; i < 6; ++i)
        checkIntegration(ms, i, true, samplesPerIntegration(observation));
    }
  }

  void testExecutable() {
    const std::string exe = rtcp::test::binaryDir() + "/storage-sink/storage-sink";
    CPPUNIT_ASSERT_EQUAL(0, std::system((exe + " --help > /dev/null").c_str()));
    CPPUNIT_ASSERT(std::system((exe + " /nonexistent.parset 2> /dev/null").c_str()) != 0);
    CPPUNIT_ASSERT(std::system((exe + " --no-such-option 2> /dev/null").c_str()) != 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StorageSinkTest);

}  // namespace rtcp::storage::test
