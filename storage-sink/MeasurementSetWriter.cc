#include "MeasurementSetWriter.h"

#include <casacore/casa/Arrays/ArrayMath.h>
#include <casacore/casa/Arrays/Cube.h>
#include <casacore/casa/Arrays/Matrix.h>
#include <casacore/casa/Arrays/Slicer.h>
#include <casacore/ms/MeasurementSets/MSColumns.h>
#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/DataMan/TiledStManAccessor.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/ScalarColumn.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include "CasacoreLock.h"
#include "MeasurementSetCreator.h"
#include "TableRowCount.h"
#include "TiledColumnFile.h"
#include "UvwCalculator.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/Baselines.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {
namespace {

/// DESIGN §2.5: the row ANTENNA1 = s1 <= ANTENNA2 = s2 holds conj(x_s1,P) x_s2,Q, the
/// complex conjugate of the correlator's product x_s1,P conj(x_s2,Q).
constexpr bool kConjugateCorrelatorProducts = true;
constexpr float kImaginarySign = kConjugateCorrelatorProducts ? -1.0f : 1.0f;

double unixToMjdSeconds(double unixTime) { return unixTime + 40587.0 * 86400.0; }

casacore::Slicer rowRange(int64_t firstRow, int64_t nrRows) {
  return casacore::Slicer(casacore::IPosition(1, firstRow), casacore::IPosition(1, nrRows));
}

/// The cells of a run of integrations in the tile files' order (TiledColumnFile.h) and as
/// casacore takes them: data, flags and weights [row][channel][pol], rowWeights and sigmas
/// [row][pol], rowFlags [row], row = integration * nrBaselines + baseline. The bulk is
/// page-aligned, so that the tile files take it by direct I/O. rowWeights and sigmas are 1
/// in every row, as LofarStMan gives WEIGHT and SIGMA (DESIGN §2.5).
struct CellBuffers {
  template <typename T>
  using DirectIoBuffer = AlignedBuffer<T, kDirectIoAlignment>;
  int nrChannels = 0;
  size_t nrRows = 0;
  DirectIoBuffer<casacore::Complex> data;
  DirectIoBuffer<bool> flags;
  DirectIoBuffer<float> weights;
  AlignedBuffer<float> rowWeights, sigmas;
  AlignedBuffer<bool> rowFlags;

  void resize(int channels, size_t rows) {
    if (channels == nrChannels && rows == nrRows) return;
    nrChannels = channels;
    nrRows = rows;
    const size_t cells = rows * size_t(channels) * kNrPolarisationProducts;
    data = DirectIoBuffer<casacore::Complex>(cells);
    flags = DirectIoBuffer<bool>(cells);
    weights = DirectIoBuffer<float>(cells);
    rowWeights = AlignedBuffer<float>(rows * kNrPolarisationProducts);
    sigmas = AlignedBuffer<float>(rows * kNrPolarisationProducts);
    std::fill(rowWeights.begin(), rowWeights.end(), 1.0f);
    std::fill(sigmas.begin(), sigmas.end(), 1.0f);
    rowFlags = AlignedBuffer<bool>(rows);
  }
  /// casacore's view (no copy) of the first `rows` rows of cells at `values`.
  template <typename T>
  casacore::Cube<T> cellView(const T* values, size_t rows) const {
    const casacore::IPosition shape(3, kNrPolarisationProducts, nrChannels, rows);
    return casacore::Cube<T>(shape, const_cast<T*>(values), casacore::SHARE);
  }
  template <typename T>
  static casacore::Matrix<T> rowView(const T* values, size_t rows) {
    const casacore::IPosition shape(2, kNrPolarisationProducts, rows);
    return casacore::Matrix<T>(shape, const_cast<T*>(values), casacore::SHARE);
  }
};

/// The cells of nrRows rows of never-arrived integrations: DATA 0, FLAG true,
/// WEIGHT_SPECTRUM 0 (WEIGHT and SIGMA 1, as every row's); the calling thread's, shared by
/// its MSs.
const CellBuffers& gapCells(int nrChannels, size_t nrRows) {
  thread_local CellBuffers gap;
  if (gap.nrChannels != nrChannels || gap.nrRows != nrRows) {
    gap.resize(nrChannels, nrRows);  // zeroed but for WEIGHT and SIGMA
    std::fill(gap.flags.begin(), gap.flags.end(), true);
    std::fill(gap.rowFlags.begin(), gap.rowFlags.end(), true);
  }
  return gap;
}

/// The main table's tiled columns, written straight into their tile files
/// (TiledColumnFile.h) rather than through casacore's put; DATA and WEIGHT_SPECTRUM, the
/// bulk of the bytes, by direct I/O.
struct TiledColumns {
  static constexpr const char* kNames[] = {"DATA", "FLAG",   "WEIGHT_SPECTRUM",
                                           "UVW",  "WEIGHT", "SIGMA"};
  explicit TiledColumns(const casacore::Table& ms)
      : data(ms, "DATA", DirectIo::when_aligned),
        flag(ms, "FLAG"),
        weightSpectrum(ms, "WEIGHT_SPECTRUM", DirectIo::when_aligned),
        uvw(ms, "UVW"),
        weight(ms, "WEIGHT"),
        sigma(ms, "SIGMA") {}
  static bool canWrite(const casacore::Table& ms) {
    return std::all_of(std::begin(kNames), std::end(kNames),
                       [&](const char* column) { return TiledColumnFile::canWrite(ms, column); });
  }
  void sync() {
    for (TiledColumnFile* file : {&data, &flag, &weightSpectrum, &uvw, &weight, &sigma})
      file->sync();
  }
  TiledColumnFile data, flag, weightSpectrum, uvw, weight, sigma;
};

}  // namespace

struct MeasurementSetWriter::Impl {
  Impl(const MeasurementSetDescription& description, const std::string& path, bool justCreated,
       TileWrites tileWrites);
  void openExisting(const MeasurementSetDescription& d);
  bool write(int64_t integration, const uint8_t* payload);
  /// Puts the run of integrations converted but not yet in the MS into it.
  void commit();
  /// Extends the grid with flagged integrations up to end (after a commit).
  void addGaps(int64_t end);
  /// Adds the rows of integrations [begin, end) with everything but their cells.
  void addRows(int64_t begin, int64_t end);
  /// TIME ... STATE_ID of the rows of integrations [begin, end), just added.
  void putIntegrationConstants(int64_t begin, int64_t end);
  /// Writes the cells of a never-arrived integration: DATA 0, FLAG true, weights 0.
  void writeGap(int64_t begin, int64_t end);
  /// Converts a block (DESIGN §2.5) into slot `slot` of the cell buffers.
  void convert(int slot, const uint8_t* payload);
  /// Puts slots [0, n) of the cell buffers into the rows of integrations [first, first + n).
  void putCells(int64_t first, int n);
  /// Puts the first nrRows rows of buffers into the rows from firstRow on.
  void putRows(const CellBuffers& buffers, casacore::rownr_t firstRow, size_t nrRows);
  /// The buffers of the pending run: the MS's own when a run is several integrations, else
  /// (one integration, put at once) the calling thread's, shared by all its MSs.
  CellBuffers& cells();
  double midTimeMjd(int64_t integration) const;
  int64_t gridSize() const { return int64_t(written_.size()); }
  int64_t nrWritten() const;
  casacore::Slicer rows(int64_t begin, int64_t end) const {
    return rowRange(begin * nrBaselines_, (end - begin) * nrBaselines_);
  }

  std::string path_;
  int nrStations_, nrBaselines_, nrChannels_;
  int runLength_;  // integrations put into the MS at once: whole tiles (MainTableTiling)
  double startUnix_, integrationSeconds_;
  float samplesPerIntegration_;  // a channel's, none lost: WEIGHT_SPECTRUM = valid / this
  bool reopened_ = false;
  // The main table only: opening the MS would open its sixteen subtables too.
  casacore::Table ms_;
  casacore::ScalarColumn<double> time_, timeCentroid_, interval_, exposure_;
  casacore::ScalarColumn<int> antenna1_, antenna2_;
  std::vector<std::pair<casacore::ScalarColumn<int>, int>> constants_;  // FEED1 ... and value
  bool incremental_ = true;  // TIME ... STATE_ID are in an IncrementalStMan (as created)
  casacore::ArrayColumn<double> uvwColumn_;
  // Shared with the writers of the beam's other subbands; used under casacoreMutex().
  std::shared_ptr<UvwCalculator> uvw_;
  std::vector<bool> written_;  // [integration]; the grid, including the pending run
  // Integrations whose rows the MS holds; [committedEnd_, gridSize()) are pending.
  int64_t committedEnd_ = 0;
  uint64_t bytesWritten_ = 0;
  // Rows or cells put since the last flush; casacore's files flushed but not synced.
  bool changedSinceFlush_ = false, unsynced_ = false;

  casacore::ArrayColumn<casacore::Complex> data_;
  casacore::ArrayColumn<bool> flag_;
  casacore::ArrayColumn<float> weightSpectrum_, weight_, sigma_;
  casacore::ScalarColumn<bool> flagRow_;
  std::unique_ptr<TiledColumns> tiles_;  // null: the tiled columns through casacore's put
  CellBuffers ownCells_;                 // runLength_ > 1: up to runLength_ integrations
  std::vector<uint32_t> valid_;          // [baseline][channel], one block's
  std::vector<float> channelScale_, channelWeight_;  // [channel], one baseline's (convert)
};

MeasurementSetWriter::Impl::Impl(const MeasurementSetDescription& d, const std::string& path,
                                 bool justCreated, TileWrites tileWrites)
    : path_(path),
      nrStations_(d.nrStations()),
      nrBaselines_(nrBaselines(nrStations_)),
      nrChannels_(d.nrChannels()),
      runLength_(mainTableTiling(nrChannels_, nrBaselines_).integrationsPerRun),
      startUnix_(d.gridStartUnix),
      integrationSeconds_(d.integrationSeconds),
      samplesPerIntegration_(d.samplesPerIntegration > 0 ? float(d.samplesPerIntegration) : 1.0f),
      valid_(size_t(nrBaselines_) * nrChannels_),
      channelScale_(size_t(nrChannels_)),
      channelWeight_(size_t(nrChannels_)) {
  std::vector<std::array<double, 3>> positions;
  for (const MsStation& s : d.stations) positions.push_back(s.position);

  std::lock_guard lock(casacoreMutex());
  // Without table locking: this writer is the table's only user while it is open, and
  // casacore fsyncs a lock file at every flush and release.
  const casacore::TableLock noLocking(casacore::TableLock::NoLocking);
  const casacore::TSMOption tsm = tileWrites == TileWrites::buffered
                                      ? casacore::TSMOption(casacore::TSMOption::Buffer, 1 << 20)
                                      : casacore::TSMOption();
  if (std::filesystem::exists(path)) {
    ms_ = openRepairingRowCount(path, noLocking, tsm);
    if (!justCreated) openExisting(d);  // else empty and of this run
  } else {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    createMeasurementSet(path, d, false);
    ms_ = casacore::Table(path, noLocking, casacore::Table::Update);
  }
  committedEnd_ = gridSize();
  using casacore::MS;
  time_.attach(ms_, MS::columnName(MS::TIME));
  timeCentroid_.attach(ms_, MS::columnName(MS::TIME_CENTROID));
  interval_.attach(ms_, MS::columnName(MS::INTERVAL));
  exposure_.attach(ms_, MS::columnName(MS::EXPOSURE));
  antenna1_.attach(ms_, MS::columnName(MS::ANTENNA1));
  antenna2_.attach(ms_, MS::columnName(MS::ANTENNA2));
  for (const auto& [column, value] : {std::pair{MS::FEED1, 0},
                                      {MS::FEED2, 0},
                                      {MS::DATA_DESC_ID, 0},
                                      {MS::FIELD_ID, 0},
                                      {MS::ARRAY_ID, 0},
                                      {MS::OBSERVATION_ID, 0},
                                      {MS::PROCESSOR_ID, 0},
                                      {MS::SCAN_NUMBER, 1},
                                      {MS::STATE_ID, -1}})
    constants_.emplace_back(casacore::ScalarColumn<int>(ms_, MS::columnName(column)), value);
  std::vector<const casacore::TableColumn*> perIntegration{&time_, &timeCentroid_, &interval_,
                                                           &exposure_};
  for (const auto& constant : constants_) perIntegration.push_back(&constant.first);
  const casacore::TableDesc actual = ms_.actualTableDesc();
  for (const casacore::TableColumn* column : perIntegration)
    incremental_ &= actual[column->columnDesc().name()].dataManagerType() == "IncrementalStMan";
  uvwColumn_.attach(ms_, MS::columnName(MS::UVW));
  data_.attach(ms_, "DATA");
  flag_.attach(ms_, "FLAG");
  weightSpectrum_.attach(ms_, "WEIGHT_SPECTRUM");
  weight_.attach(ms_, "WEIGHT");
  sigma_.attach(ms_, "SIGMA");
  flagRow_.attach(ms_, "FLAG_ROW");
  if (tileWrites == TileWrites::direct && TiledColumns::canWrite(ms_))
    tiles_ = std::make_unique<TiledColumns>(ms_);
  // Through casacore: a cache of one tile per column. Puts fill whole tiles in row order
  // (MainTableTiling), so a tile is written when the next one is started (or at the flush)
  // and an open MS holds one tile per column. Emptying the caches after every put instead
  // (clearCaches) made casacore build a new cache at the next put: a zeroed bucket buffer
  // and a slot table as long as the tiles in the file, which grows with the MS.
  if (!tiles_ && tileWrites != TileWrites::buffered)
    for (const char* column : TiledColumns::kNames)
      casacore::ROTiledStManAccessor(ms_, column, true).setHypercubeCacheSize(0, 1, true);
  if (runLength_ > 1) ownCells_.resize(nrChannels_, size_t(runLength_) * nrBaselines_);
  uvw_ = UvwCalculator::shared(d.referencePosition, positions, {d.ra, d.dec, d.directionType});
}

void MeasurementSetWriter::Impl::openExisting(const MeasurementSetDescription& d) {
  const int64_t observationId = d.observationId;
  auto fail = [&](const std::string& problem) {
    throw std::runtime_error(path_ + ": cannot append: " + problem);
  };
  const casacore::TableRecord& keywords = ms_.keywordSet();
  const std::string runId =
      keywords.isDefined(kRunIdKeyword) && keywords.dataType(kRunIdKeyword) == casacore::TpString
          ? std::string(keywords.asString(kRunIdKeyword))
          : "";
  if (!d.runId.empty() && runId != d.runId)
    fail("it was written by another run (" +
         (runId.empty() ? std::string("one that recorded no run identity") : "run " + runId) +
         ", this is run " + d.runId +
         "): an MS holds one run's data; remove it or choose another location");
  const casacore::Table observation(path_ + "/OBSERVATION",
                                    casacore::TableLock(casacore::TableLock::NoLocking));
  const bool hasId = observation.tableDesc().isColumn(kObservationIdColumn) &&
                     observation.tableDesc()[kObservationIdColumn].dataType() == casacore::TpString;
  if (!hasId || observation.nrow() != 1 ||
      std::string(casacore::ScalarColumn<casacore::String>(observation, kObservationIdColumn)(0)) !=
          std::to_string(observationId))
    fail("it holds another observation than " + std::to_string(observationId));
  const casacore::rownr_t nrAntennas =
      casacore::Table(path_ + "/ANTENNA", casacore::TableLock(casacore::TableLock::NoLocking))
          .nrow();
  if (int(nrAntennas) != nrStations_)
    fail("it has " + std::to_string(nrAntennas) + " antennas, not " + std::to_string(nrStations_));
  const casacore::IPosition shape =
      casacore::ArrayColumn<casacore::Complex>(ms_, "DATA").shapeColumn();
  if (shape != casacore::IPosition(2, kNrPolarisationProducts, nrChannels_))
    fail("DATA cells have shape " + shape.toString() + ", not [4, " + std::to_string(nrChannels_) +
         "]");
  const int64_t nrRows = int64_t(ms_.nrow());
  if (nrRows % nrBaselines_ != 0)
    fail(std::to_string(nrRows) + " rows is not a whole number of integrations of " +
         std::to_string(nrBaselines_) + " baselines");
  const casacore::Vector<bool> flagRow = casacore::ScalarColumn<bool>(ms_, "FLAG_ROW").getColumn();
  written_.assign(size_t(nrRows / nrBaselines_), false);
  for (int64_t row = 0; row < nrRows; ++row)
    if (!flagRow[row]) written_[size_t(row / nrBaselines_)] = true;
  reopened_ = nrRows > 0;  // else just created (MeasurementSetTemplate.h)
  if (reopened_)
    RTCP_LOG_INFO("storage", path_ << ": reopened with " << written_.size() << " integrations, "
                                   << nrWritten() << " written; appending");
}

double MeasurementSetWriter::Impl::midTimeMjd(int64_t integration) const {
  return unixToMjdSeconds(startUnix_ + (double(integration) + 0.5) * integrationSeconds_);
}

void MeasurementSetWriter::Impl::addRows(int64_t begin, int64_t end) {
  if (end <= begin) return;
  const int nb = nrBaselines_;
  const size_t nrRows = size_t(end - begin) * nb;
  // Rows a failed attempt added already are not added again (a flush retried after the
  // disk filled up, StorageSink).
  const casacore::rownr_t rowsWanted = casacore::rownr_t(end) * casacore::rownr_t(nb);
  changedSinceFlush_ = true;
  if (ms_.nrow() < rowsWanted) ms_.addRow(rowsWanted - ms_.nrow());
  // Every column over all the rows at once: casacore's cost is mostly per call.
  casacore::Vector<int> antenna1(nrRows), antenna2(nrRows);
  casacore::Matrix<double> uvw(3, nrRows);  // [row][u, v, w]
  const casacore::Slicer range = rows(begin, end);
  for (int64_t i = begin; i < end; ++i) {
    const size_t first = size_t(i - begin) * nb;
    std::vector<std::array<double, 3>> stationUvw;  // [station][u, v, w]
    {
      std::lock_guard lock(casacoreMutex());
      stationUvw = uvw_->stationUvw(midTimeMjd(i));
    }
    for (int b = 0; b < nb; ++b) {
      const auto [s1, s2] = baselineStations(b);
      antenna1[first + b] = s1;
      antenna2[first + b] = s2;
      for (int k = 0; k < 3; ++k) uvw(k, first + b) = stationUvw[s2][k] - stationUvw[s1][k];
    }
  }
  putIntegrationConstants(begin, end);
  antenna1_.putColumnRange(range, antenna1);
  antenna2_.putColumnRange(range, antenna2);
  if (tiles_)
    tiles_->uvw.writeRows(casacore::rownr_t(begin) * nb, nrRows, uvw.data());
  else
    uvwColumn_.putColumnRange(range, uvw);
}

void MeasurementSetWriter::Impl::putIntegrationConstants(int64_t begin, int64_t end) {
  const casacore::rownr_t nb = casacore::rownr_t(nrBaselines_);
  if (!incremental_) {  // every row
    const size_t nrRows = size_t(end - begin) * nb;
    casacore::Vector<double> time(nrRows);
    for (int64_t i = begin; i < end; ++i)
      for (size_t b = 0; b < nb; ++b) time[size_t(i - begin) * nb + b] = midTimeMjd(i);
    const casacore::Slicer range = rows(begin, end);
    const casacore::Vector<double> interval(nrRows, integrationSeconds_);
    time_.putColumnRange(range, time);
    timeCentroid_.putColumnRange(range, time);
    interval_.putColumnRange(range, interval);
    exposure_.putColumnRange(range, interval);
    for (auto& [column, value] : constants_)
      column.putColumnRange(range, casacore::Vector<int>(nrRows, value));
    return;
  }
  // IncrementalStMan: a row added at the end and not put holds the value of the row
  // before it, so the first row of an integration sets TIME for all its rows, and the
  // first new row the constants (a put equal to the row before is not even stored).
  for (int64_t i = begin; i < end; ++i) {
    time_.put(casacore::rownr_t(i) * nb, midTimeMjd(i));
    timeCentroid_.put(casacore::rownr_t(i) * nb, midTimeMjd(i));
  }
  const casacore::rownr_t firstRow = casacore::rownr_t(begin) * nb;
  interval_.put(firstRow, integrationSeconds_);
  exposure_.put(firstRow, integrationSeconds_);
  for (auto& [column, value] : constants_) column.put(firstRow, value);
}

void MeasurementSetWriter::Impl::addGaps(int64_t end) {
  const int64_t begin = gridSize();
  if (end <= begin) return;
  addRows(begin, end);
  for (int64_t i = begin; i < end; i += runLength_)
    writeGap(i, std::min<int64_t>(end, i + runLength_));
  written_.resize(size_t(end), false);
  committedEnd_ = end;
}

void MeasurementSetWriter::Impl::writeGap(int64_t begin, int64_t end) {
  const size_t nrRows = size_t(end - begin) * nrBaselines_;
  const CellBuffers& gap = gapCells(nrChannels_, size_t(runLength_) * nrBaselines_);
  putRows(gap, casacore::rownr_t(begin) * nrBaselines_, nrRows);
}

bool MeasurementSetWriter::Impl::write(int64_t integration, const uint8_t* payload) {
  if (integration < gridSize() && written_[size_t(integration)]) return false;
  if (integration == gridSize()) {
    // In order: collect a run, written a whole DATA tile at a time.
    convert(int(integration - committedEnd_), payload);
    written_.push_back(true);
    if (gridSize() - committedEnd_ == runLength_ || gridSize() % runLength_ == 0) commit();
  } else {
    commit();
    if (integration > gridSize()) addGaps(integration);  // what it skipped stays flagged
    if (integration == gridSize()) {
      addRows(integration, integration + 1);
      written_.push_back(true);
      committedEnd_ = gridSize();
    }
    convert(0, payload);
    putCells(integration, 1);
    written_[size_t(integration)] = true;
  }
  bytesWritten_ += size_t(nrBaselines_) * nrChannels_ * kNrPolarisationProducts *
                   (sizeof(casacore::Complex) + sizeof(float) + 1);
  return true;
}

void MeasurementSetWriter::Impl::commit() {
  const int64_t begin = committedEnd_, end = gridSize();
  if (end <= begin) return;
  addRows(begin, end);
  putCells(begin, int(end - begin));
  committedEnd_ = end;
}

void MeasurementSetWriter::Impl::convert(int slot, const uint8_t* payload) {
  const size_t nrCells = size_t(nrBaselines_) * nrChannels_;
  constexpr int kValuesPerCell = 2 * kNrPolarisationProducts;  // (re, im) of XX XY YX YY
  // [baseline][channel][pol][re, im]; staging buffers are aligned (AlignedBuffer).
  const float* __restrict visibilities = reinterpret_cast<const float*>(payload);
  // Copied: the payload offset need not be aligned for uint32.
  std::memcpy(valid_.data(), payload + nrCells * kValuesPerCell * sizeof(float),
              nrCells * sizeof(uint32_t));
  const size_t firstRow = size_t(slot) * nrBaselines_;
  const size_t firstValue = firstRow * nrChannels_ * kNrPolarisationProducts;
  CellBuffers& buffers = cells();
  // (pol, channel, row), pol fastest: the cells in the payload's order. Plain float and
  // bool pointers that alias nothing, so that the loops vectorise.
  float* __restrict data = reinterpret_cast<float*>(buffers.data.data() + firstValue);
  bool* __restrict flags = buffers.flags.data() + firstValue;
  float* __restrict weights = buffers.weights.data() + firstValue;
  // conj: the imaginary parts change sign.
  constexpr float kSign[kValuesPerCell] = {1, kImaginarySign, 1, kImaginarySign,
                                           1, kImaginarySign, 1, kImaginarySign};
  float* __restrict scale = channelScale_.data();
  float* __restrict weight = channelWeight_.data();
  for (int b = 0; b < nrBaselines_; ++b) {
    // The baseline's channels first, then its cells: loops without branches or
    // divisions, which vectorise.
    const uint32_t* n = valid_.data() + size_t(b) * nrChannels_;
    bool rowFlagged = true;
    for (int c = 0; c < nrChannels_; ++c) {
      // Channel 0 of a filter bank holds the subband edges: always flagged (DESIGN §2.2).
      const uint32_t valid = (nrChannels_ > 1 && c == 0) ? 0 : n[c];
      scale[c] = valid ? 1.0f / float(valid) : 0.0f;
      // LofarStMan's WEIGHT_SPECTRUM: the fraction of the integration's samples valid.
      weight[c] = float(valid) / samplesPerIntegration_;
      rowFlagged &= valid == 0;
    }
    const size_t firstCell = size_t(b) * nrChannels_;
    const float* in = visibilities + firstCell * kValuesPerCell;
    float* out = data + firstCell * kValuesPerCell;
    for (int c = 0; c < nrChannels_; ++c)
      for (int v = 0; v < kValuesPerCell; ++v)
        out[c * kValuesPerCell + v] = in[c * kValuesPerCell + v] * (scale[c] * kSign[v]);
    bool* cellFlags = flags + firstCell * kNrPolarisationProducts;
    float* cellWeights = weights + firstCell * kNrPolarisationProducts;
    for (int c = 0; c < nrChannels_; ++c)
      for (int p = 0; p < kNrPolarisationProducts; ++p) {
        cellFlags[c * kNrPolarisationProducts + p] = weight[c] == 0;
        cellWeights[c * kNrPolarisationProducts + p] = weight[c];
      }
    buffers.rowFlags[firstRow + b] = rowFlagged;
  }
}

void MeasurementSetWriter::Impl::putCells(int64_t first, int n) {
  putRows(cells(), casacore::rownr_t(first) * nrBaselines_, size_t(n) * nrBaselines_);
}

void MeasurementSetWriter::Impl::putRows(const CellBuffers& buffers, casacore::rownr_t firstRow,
                                         size_t nrRows) {
  const casacore::Slicer range = rowRange(int64_t(firstRow), int64_t(nrRows));
  changedSinceFlush_ = true;
  if (tiles_) {  // the buffers' first rows are the cells in the tile files' order
    tiles_->data.writeRows(firstRow, nrRows, buffers.data.data());
    tiles_->flag.writeRows(firstRow, nrRows, buffers.flags.data());
    tiles_->weightSpectrum.writeRows(firstRow, nrRows, buffers.weights.data());
    tiles_->weight.writeRows(firstRow, nrRows, buffers.rowWeights.data());
    tiles_->sigma.writeRows(firstRow, nrRows, buffers.sigmas.data());
  } else {  // the first nrRows rows of the buffers: views, not copies
    data_.putColumnRange(range, buffers.cellView(buffers.data.data(), nrRows));
    flag_.putColumnRange(range, buffers.cellView(buffers.flags.data(), nrRows));
    weightSpectrum_.putColumnRange(range, buffers.cellView(buffers.weights.data(), nrRows));
    weight_.putColumnRange(range, CellBuffers::rowView(buffers.rowWeights.data(), nrRows));
    sigma_.putColumnRange(range, CellBuffers::rowView(buffers.sigmas.data(), nrRows));
  }
  const casacore::Vector<bool> rowFlags(
      casacore::IPosition(1, nrRows), const_cast<bool*>(buffers.rowFlags.data()), casacore::SHARE);
  flagRow_.putColumnRange(range, rowFlags);
}

CellBuffers& MeasurementSetWriter::Impl::cells() {
  if (runLength_ > 1) return ownCells_;
  thread_local CellBuffers shared;
  shared.resize(nrChannels_, size_t(nrBaselines_));
  return shared;
}

int64_t MeasurementSetWriter::Impl::nrWritten() const {
  int64_t count = 0;
  for (bool w : written_) count += w;
  return count;
}

MeasurementSetWriter::MeasurementSetWriter(const MeasurementSetDescription& description,
                                           const std::string& path, bool justCreated,
                                           TileWrites tileWrites)
    : path_(path), impl_(std::make_unique<Impl>(description, path, justCreated, tileWrites)) {
  updateCounts();
}

void MeasurementSetWriter::updateCounts() {
  gridSize_ = impl_->gridSize();
  nrWritten_ = impl_->nrWritten();
}

MeasurementSetWriter::~MeasurementSetWriter() {
  try {
    flush();  // StorageSink syncs the file system once for all its MSs
    // casacore writes every file of the table again as it closes it, although the flush
    // has just written them (StorageSink flushes before it closes): once is enough where
    // the fast path is built (TiledColumnFile.h).
    if (impl_->tiles_) TiledColumnFile::skipWritingAtClose(impl_->ms_);
    std::lock_guard lock(casacoreMutex());  // only to close: nothing is left to write
    impl_.reset();                          // closes the MS
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", path_ << ": closing failed: " << e.what());
  }
}

bool MeasurementSetWriter::write(int64_t integration, const uint8_t* payload) {
  const bool written = impl_->write(integration, payload);
  gridSize_ = impl_->gridSize();
  if (written) ++nrWritten_;
  return written;
}
void MeasurementSetWriter::extendTo(int64_t nrIntegrations) {
  impl_->commit();
  impl_->addGaps(nrIntegrations);
  gridSize_ = impl_->gridSize();
}
void MeasurementSetWriter::flush(bool sync) {
  impl_->commit();
  updateCounts();  // a write that threw may have been committed now
  Impl& m = *impl_;
  if (!m.changedSinceFlush_ && !(sync && m.unsynced_)) return;  // all written already
  // casacore rewrites table.dat, which holds the number of rows, only for a table marked
  // changed; added rows alone reach the storage managers' headers. A sink killed after
  // such a flush left an MS casacore cannot open ("mismatch in #row"). Asking for the
  // writable keywords marks it changed: table.dat is rewritten (to table.dat_tmp, renamed).
  m.ms_.rwKeywordSet();
  m.ms_.flush(sync);
  if (sync && m.tiles_) m.tiles_->sync();
  m.changedSinceFlush_ = false;
  m.unsynced_ = !sync;
}
bool MeasurementSetWriter::reopened() const { return impl_->reopened_; }
bool MeasurementSetWriter::writesTilesDirectly() const { return impl_->tiles_ != nullptr; }
uint64_t MeasurementSetWriter::bytesWritten() const { return impl_->bytesWritten_; }

}  // namespace rtcp::storage
