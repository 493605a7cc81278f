#include "MeasurementSetWriter.h"

#include <complex>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <stdexcept>

#include <casacore/casa/Arrays/ArrayMath.h>
#include <casacore/casa/Arrays/Cube.h>
#include <casacore/casa/Arrays/Matrix.h>
#include <casacore/casa/Arrays/Slicer.h>
#include <casacore/ms/MeasurementSets/MSColumns.h>
#include <casacore/ms/MeasurementSets/MeasurementSet.h>
#include <casacore/tables/Tables/ArrayColumn.h>
#include <casacore/tables/Tables/ScalarColumn.h>

#include "MeasurementSetCreator.h"
#include "UvwCalculator.h"
#include "rtcp/Baselines.h"
#include "rtcp/Logger.h"

namespace rtcp::storage {
namespace {

/// casacore's table cache and measures tables are shared by all writer threads.
std::mutex& casacoreMutex() {
  static std::mutex mutex;
  return mutex;
}

/// DESIGN §2.5: the row ANTENNA1 = s1 <= ANTENNA2 = s2 holds conj(x_s1,P) x_s2,Q, the
/// complex conjugate of the correlator's product x_s1,P conj(x_s2,Q).
constexpr bool kConjugateCorrelatorProducts = true;

double unixToMjdSeconds(double unixTime) { return unixTime + 40587.0 * 86400.0; }

casacore::Slicer rowRange(int64_t firstRow, int64_t nrRows) {
  return casacore::Slicer(casacore::IPosition(1, firstRow), casacore::IPosition(1, nrRows));
}

}  // namespace

struct MeasurementSetWriter::Impl {
  Impl(const MeasurementSetDescription& description, const std::string& path);
  void openExisting(int64_t observationId);
  /// Adds flagged integrations up to end; the cells of `arriving` are left to write().
  void addIntegrations(int64_t end, int64_t arriving = -1);
  /// Writes the cells of a never-arrived integration: DATA 0, FLAG true, weights 0.
  void writeGap(const casacore::Slicer& rows);
  bool write(int64_t integration, const uint8_t* payload);
  double midTimeMjd(int64_t integration) const;
  int64_t gridSize() const { return int64_t(written_.size()); }
  int64_t nrWritten() const;

  std::string path_;
  int nrStations_, nrBaselines_, nrChannels_;
  double startUnix_, integrationSeconds_;
  bool reopened_ = false;
  std::unique_ptr<casacore::MeasurementSet> ms_;
  std::unique_ptr<casacore::MSMainColumns> columns_;
  std::unique_ptr<UvwCalculator> uvw_;
  std::vector<bool> written_;  // [integration]
  uint64_t bytesWritten_ = 0;

  casacore::ArrayColumn<casacore::Complex> data_;
  casacore::ArrayColumn<bool> flag_;
  casacore::ArrayColumn<float> weightSpectrum_, weight_, sigma_;
  casacore::ScalarColumn<bool> flagRow_;
  // One integration's cells, reused; casacore's axes (pol, channel, row) hold
  // cells[baseline][channel][pol].
  casacore::Cube<casacore::Complex> dataCells_;
  casacore::Cube<bool> flagCells_;
  casacore::Cube<float> weightCells_;
  casacore::Matrix<float> weightRows_, sigmaRows_;  // [row][pol]
  casacore::Vector<bool> flagRowCells_;             // [row]
  // The same for a gap, made on first use.
  casacore::Cube<casacore::Complex> gapData_;
  casacore::Cube<bool> gapFlags_;
  casacore::Cube<float> gapWeights_;
  casacore::Matrix<float> gapRowWeights_;
  casacore::Vector<bool> gapRowFlags_;
};

MeasurementSetWriter::Impl::Impl(const MeasurementSetDescription& d, const std::string& path)
    : path_(path),
      nrStations_(d.nrStations()),
      nrBaselines_(nrBaselines(nrStations_)),
      nrChannels_(d.nrChannels()),
      startUnix_(d.gridStartUnix),
      integrationSeconds_(d.integrationSeconds),
      dataCells_(kNrPolarisationProducts, nrChannels_, nrBaselines_),
      flagCells_(kNrPolarisationProducts, nrChannels_, nrBaselines_),
      weightCells_(kNrPolarisationProducts, nrChannels_, nrBaselines_),
      weightRows_(kNrPolarisationProducts, nrBaselines_),
      sigmaRows_(kNrPolarisationProducts, nrBaselines_),
      flagRowCells_(nrBaselines_) {
  std::vector<std::array<double, 3>> positions;
  for (const MsStation& s : d.stations) positions.push_back(s.position);

  std::lock_guard lock(casacoreMutex());
  if (std::filesystem::exists(path)) {
    ms_ = std::make_unique<casacore::MeasurementSet>(path, casacore::Table::Update);
    openExisting(d.observationId);
  } else {
    const std::filesystem::path parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    ms_ = std::make_unique<casacore::MeasurementSet>(createMeasurementSet(path, d));
  }
  columns_ = std::make_unique<casacore::MSMainColumns>(*ms_);
  data_.attach(*ms_, "DATA");
  flag_.attach(*ms_, "FLAG");
  weightSpectrum_.attach(*ms_, "WEIGHT_SPECTRUM");
  weight_.attach(*ms_, "WEIGHT");
  sigma_.attach(*ms_, "SIGMA");
  flagRow_.attach(*ms_, "FLAG_ROW");
  uvw_ = std::make_unique<UvwCalculator>(d.referencePosition, positions, d.ra, d.dec);
}

void MeasurementSetWriter::Impl::openExisting(int64_t observationId) {
  auto fail = [&](const std::string& problem) {
    throw std::runtime_error(path_ + ": cannot append: " + problem);
  };
  const casacore::MSObservation& observation = ms_->observation();
  if (!observation.tableDesc().isColumn(kObservationIdColumn) || observation.nrow() != 1 ||
      casacore::ScalarColumn<casacore::Int64>(observation, kObservationIdColumn)(0) != observationId)
    fail("it holds another observation than " + std::to_string(observationId));
  if (int(ms_->antenna().nrow()) != nrStations_)
    fail("it has " + std::to_string(ms_->antenna().nrow()) + " antennas, not " + std::to_string(nrStations_));
  const casacore::IPosition shape = casacore::ArrayColumn<casacore::Complex>(*ms_, "DATA").shapeColumn();
  if (shape != casacore::IPosition(2, kNrPolarisationProducts, nrChannels_))
    fail("DATA cells have shape " + shape.toString() + ", not [4, " + std::to_string(nrChannels_) + "]");
  const int64_t nrRows = int64_t(ms_->nrow());
  if (nrRows % nrBaselines_ != 0)
    fail(std::to_string(nrRows) + " rows is not a whole number of integrations of " +
         std::to_string(nrBaselines_) + " baselines");
  const casacore::Vector<bool> flagRow = casacore::ScalarColumn<bool>(*ms_, "FLAG_ROW").getColumn();
  written_.assign(size_t(nrRows / nrBaselines_), false);
  for (int64_t row = 0; row < nrRows; ++row)
    if (!flagRow[row]) written_[size_t(row / nrBaselines_)] = true;
  reopened_ = true;
  RTCP_LOG_INFO("storage", path_ << ": reopened with " << written_.size() << " integrations, "
                                 << nrWritten() << " written; appending");
}

double MeasurementSetWriter::Impl::midTimeMjd(int64_t integration) const {
  return unixToMjdSeconds(startUnix_ + (double(integration) + 0.5) * integrationSeconds_);
}

void MeasurementSetWriter::Impl::addIntegrations(int64_t end, int64_t arriving) {
  const int64_t begin = gridSize();
  if (end <= begin) return;
  const int64_t nb = nrBaselines_;
  ms_->addRow(casacore::rownr_t((end - begin) * nb));
  casacore::Vector<int> antenna1(nb), antenna2(nb), zeros(nb, 0), minusOnes(nb, -1);
  for (int b = 0; b < nb; ++b) {
    const auto [s1, s2] = baselineStations(b);
    antenna1[b] = s1;
    antenna2[b] = s2;
  }
  const casacore::Vector<double> interval(nb, integrationSeconds_);
  casacore::Matrix<double> uvw(3, nb);
  for (int64_t i = begin; i < end; ++i) {
    const casacore::Slicer rows = rowRange(i * nb, nb);
    const double time = midTimeMjd(i);
    {
      std::lock_guard lock(casacoreMutex());
      const auto stationUvw = uvw_->stationUvw(time);
      for (int b = 0; b < nb; ++b)
        for (int k = 0; k < 3; ++k) uvw(k, b) = stationUvw[antenna2[b]][k] - stationUvw[antenna1[b]][k];
    }
    columns_->time().putColumnRange(rows, casacore::Vector<double>(nb, time));
    columns_->timeCentroid().putColumnRange(rows, casacore::Vector<double>(nb, time));
    columns_->interval().putColumnRange(rows, interval);
    columns_->exposure().putColumnRange(rows, interval);
    columns_->antenna1().putColumnRange(rows, antenna1);
    columns_->antenna2().putColumnRange(rows, antenna2);
    columns_->feed1().putColumnRange(rows, zeros);
    columns_->feed2().putColumnRange(rows, zeros);
    columns_->dataDescId().putColumnRange(rows, zeros);
    columns_->fieldId().putColumnRange(rows, zeros);
    columns_->arrayId().putColumnRange(rows, zeros);
    columns_->observationId().putColumnRange(rows, zeros);
    columns_->processorId().putColumnRange(rows, zeros);
    columns_->scanNumber().putColumnRange(rows, casacore::Vector<int>(nb, 1));
    columns_->stateId().putColumnRange(rows, minusOnes);
    columns_->uvw().putColumnRange(rows, uvw);
    if (i == arriving) continue;  // its cells are written right away
    writeGap(rows);
  }
  written_.resize(size_t(end), false);
}

void MeasurementSetWriter::Impl::writeGap(const casacore::Slicer& rows) {
  if (gapData_.empty()) {  // made once, on the first gap
    gapData_.resize(kNrPolarisationProducts, nrChannels_, nrBaselines_);
    gapData_ = casacore::Complex(0);
    gapFlags_.resize(kNrPolarisationProducts, nrChannels_, nrBaselines_);
    gapFlags_ = true;
    gapWeights_.resize(kNrPolarisationProducts, nrChannels_, nrBaselines_);
    gapWeights_ = 0.0f;
    gapRowWeights_.resize(kNrPolarisationProducts, nrBaselines_);
    gapRowWeights_ = 0.0f;
    gapRowFlags_.resize(nrBaselines_);
    gapRowFlags_ = true;
  }
  data_.putColumnRange(rows, gapData_);
  flag_.putColumnRange(rows, gapFlags_);
  weightSpectrum_.putColumnRange(rows, gapWeights_);
  weight_.putColumnRange(rows, gapRowWeights_);
  sigma_.putColumnRange(rows, gapRowWeights_);
  flagRow_.putColumnRange(rows, gapRowFlags_);
}

bool MeasurementSetWriter::Impl::write(int64_t integration, const uint8_t* payload) {
  if (integration < gridSize() && written_[size_t(integration)]) return false;
  addIntegrations(integration + 1, integration);

  const size_t nrCells = size_t(nrBaselines_) * nrChannels_;
  const auto* visibilities = reinterpret_cast<const std::complex<float>*>(payload);  // [baseline][channel][pol]
  std::vector<uint32_t> valid(nrCells);  // [baseline][channel]; copied: the payload offset need not be aligned
  std::memcpy(valid.data(), payload + nrCells * kNrPolarisationProducts * sizeof(std::complex<float>),
              nrCells * sizeof(uint32_t));
  casacore::Complex* data = dataCells_.data();  // (pol, channel, baseline), pol fastest
  bool* flags = flagCells_.data();
  float* weights = weightCells_.data();
  for (int b = 0; b < nrBaselines_; ++b) {
    bool rowFlagged = true;
    float rowWeight = 0;
    for (int c = 0; c < nrChannels_; ++c) {
      const size_t cell = size_t(b) * nrChannels_ + c;
      // Channel 0 of a filter bank holds the subband edges: always flagged (DESIGN §2.2).
      const uint32_t n = (nrChannels_ > 1 && c == 0) ? 0 : valid[cell];
      const float scale = n ? 1.0f / float(n) : 0.0f;
      rowFlagged &= n == 0;
      rowWeight += float(n);
      for (int p = 0; p < kNrPolarisationProducts; ++p) {
        const size_t i = cell * kNrPolarisationProducts + p;
        data[i] = (kConjugateCorrelatorProducts ? std::conj(visibilities[i]) : visibilities[i]) * scale;
        flags[i] = n == 0;
        weights[i] = float(n);
      }
    }
    rowWeight /= float(nrChannels_);
    for (int p = 0; p < kNrPolarisationProducts; ++p) {
      weightRows_(p, b) = rowWeight;
      sigmaRows_(p, b) = rowWeight > 0 ? 1.0f / std::sqrt(rowWeight) : 0.0f;
    }
    flagRowCells_[b] = rowFlagged;
  }
  const casacore::Slicer rows = rowRange(integration * nrBaselines_, nrBaselines_);
  data_.putColumnRange(rows, dataCells_);
  flag_.putColumnRange(rows, flagCells_);
  weightSpectrum_.putColumnRange(rows, weightCells_);
  weight_.putColumnRange(rows, weightRows_);
  sigma_.putColumnRange(rows, sigmaRows_);
  flagRow_.putColumnRange(rows, flagRowCells_);
  written_[size_t(integration)] = true;
  bytesWritten_ += nrCells * kNrPolarisationProducts * (sizeof(casacore::Complex) + sizeof(float) + 1);
  return true;
}

int64_t MeasurementSetWriter::Impl::nrWritten() const {
  int64_t count = 0;
  for (bool w : written_) count += w;
  return count;
}

MeasurementSetWriter::MeasurementSetWriter(const MeasurementSetDescription& description,
                                           const std::string& path)
    : path_(path), impl_(std::make_unique<Impl>(description, path)) {}

MeasurementSetWriter::~MeasurementSetWriter() {
  try {
    flush(true);
    std::lock_guard lock(casacoreMutex());
    impl_.reset();  // closes the MS
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", path_ << ": closing failed: " << e.what());
  }
}

bool MeasurementSetWriter::write(int64_t integration, const uint8_t* payload) {
  return impl_->write(integration, payload);
}
void MeasurementSetWriter::extendTo(int64_t nrIntegrations) { impl_->addIntegrations(nrIntegrations); }
void MeasurementSetWriter::flush(bool sync) { impl_->ms_->flush(sync); }
bool MeasurementSetWriter::reopened() const { return impl_->reopened_; }
int64_t MeasurementSetWriter::gridSize() const { return impl_->gridSize(); }
int64_t MeasurementSetWriter::nrWritten() const { return impl_->nrWritten(); }
uint64_t MeasurementSetWriter::bytesWritten() const { return impl_->bytesWritten_; }

}  // namespace rtcp::storage
