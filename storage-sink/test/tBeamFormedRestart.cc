// A storage-sink killed while it writes beam-formed files, and started again for the same
// run: the files it finds are reopened and continued, not made again. What the killed one
// wrote stays (read back from the .raw files); a block sent again in part keeps the
// subbands the file held; what never came reads as zeros of valid fraction 0 and is counted
// lost from the file itself; durableBlock() says what is on disk, the blocks the killed
// sink wrote included, and only once synced (in batches, not per block). A file of another
// run is refused.
#include <cppunit/extensions/HelperMacros.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "BeamFormedHoldings.h"
#include "BeamFormedWriter.h"
#include "StorageTestUtil.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {
namespace {

// 4 blocks of 512 Stokes I samples of 16 channels, subbands 300 and 301 in one file.
const std::string kParset = beamFormedParset(78);
constexpr int kChannels = 16, kSamples = 8192 / 16;

/// Subband sb's block: sample i, channel c = version × 10000 + block × 1000 + sb × 100 +
/// (i × 16 + c) % 97; valid fraction 1.
BeamFormedData block(int subband, int64_t number, int version = 0) {
  BeamFormedData data(StokesKind::kI, kChannels, kSamples);
  data.subband = subband, data.block = number;
  for (int i = 0; i < kSamples; ++i)
    for (int c = 0; c < kChannels; ++c)
      data.sample(0, i, c) =
          float(version * 10000 + number * 1000 + subband * 100 + (i * kChannels + c) % 97);
  for (float& f : data.validFraction.span()) f = 1;
  return data;
}

/// Value and valid fraction of row `row`, column `column` of the file, from its .raw files.
std::pair<float, float> valueAt(const BeamFormedFileLayout& layout, int64_t row, int column) {
  std::pair<float, float> v{-1, -1};
  const off_t offset = off_t(row) * off_t(layout.rowBytes()) + off_t(column) * 4;
  for (const auto& [path, to] :
       {std::pair{layout.rawPath, &v.first}, {layout.weightPath, &v.second}}) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    CPPUNIT_ASSERT(fd >= 0);
    CPPUNIT_ASSERT_EQUAL(ssize_t(4), ::pread(fd, to, 4, offset));
    ::close(fd);
  }
  return v;
}

/// Asserts that sample i, channel c of block b, subband slot sb holds `value` of valid
/// fraction `weight`.
void expectSample(const BeamFormedFileLayout& layout, int64_t b, int sb, int i, int c, float value,
                  float weight) {
  const auto [v, w] = valueAt(layout, b * kSamples - layout.rowShift + i, sb * kChannels + c);
  const std::string where = "block " + std::to_string(b) + " subband " + std::to_string(sb) +
                            " sample " + std::to_string(i) + " channel " + std::to_string(c);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(where, value, v);
  CPPUNIT_ASSERT_EQUAL_MESSAGE(where, weight, w);
}

}  // namespace

class BeamFormedRestartTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BeamFormedRestartTest);
  CPPUNIT_TEST(testRestartContinuesTheFile);
  CPPUNIT_TEST(testDurableOnlyOnceSynced);
  CPPUNIT_TEST(testSyncsAreBatched);
  CPPUNIT_TEST(testAnotherRunIsRefused);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRestartContinuesTheFile() {
    TempDir dir;
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(kParset));
    // The first sink: blocks 0 and 1 whole, block 2 of subband 0 only (waiting for subband
    // 1), then killed.
    const pid_t child = ::fork();
    if (child == 0) {
      BeamFormedWriter writer(s, {{0, dir.path()}}, 4, {}, "run-a");
      for (int64_t b = 0; b < 2; ++b)
        for (int sb = 0; sb < 2; ++sb) writer.accept(block(sb, b));
      writer.accept(block(0, 2));
      for (int i = 0; i < 1000 && writer.durableBlock(0, 0, 0) < 1; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      ::kill(::getpid(), SIGKILL);
    }
    int status = 0;
    CPPUNIT_ASSERT_EQUAL(child, ::waitpid(child, &status, 0));
    CPPUNIT_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    // The restarted one: subband 1 of block 1 again (subband 0 not: the sender had been
    // told it was on disk), block 2 of subband 1 (its subband 0 died with the first sink),
    // block 3 whole.
    BeamFormedWriter writer(s, {{0, dir.path()}}, 4, {}, "run-a");
    CPPUNIT_ASSERT_EQUAL(int64_t(1), writer.durableBlock(0, 0, 0));  // what the file holds
    CPPUNIT_ASSERT_EQUAL(int64_t(1), writer.durableBlock(0, 0, 1));
    writer.accept(block(1, 1, 1));
    writer.accept(block(1, 2, 1));
    for (int sb = 0; sb < 2; ++sb) writer.accept(block(sb, 3, 1));
    writer.finish();
    const BeamFormedFileLayout layout(s, 0, dir.path());
    CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.durableBlock(0, 0, 0));
    CPPUNIT_ASSERT(writer.complete());

    // Block 0 as the first sink wrote it; block 1's subband 0 kept from the file, its
    // subband 1 the one sent again.
    for (int i : {7, 100, kSamples - 1})
      for (int c : {0, 5}) {
        const float pattern = float((i * kChannels + c) % 97);
        expectSample(layout, 0, 1, i, c, pattern + 0 + 100, 1.0f);
        expectSample(layout, 1, 0, i, c, pattern + 1000 + 0, 1.0f);
        expectSample(layout, 1, 1, i, c, pattern + 10000 + 1000 + 100, 1.0f);
        // Block 2's subband 0: never written, so zeros of valid fraction 0.
        expectSample(layout, 2, 0, i, c, 0.0f, 0.0f);
        expectSample(layout, 2, 1, i, c, pattern + 10000 + 2000 + 100, 1.0f);
        expectSample(layout, 3, 0, i, c, pattern + 10000 + 3000, 1.0f);
      }
    // Counted from the file: 4 blocks, the one subband-block lost.
    const BeamFormedFileReport report = writer.reports().at(0);
    CPPUNIT_ASSERT_EQUAL(int64_t(4), report.blocks);
    CPPUNIT_ASSERT_EQUAL(int64_t(1), report.subbandBlocksLost);
    CPPUNIT_ASSERT_EQUAL(int64_t(4 * kSamples - layout.rowShift), report.rows);
    const BeamFormedHoldings held = readBeamFormedHoldings(layout, 4);
    CPPUNIT_ASSERT_EQUAL(report.subbandBlocksLost, held.subbandBlocksLost);
    const std::vector<int> subbandsHeld{2, 2, 1, 2};
    CPPUNIT_ASSERT(subbandsHeld == held.subbandsHeld);
  }

  /// A block written into the files is in the page cache, not yet on the disk: the sender
  /// is not told (durableBlock) before the writer synced it, however long that takes.
  void testDurableOnlyOnceSynced() {
    TempDir dir;
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(kParset));
    BeamFormedWriter writer(s, {{0, dir.path()}}, 4, {}, "run-a", 3600);
    for (int64_t b = 0; b < 3; ++b)
      for (int sb = 0; sb < 2; ++sb) writer.accept(block(sb, b));
    for (int i = 0; i < 1000 && writer.reports().at(0).blocks < 3; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.reports().at(0).blocks);  // written...
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CPPUNIT_ASSERT_EQUAL(int64_t(-1), writer.durableBlock(0, 0, 0));  // ... not yet synced
    CPPUNIT_ASSERT_EQUAL(int64_t(0), writer.reports().at(0).syncs);
    for (int sb = 0; sb < 2; ++sb) writer.accept(block(sb, 3));
    writer.finish();  // syncs
    CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.durableBlock(0, 0, 0));
    CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.durableBlock(0, 0, 1));
  }

  /// The writer syncs what it wrote once per interval, not per block, and then says so.
  void testSyncsAreBatched() {
    TempDir dir;
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(kParset));
    constexpr double kInterval = 0.4;
    const auto start = std::chrono::steady_clock::now();
    BeamFormedWriter writer(s, {{0, dir.path()}}, 4, {}, "run-a", kInterval);
    for (int64_t b = 0; b < 4; ++b)
      for (int sb = 0; sb < 2; ++sb) writer.accept(block(sb, b));
    for (int i = 0; i < 2000 && writer.durableBlock(0, 0, 1) < 3; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.durableBlock(0, 0, 0));
    CPPUNIT_ASSERT(writer.complete());
    const BeamFormedFileReport report = writer.reports().at(0);
    CPPUNIT_ASSERT_EQUAL(int64_t(4), report.blocks);
    // At least one sync, and at most one per interval passed (4 blocks, written at once).
    CPPUNIT_ASSERT(report.syncs >= 1);
    CPPUNIT_ASSERT(double(report.syncs) <= elapsed / kInterval + 1);
    writer.finish();
  }

  void testAnotherRunIsRefused() {
    TempDir dir;
    const ObservationSettings s = ObservationSettings::fromParset(Parset::fromString(kParset));
    {
      BeamFormedWriter writer(s, {{0, dir.path()}}, 4, {}, "run-a");
      writer.accept(block(0, 0));
    }
    try {
      BeamFormedWriter writer(s, {{0, dir.path()}}, 4, {}, "run-b");
      CPPUNIT_FAIL("a file of another run was continued");
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      CPPUNIT_ASSERT_MESSAGE(
          what, what.find("written by run run-a, this is run run-b") != std::string::npos);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BeamFormedRestartTest);

}  // namespace rtcp::storage::test
