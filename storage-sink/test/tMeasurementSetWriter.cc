// MeasurementSetWriter: blocks written and read back with casacore (values, flags,
// weights, time grid, UVW, subtables), gaps, out-of-order blocks and reopening.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <filesystem>

#include "MeasurementSetWriter.h"
#include "MsReader.h"
#include "OutputLayout.h"
#include "StorageTestUtil.h"
#include "TableRowCount.h"
#include "rtcp/Baselines.h"
#include "rtcp/DelayModel.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"

namespace rtcp::storage::test {

class MeasurementSetWriterTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(MeasurementSetWriterTest);
  CPPUNIT_TEST(testValuesFlagsWeightsAndTimes);
  CPPUNIT_TEST(testUvw);
  CPPUNIT_TEST(testSubtables);
  CPPUNIT_TEST(testReopenFillsGapsAndAppends);
  CPPUNIT_TEST(testReopenRefusesAnotherObservation);
  CPPUNIT_TEST(testReopenAfterAKillInsideAFlush);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    dir_ = std::make_unique<TempDir>();
    TestObservation observation;
    observation.location = "localhost:" + dir_->path();
    settings_ = ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
    path_ = dir_->path() + "/test.MS";
  }
  void tearDown() override { dir_.reset(); }

  /// Writes integrations in the given order, then pads the grid to nrIntegrations.
  void writeIntegrations(const std::vector<int64_t>& order, int64_t pad = 0) {
    MeasurementSetWriter writer(describeMeasurementSet(settings_, 0), path_);
    for (int64_t i : order) {
      const std::vector<uint8_t> bytes = makeBlock(4, 8, 0, i).serialise(4242);
      CPPUNIT_ASSERT(writer.write(i, bytes.data() + kCorrelatedHeaderSize));
    }
    writer.extendTo(pad);
  }

  /// FEED1 ... STATE_ID in every row: 0 but SCAN_NUMBER 1 and STATE_ID -1.
  static void checkIds(const MsContents& ms) {
    const std::vector<int> expected{0, 0, 0, 0, 0, 0, 0, 1, -1};
    CPPUNIT_ASSERT_EQUAL(expected.size(), ms.ids.size());
    for (size_t column = 0; column < expected.size(); ++column)
      for (size_t row = 0; row < ms.nrRows; ++row)
        CPPUNIT_ASSERT_EQUAL(expected[column], ms.ids[column][row]);
  }

  void testValuesFlagsWeightsAndTimes() {
    writeIntegrations({2, 0, 1}, 5);  // out of order, then integrations 3 and 4 never arrive
    const MsContents ms = readMeasurementSet(path_);
    const int nb = nrBaselines(4);
    CPPUNIT_ASSERT_EQUAL(size_t(5 * nb), ms.nrRows);
    checkIds(ms);
    const double start = unixToMjdSeconds(SampleClock(200).unixTime(settings_.startSample()));
    const double t = settings_.integrationDuration();
    const int64_t samples = int64_t(settings_.spectraPerBlock) * settings_.blocksPerIntegration;
    for (size_t row = 0; row < ms.nrRows; ++row) {
      const int64_t i = int64_t(row) / nb;
      const int b = int(row % nb);
      CPPUNIT_ASSERT_EQUAL(baselineStations(b).first, ms.antenna1[row]);
      CPPUNIT_ASSERT_EQUAL(baselineStations(b).second, ms.antenna2[row]);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(start + (double(i) + 0.5) * t, ms.time[row], 1e-6);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(ms.time[row], ms.timeCentroid[row], 1e-9);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(t, ms.interval[row], 1e-9);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(t, ms.exposure[row], 1e-9);
      const bool gap = i >= 3;
      CPPUNIT_ASSERT_EQUAL(uint8_t(gap), ms.flagRow[row]);
      for (int p = 0; p < 4; ++p) {  // WEIGHT = SIGMA = 1 in every row, as LofarStMan's
        CPPUNIT_ASSERT_EQUAL(1.0f, ms.weight[row * 4 + size_t(p)]);
        CPPUNIT_ASSERT_EQUAL(1.0f, ms.sigma[row * 4 + size_t(p)]);
      }
      for (int c = 0; c < 8; ++c)
        for (int p = 0; p < 4; ++p) {
          const size_t cell = (row * 8 + size_t(c)) * 4 + size_t(p);
          const bool flagged = gap || c == 0;  // channel 0 holds the subband edges
          CPPUNIT_ASSERT_EQUAL(uint8_t(flagged), ms.flag[cell]);
          // LOFAR's scale: the fraction of the integration's samples valid.
          const float weight = flagged ? 0.0f : blockWeight(b, c, i, samples);
          CPPUNIT_ASSERT_EQUAL(weight, ms.weightSpectrum[cell]);
          CPPUNIT_ASSERT(weight <= 1.0f);
          // The MS holds the conjugate of the correlator's product, normalised per sample.
          const std::complex<float> expected = flagged ? 0.0f : std::conj(blockValue(b, c, p, i));
          CPPUNIT_ASSERT_DOUBLES_EQUAL(expected.real(), ms.data[cell].real(), 1e-4);
          CPPUNIT_ASSERT_DOUBLES_EQUAL(expected.imag(), ms.data[cell].imag(), 1e-4);
        }
    }
  }

  void testUvw() {
    writeIntegrations({0}, 6);
    const MsContents ms = readMeasurementSet(path_, true);
    const DelayModel delays(settings_);
    const int nb = nrBaselines(4);
    for (size_t row = 0; row < ms.nrRows; ++row) {
      const auto& uvw = ms.uvw[row];
      // casacore's own derivation from the ANTENNA table agrees...
      for (int k = 0; k < 3; ++k) CPPUNIT_ASSERT_DOUBLES_EQUAL(ms.uvwJ2000[row][k], uvw[k], 1e-3);
      // ...the length is the baseline's...
      const auto& p1 = settings_.stations[size_t(ms.antenna1[row])].position;
      const auto& p2 = settings_.stations[size_t(ms.antenna2[row])].position;
      const double length = std::hypot(p2[0] - p1[0], p2[1] - p1[1], p2[2] - p1[2]);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(length, std::hypot(uvw[0], uvw[1], uvw[2]), 1e-4);
      // ...and w = c (tau_s2 - tau_s1) toward the phase centre (DESIGN §2.3, §2.5).
      const std::vector<double> tau =
          delays.delays(settings_.beams[0], mjdSecondsToUnix(ms.time[row]));
      const double w =
          kSpeedOfLight * (tau[size_t(ms.antenna2[row])] - tau[size_t(ms.antenna1[row])]);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(w, uvw[2], 0.01);
    }
    // The sky turns: a long baseline's UVW changes over the 6 integrations.
    const size_t last = ms.nrRows - size_t(nb) + size_t(baselineIndex(0, 3));
    CPPUNIT_ASSERT(std::abs(ms.uvw[last][0] - ms.uvw[size_t(baselineIndex(0, 3))][0]) > 0.1);
  }

  void testSubtables() {
    writeIntegrations({0});
    const MsContents ms = readMeasurementSet(path_);
    CPPUNIT_ASSERT_EQUAL(std::string("LOFAR"), ms.telescope);
    CPPUNIT_ASSERT_EQUAL(int64_t(4242), ms.observationId);
    CPPUNIT_ASSERT_EQUAL(size_t(4), ms.antennaNames.size());
    CPPUNIT_ASSERT_EQUAL(size_t(4), ms.nrFeeds);
    for (size_t s = 0; s < 4; ++s) {
      CPPUNIT_ASSERT_EQUAL(settings_.stations[s].name, ms.antennaNames[s]);
      for (int k = 0; k < 3; ++k)
        CPPUNIT_ASSERT_DOUBLES_EQUAL(settings_.stations[s].position[k], ms.antennaPositions[s][k],
                                     1e-6);
      CPPUNIT_ASSERT(ms.dishDiameters[s] > 0);
    }
    CPPUNIT_ASSERT_EQUAL(8, ms.nrChannels);
    for (int c = 0; c < 8; ++c) {
      CPPUNIT_ASSERT_DOUBLES_EQUAL(settings_.channelFrequency(0, c),
                                   ms.channelFrequencies[size_t(c)], 1e-3);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(settings_.channelWidth(), ms.channelWidths[size_t(c)], 1e-6);
    }
    // Subband 300 in the first Nyquist zone at 200 MHz, channel 4 at its centre.
    CPPUNIT_ASSERT_DOUBLES_EQUAL(300 * 195312.5, ms.refFrequency, 1e-3);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(ms.refFrequency, ms.channelFrequencies[4], 1e-3);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(195312.5, ms.totalBandwidth, 1e-6);
    CPPUNIT_ASSERT((ms.corrTypes == std::vector<int>{9, 10, 11, 12}));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(5.2336866848, ms.phaseDirection[0], 1e-12);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0.7109425145, ms.phaseDirection[1], 1e-12);
    bool hasObsId = false;
    for (const std::string& line : ms.historyParams)
      hasObsId |= line.find("Observation.ObsID = 4242") != std::string::npos;
    CPPUNIT_ASSERT(hasObsId);
  }

  void testReopenFillsGapsAndAppends() {
    writeIntegrations({0, 2});  // integration 1 is a gap
    const MsContents before = readMeasurementSet(path_);
    {
      MeasurementSetWriter writer(describeMeasurementSet(settings_, 0), path_);
      CPPUNIT_ASSERT(writer.reopened());
      CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.gridSize());
      CPPUNIT_ASSERT_EQUAL(int64_t(1), writer.nrMissing());
      std::vector<uint8_t> other = makeBlock(4, 8, 0, 5).serialise(4242);      // other values
      CPPUNIT_ASSERT(!writer.write(2, other.data() + kCorrelatedHeaderSize));  // written rows stay
      for (int64_t i : {1, 4}) {
        const std::vector<uint8_t> bytes = makeBlock(4, 8, 0, i).serialise(4242);
        CPPUNIT_ASSERT(writer.write(i, bytes.data() + kCorrelatedHeaderSize));
      }
      CPPUNIT_ASSERT_EQUAL(int64_t(5), writer.gridSize());
      CPPUNIT_ASSERT_EQUAL(int64_t(1), writer.nrMissing());  // integration 3
    }
    const MsContents after = readMeasurementSet(path_);
    const size_t nb = size_t(nrBaselines(4));
    CPPUNIT_ASSERT_EQUAL(5 * nb, after.nrRows);
    checkIds(after);
    for (size_t row = 0; row < after.nrRows; ++row) {  // the appended rows too
      CPPUNIT_ASSERT_DOUBLES_EQUAL(after.time[size_t(row / nb) * nb], after.time[row], 0.0);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(settings_.integrationDuration(), after.interval[row], 1e-9);
    }
    CPPUNIT_ASSERT_DOUBLES_EQUAL(settings_.integrationDuration(),
                                 after.time[4 * nb] - after.time[3 * nb], 1e-6);
    const size_t cellsPerIntegration = nb * 8 * 4;
    for (size_t cell = 0; cell < 3 * cellsPerIntegration; ++cell) {
      if (cell / cellsPerIntegration == 1) continue;  // the filled gap
      CPPUNIT_ASSERT(before.data[cell] == after.data[cell]);
      CPPUNIT_ASSERT_EQUAL(before.flag[cell], after.flag[cell]);
    }
    for (size_t row = 0; row < 5 * nb; ++row)
      CPPUNIT_ASSERT_EQUAL(uint8_t(row / nb == 3), after.flagRow[row]);
    const size_t filled =
        (1 * nb + 2) * 8 * 4 + 3 * 4 + 1;  // integration 1, baseline 2, channel 3, XY
    CPPUNIT_ASSERT_DOUBLES_EQUAL(std::conj(blockValue(2, 3, 1, 1)).imag(),
                                 after.data[filled].imag(), 1e-4);
  }

  /// A writer killed inside a flush: the storage managers' headers say 3 integrations,
  /// table.dat (replaced last) still 1. casacore refuses such a table; the writer sets
  /// table.dat's count to the managers' and reopens it whole.
  void testReopenAfterAKillInsideAFlush() {
    writeIntegrations({0, 1, 2});
    const MsContents before = readMeasurementSet(path_);
    const uint64_t nb = uint64_t(nrBaselines(4));
    CPPUNIT_ASSERT_EQUAL(3 * nb, tableDatRowCount(path_));
    setTableDatRowCount(path_, nb);
    // The killed writer (without table locking) left no row count in the lock file, which
    // casacore would take instead; reading `before` (with locking) wrote one.
    std::filesystem::remove(path_ + "/table.lock");
    CPPUNIT_ASSERT_THROW(readMeasurementSet(path_), std::exception);  // casacore refuses it
    {
      MeasurementSetWriter writer(describeMeasurementSet(settings_, 0), path_);
      CPPUNIT_ASSERT_EQUAL(int64_t(3), writer.gridSize());
      CPPUNIT_ASSERT_EQUAL(int64_t(0), writer.nrMissing());
    }
    const MsContents after = readMeasurementSet(path_);
    CPPUNIT_ASSERT_EQUAL(size_t(3 * nb), after.nrRows);
    CPPUNIT_ASSERT(before.data == after.data);
    CPPUNIT_ASSERT(before.flag == after.flag);
    const auto counts =
        rowCountMismatch("TiledStMan::headerFileGet: mismatch in #row; expected 0, found 1224");
    CPPUNIT_ASSERT(counts && counts->first == 0 && counts->second == 1224);
    CPPUNIT_ASSERT(!rowCountMismatch("TiledStMan::headerFileGet: mismatch in seqnr,#col"));
  }

  void testReopenRefusesAnotherObservation() {
    writeIntegrations({0});
    MeasurementSetDescription other = describeMeasurementSet(settings_, 0);
    other.observationId = 7;
    CPPUNIT_ASSERT_THROW(MeasurementSetWriter(other, path_), std::runtime_error);
  }

 private:
  std::unique_ptr<TempDir> dir_;
  ObservationSettings settings_;
  std::string path_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(MeasurementSetWriterTest);

}  // namespace rtcp::storage::test
