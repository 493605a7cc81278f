// TiledColumnFile against its reference, casacore's put: the same blocks written both ways
// (in order, out of order, gaps, padding, a reopen that fills a gap and appends) leave
// byte-identical main-table files, for tiles of whole integrations, of a fraction of one,
// and flags that do not start on a byte.
#include <casacore/tables/Tables/ArrayColumn.h>
#include <cppunit/extensions/HelperMacros.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <random>

#include "MeasurementSetCreator.h"
#include "MeasurementSetWriter.h"
#include "OutputLayout.h"
#include "StorageTestUtil.h"
#include "TiledColumnFile.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/Baselines.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/Files.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {
namespace {

/// A block of random visibilities whose valid counts are 0 in about a quarter of the
/// cells, so that FLAG varies from cell to cell.
std::vector<uint8_t> randomBlock(int nrStations, int nrChannels, int64_t integration,
                                 std::mt19937& random) {
  CorrelatedData block(nrStations, nrChannels);
  block.integration = integration;
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::uniform_int_distribution<uint32_t> count(0, 3);
  for (int b = 0; b < nrBaselines(nrStations); ++b)
    for (int c = 0; c < nrChannels; ++c) {
      block.valid(b, c) = count(random) == 0 ? 0 : 1000 + count(random);
      for (int p = 0; p < 4; ++p) block.visibility(b, c, p) = {value(random), value(random)};
    }
  return block.serialise(4242);
}

}  // namespace

class TiledColumnFileTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(TiledColumnFileTest);
  CPPUNIT_TEST(testTilesOfWholeIntegrations);
  CPPUNIT_TEST(testTilesOfPartOfAnIntegration);
  CPPUNIT_TEST(testFlagsNotOnByteBoundaries);
  CPPUNIT_TEST(testOnlyTiledColumnsOfWholeCells);
  CPPUNIT_TEST(testDirectIoWhereAligned);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testTilesOfWholeIntegrations() { checkSameFiles({"CS001", "CS002", "CS003", "RS106"}, 8); }
  void testTilesOfPartOfAnIntegration() {
    // 12 stations, 64 channels: an integration is 78 rows of 2 KiB, a tile 26 rows.
    checkSameFiles({"CS001", "CS002", "CS003", "CS004", "CS005", "CS006", "CS007", "CS011", "CS013",
                    "CS017", "CS021", "CS024"},
                   64);
    CPPUNIT_ASSERT_EQUAL(26, mainTableTiling(64, 78).rowsPerTile);
  }
  void testFlagsNotOnByteBoundaries() {
    // 2 stations, 1 channel: an integration is 3 rows of 4 flags, 12 bits.
    checkSameFiles({"CS001", "CS002"}, 1);
  }

  void testOnlyTiledColumnsOfWholeCells() {
    const TempDir dir;
    const ObservationSettings settings = settingsFor(dir, {"CS001", "CS002"}, 8);
    const std::string path = dir.path() + "/a.MS";
    { MeasurementSetWriter create(describeMeasurementSet(settings, 0), path); }
    const casacore::Table table(path);
    // Only with the casacore releases it was verified with (TiledColumnFile::enabled).
    for (const char* column : {"DATA", "FLAG", "WEIGHT_SPECTRUM", "UVW", "WEIGHT", "SIGMA"})
      CPPUNIT_ASSERT_EQUAL(TiledColumnFile::enabled(), TiledColumnFile::canWrite(table, column));
    for (const char* column : {"TIME", "ANTENNA1", "FLAG_ROW", "NO_SUCH_COLUMN"})
      CPPUNIT_ASSERT(!TiledColumnFile::canWrite(table, column));
    CPPUNIT_ASSERT_THROW(TiledColumnFile(table, "ANTENNA1"), std::runtime_error);
  }

  /// Rows written by direct I/O (where the file system does it) read back with casacore;
  /// rows of a size it cannot take directly are written through the page cache.
  void testDirectIoWhereAligned() {
    if (!TiledColumnFile::enabled()) return;  // this casacore: casacore's put only
    const TempDir dir;
    const ObservationSettings settings = settingsFor(dir, {"CS001", "CS002", "CS003", "RS106"}, 8);
    const std::string path = dir.path() + "/a.MS";
    { MeasurementSetWriter create(describeMeasurementSet(settings, 0), path); }
    casacore::Table table(path, casacore::TableLock(casacore::TableLock::NoLocking),
                          casacore::Table::Update);
    constexpr size_t kRows = 32, kValuesPerRow = 8 * 4;  // 32 rows of 256 B of DATA
    table.addRow(kRows);
    TiledColumnFile file(table, "DATA", DirectIo::when_aligned);
    AlignedBuffer<casacore::Complex, kDirectIoAlignment> cells(kRows * kValuesPerRow);
    std::mt19937 random(3);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (casacore::Complex& cell : cells) cell = {value(random), value(random)};
    file.writeRows(0, 16, cells.data());                       // 4 KiB from an aligned buffer
    file.writeRows(16, 1, cells.data() + 16 * kValuesPerRow);  // 256 B: through the page cache
    file.writeRows(17, kRows - 17, cells.data() + 17 * kValuesPerRow);
    struct statx alignment {};
    const bool directIo =
        ::statx(AT_FDCWD, file.path().c_str(), 0, STATX_DIOALIGN, &alignment) == 0 &&
        (alignment.stx_mask & STATX_DIOALIGN) && alignment.stx_dio_offset_align != 0 &&
        alignment.stx_dio_offset_align <= 4096;
    if (directIo) CPPUNIT_ASSERT_EQUAL(uint64_t(16 * kValuesPerRow * 8), file.directBytes());
    table.flush();
    const casacore::Array<casacore::Complex> read =
        casacore::ArrayColumn<casacore::Complex>(table, "DATA")
            .getColumnRange(
                casacore::Slicer(casacore::IPosition(1, 0), casacore::IPosition(1, kRows)));
    CPPUNIT_ASSERT(std::equal(read.begin(), read.end(), cells.begin()));
  }

 private:
  static ObservationSettings settingsFor(const TempDir& dir, std::vector<std::string> stations,
                                         int channels) {
    TestObservation observation;
    observation.location = "localhost:" + dir.path();
    observation.stations = std::move(stations);
    observation.channels = channels;
    return ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
  }

  /// Writes the same blocks with direct tile writes and with casacore's put, and compares
  /// every file of the two main tables.
  static void checkSameFiles(const std::vector<std::string>& stations, int channels) {
    const TempDir dir;
    const ObservationSettings settings = settingsFor(dir, stations, channels);
    const MeasurementSetDescription description = describeMeasurementSet(settings, 0);
    const int nrStations = int(stations.size());
    const std::string direct = dir.path() + "/direct.MS", reference = dir.path() + "/casacore.MS";
    for (const auto& [path, tileWrites] :
         {std::pair{direct, TileWrites::direct}, {reference, TileWrites::casacore}}) {
      std::mt19937 random(7);  // the same blocks for both
      auto write = [&](MeasurementSetWriter& writer, int64_t integration) {
        const std::vector<uint8_t> block = randomBlock(nrStations, channels, integration, random);
        CPPUNIT_ASSERT(writer.write(integration, block.data() + kCorrelatedHeaderSize));
      };
      {
        MeasurementSetWriter writer(description, path, false, tileWrites);
        CPPUNIT_ASSERT_EQUAL(tileWrites == TileWrites::direct && TiledColumnFile::enabled(),
                             writer.writesTilesDirectly());
        for (int64_t i : {0, 1, 3, 2, 6, 7}) write(writer, i);  // 4 and 5 are gaps
        writer.flush(true);
        for (int64_t i = 8; i < 70; ++i) write(writer, i);  // more than a run of tiles
        writer.extendTo(75);
      }
      MeasurementSetWriter reopened(description, path, false, tileWrites);
      CPPUNIT_ASSERT(reopened.reopened());
      write(reopened, 5);   // fills a gap
      write(reopened, 76);  // after another gap, 75
      write(reopened, 77);
      CPPUNIT_ASSERT_EQUAL(int64_t(78), reopened.gridSize());
      CPPUNIT_ASSERT_EQUAL(int64_t(71), reopened.nrWritten());
    }
    size_t compared = 0, tileFiles = 0;
    for (const auto& entry : std::filesystem::directory_iterator(reference)) {
      if (!entry.is_regular_file()) continue;
      const std::string name = entry.path().filename().string();
      if (name == "table.lock") continue;
      const std::string expected = readFile(entry.path());
      const std::string actual = readFile(std::filesystem::path(direct) / name);
      CPPUNIT_ASSERT_MESSAGE(name + " differs", expected == actual);
      ++compared;
      if (name.find("_TSM") != std::string::npos) {
        ++tileFiles;
        CPPUNIT_ASSERT(!expected.empty());
      }
    }
    CPPUNIT_ASSERT_EQUAL(size_t(6), tileFiles);
    CPPUNIT_ASSERT(compared > tileFiles);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TiledColumnFileTest);

}  // namespace rtcp::storage::test
