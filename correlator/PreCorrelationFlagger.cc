#include "PreCorrelationFlagger.h"

#include <immintrin.h>

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

#include "CellPowers.h"
#include "SpectrumNoise.h"

namespace rtcp::correlator {

namespace {

/// out[s] += the power of spectrum s of one channel (its four rows), s < nrSpectra.
__attribute__((target_clones("avx512f", "avx2", "default"))) void addSpectrumPowers(
    const float* __restrict rows, size_t rowStride, int nrSpectra, float* __restrict out) {
  const float* a = rows;
  const float* b = rows + rowStride;
  const float* x = rows + 2 * rowStride;
  const float* y = rows + 3 * rowStride;
  for (int t = 0; t < nrSpectra; ++t)
    out[t] += a[t] * a[t] + b[t] * b[t] + x[t] * x[t] + y[t] * y[t];
}

/// sum = Σ values[i] where flags[i] == 0 (8 double lanes added in a fixed order),
/// flagged = the number of flags set.
__attribute__((target_clones("avx512f", "avx2", "default"))) void sumUnflagged(
    const float* __restrict values, const uint8_t* __restrict flags, size_t size, double& sum,
    size_t& flagged) {
  constexpr size_t kSumLanes = 8;
  double lanes[kSumLanes] = {};
  uint32_t set[kSumLanes] = {};
  size_t i = 0;
  for (; i + kSumLanes <= size; i += kSumLanes)
    for (size_t l = 0; l < kSumLanes; ++l) {
      lanes[l] += flags[i + l] ? 0.0 : double(values[i + l]);
      set[l] += flags[i + l];
    }
  sum = 0;
  flagged = 0;
  for (size_t l = 0; l < kSumLanes; ++l) {
    sum += lanes[l];
    flagged += set[l];
  }
  for (; i < size; ++i) {
    sum += flags[i] ? 0.0 : double(values[i]);
    flagged += flags[i];
  }
}

/// floats[0, length) = 0, 16 at a time (a call of memset per cell's run cost more).
__attribute__((target("avx512f"))) void zeroRunAvx512(float* floats, int length) {
  for (int i = 0; i < length; i += 16)
    _mm512_mask_storeu_ps(floats + i, __mmask16((1u << std::min(16, length - i)) - 1),
                          _mm512_setzero_ps());
}

constexpr size_t kColumnLanes = 16;  ///< sumThresholdColumns's columns: a multiple of this

size_t paddedLanes(size_t columns) {
  return (columns + kColumnLanes - 1) / kColumnLanes * kColumnLanes;
}

/// The grid [row][column] (rows × columns, row stride `columns`) as the columns of
/// sumThresholdColumns: out[row][lane] (transpose false) or out[column][lane] (true), lanes
/// the padded width; the padding is 0 and flagged.
void toLanes(const float* values, const uint8_t* flags, size_t rows, size_t columns, bool transpose,
             size_t lanes, float* outValues, uint8_t* outFlags) {
  const size_t outRows = transpose ? columns : rows, width = transpose ? rows : columns;
  for (size_t r = 0; r < outRows; ++r) {
    std::fill(outValues + r * lanes + width, outValues + (r + 1) * lanes, 0.0f);
    std::fill(outFlags + r * lanes + width, outFlags + (r + 1) * lanes, uint8_t(1));
  }
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < columns; ++j) {
      const size_t to = transpose ? j * lanes + i : i * lanes + j;
      outValues[to] = values[i * columns + j];
      outFlags[to] = flags[i * columns + j];
    }
}

/// Per row c < rows of the grid values[c][k] (k < K): the mean of its unflagged values
/// (each row's sum in double, k in order; 0 for a row all flagged), whether it is all
/// flagged, and spectra[c] = Σ cellSpectra[k] over them. Eight rows at a time: eight
/// independent sums, each in its row's order (one after the other, each addition waited
/// for the one before).
void channelMeans(const float* values, const uint8_t* flags, const int* cellSpectra, size_t rows,
                  size_t K, float* means, uint8_t* empty, float* spectra) {
  constexpr size_t kRows = 8;
  for (size_t c0 = 0; c0 < rows; c0 += kRows) {
    const size_t count = std::min(kRows, rows - c0);
    double sum[kRows] = {};
    uint32_t used[kRows] = {};
    int cells[kRows] = {};
    for (size_t k = 0; k < K; ++k)
      for (size_t j = 0; j < count; ++j) {  // without branches: a flagged cell adds 0
        const size_t at = (c0 + j) * K + k;
        const int keep = 1 - int(flags[at]);
        sum[j] += double(values[at]) * double(keep);  // values finite: x · 0 = 0
        used[j] += uint32_t(keep);
        cells[j] += cellSpectra[k] * keep;
      }
    for (size_t j = 0; j < count; ++j) {
      means[c0 + j] = used[j] ? float(sum[j] / double(used[j])) : 0.0f;
      empty[c0 + j] = used[j] == 0;
      spectra[c0 + j] = float(cells[j]);
    }
  }
}

/// sums[k] = Σ over rows (in order) of the unflagged values[row][k], used[k]: their number.
__attribute__((target_clones("avx512f", "avx2", "default"))) void addColumns(
    const float* __restrict values, const uint8_t* __restrict flags, size_t rows, size_t K,
    double* __restrict sums, uint32_t* __restrict used) {
  for (size_t k = 0; k < K; ++k) {
    sums[k] = 0;
    used[k] = 0;
  }
  for (size_t c = 0; c < rows; ++c)
    for (size_t k = 0; k < K; ++k) {  // without branches: a flagged cell adds 0 (values finite)
      const int keep = 1 - int(flags[c * K + k]);
      sums[k] += double(values[c * K + k]) * double(keep);
      used[k] += uint32_t(keep);
    }
}

/// values[row][lane] /= levels[lane] (rows × lanes), 0 where the level is not above 0;
/// divisors: lanes floats of scratch.
__attribute__((target_clones("avx512f", "avx2", "default"))) void divideLanes(
    float* __restrict values, size_t rows, size_t lanes, const float* __restrict levels,
    float* __restrict divisors) {
  for (size_t l = 0; l < lanes; ++l)  // a divisor of 1 where unused: no division by 0
    divisors[l] = levels[l] > 0 ? levels[l] : 1.0f;
  for (size_t r = 0; r < rows; ++r)
    for (size_t l = 0; l < lanes; ++l)
      values[r * lanes + l] = levels[l] > 0 ? values[r * lanes + l] / divisors[l] : 0.0f;
}

/// The flags back from toLanes's layout into the grid's.
void fromLanes(const uint8_t* laneFlags, size_t rows, size_t columns, bool transpose, size_t lanes,
               uint8_t* flags) {
  for (size_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < columns; ++j)
      flags[i * columns + j] = laneFlags[transpose ? j * lanes + i : i * lanes + j];
}

}  // namespace

PreCorrelationFlagger::PreCorrelationFlagger(const FlaggingSettings& settings, int nrChannels,
                                             int nrSpectra, int paddedSpectra)
    : settings_(settings),
      nrChannels_(nrChannels),
      nrSpectra_(nrSpectra),
      paddedSpectra_(paddedSpectra),
      spectraPerCell_(std::clamp(settings.spectraPerCell, 1, std::max(1, nrSpectra))),
      nrCells_((nrSpectra + spectraPerCell_ - 1) / spectraPerCell_),
      firstChannel_(nrChannels > 1 ? 1 : 0) {
  if (nrChannels < 1 || nrSpectra < 1 || paddedSpectra < nrSpectra)
    throw std::invalid_argument("PreCorrelationFlagger: " + std::to_string(nrChannels) +
                                " channels, " + std::to_string(nrSpectra) + " spectra padded to " +
                                std::to_string(paddedSpectra));
}

PreCorrelationFlagger::Workspace PreCorrelationFlagger::makeWorkspace() const {
  Workspace w;
  const size_t cells = size_t(nrChannels_) * size_t(nrCells_);
  w.power.resize(cells);
  w.normalised.resize(cells);
  w.flags.resize(cells);
  w.cellSpectra.resize(size_t(nrCells_));
  w.cellDivisors.resize(size_t(nrCells_));
  w.emptyCells.resize(size_t(nrCells_));
  w.series.resize(size_t(std::max(nrChannels_, nrCells_)));
  w.seriesFlags.resize(w.series.size());
  w.seriesBefore.resize(w.series.size());
  w.channelSpectra.resize(size_t(nrChannels_));
  w.columnSums.resize(size_t(nrCells_));
  w.columnCounts.resize(size_t(nrCells_));
  const size_t lanes = std::max(size_t(nrCells_) * paddedLanes(size_t(nrChannels_)),
                                size_t(nrChannels_) * paddedLanes(size_t(nrCells_)));
  w.laneValues.resize(lanes);
  w.laneFlags.resize(lanes);
  w.spectrumPower.resize(size_t(nrSpectra_));
  w.spectrumFlags.resize(size_t(nrSpectra_));
  w.selection.keys.reserve(std::max(cells, size_t(nrSpectra_)) + 16);  // gatherKeys: 16 to spare
  w.levels.resize(paddedLanes(size_t(nrChannels_)));
  w.divisors.resize(w.levels.size());
  w.passScratch.reserve(std::max(cells, size_t(nrSpectra_)));
  return w;
}

void PreCorrelationFlagger::cellPowers(const float* samples, std::span<float> power,
                                       std::span<float> spectrumPower) const {
  const size_t stride = size_t(paddedSpectra_);
  for (int c = 0; c < nrChannels_; ++c) {
    float* row = power.data() + size_t(c) * size_t(nrCells_);
    if (c < firstChannel_)
      std::fill(row, row + nrCells_, 0.0f);
    else
      channelCellPowers(samples + size_t(c) * 4 * stride, stride, nrSpectra_, spectraPerCell_, row);
  }
  if (spectrumPower.empty()) return;
  std::fill(spectrumPower.begin(), spectrumPower.end(), 0.0f);
  for (int c = firstChannel_; c < nrChannels_; ++c)
    addSpectrumPowers(samples + size_t(c) * 4 * stride, stride, nrSpectra_, spectrumPower.data());
}

void PreCorrelationFlagger::flag(const float* samples, const SpectrumMask& valid,
                                 ChannelFlags& flags, StationFlagStatistics& statistics,
                                 Workspace& w) const {
  cellPowers(
      samples, w.power,
      settings_.preCorrelationNoChannels ? std::span<float>(w.spectrumPower) : std::span<float>());
  flagCells(valid, flags, statistics, w);
}

void PreCorrelationFlagger::flagCells(const SpectrumMask& valid, ChannelFlags& flags,
                                      StationFlagStatistics& statistics, Workspace& w) const {
  const size_t K = size_t(nrCells_);
  for (int k = 0; k < nrCells_; ++k) {
    int n = 0;
    if (spectraPerCell_ == 16)  // bits16: none past the block's end
      n = std::popcount(valid.bits16(16 * k));
    else
      for (int s = k * spectraPerCell_; s < std::min(nrSpectra_, (k + 1) * spectraPerCell_); ++s)
        n += valid.valid(s);
    w.cellSpectra[size_t(k)] = n;
  }
  for (size_t k = 0; k < K; ++k) {
    w.emptyCells[k] = w.cellSpectra[k] == 0;
    w.cellDivisors[k] = float(std::max(w.cellSpectra[k], 1));  // a cell with none sums 0
  }
  for (size_t c = 0; c < size_t(nrChannels_); ++c) {
    float* power = w.power.data() + c * K;
    uint8_t* cellFlags = w.flags.data() + c * K;
    if (c < size_t(firstChannel_)) {  // left out: the delay correction summed it too
      std::fill_n(cellFlags, K, uint8_t(1));
      std::fill_n(power, K, 0.0f);
    } else {
      std::copy_n(w.emptyCells.data(), K, cellFlags);
    }
    for (size_t k = 0; k < K; ++k) power[k] /= w.cellDivisors[k];
  }
  if (settings_.preCorrelation) {
    const size_t longest = size_t(settings_.maxWindow);
    switch (settings_.preType) {
      case PreFlaggerType::kThreshold:
      case PreFlaggerType::kIntegratedThreshold2D:
        detectOnGrid(w, 1);
        break;
      case PreFlaggerType::kIntegratedSumThreshold2D:
        detectOnGrid(w, longest);
        break;
      case PreFlaggerType::kIntegratedThreshold:
        detectInSpectrum(w, 1);
        break;
      case PreFlaggerType::kIntegratedSumThreshold:
        detectInSpectrum(w, longest);
        break;
      case PreFlaggerType::kSumThreshold:
        detectOnGrid(w, longest);
        detectInSpectrum(w, longest);
        detectInTime(w);
        break;
    }
  }
  if (settings_.preCorrelationNoChannels) detectSpectra(valid, w);
  fillFlags(valid, w, flags);
  count(valid, w, flags, statistics);
}

void PreCorrelationFlagger::detectOnGrid(Workspace& w, size_t maxWindow) const {
  const size_t K = size_t(nrCells_);
  const size_t first = size_t(firstChannel_), C = size_t(nrChannels_);
  const size_t n = C - first;  // channels flagged
  float* grid = w.normalised.data() + first * K;
  uint8_t* flags = w.flags.data() + first * K;
  // Each channel's level: the median of its cells, the channels as the lanes of [cell][channel].
  const size_t channelLanes = paddedLanes(n);
  toLanes(w.power.data() + first * K, flags, n, K, true, channelLanes, w.laneValues.data(),
          w.laneFlags.data());
  columnMedians(w.laneValues.data(), w.laneFlags.data(), K, channelLanes, w.levels.data(),
                w.medians);
  for (size_t c = 0; c < n; ++c) {
    const float level = w.levels[c];
    const float* power = w.power.data() + (first + c) * K;
    if (level > 0)
      for (size_t k = 0; k < K; ++k) grid[c * K + k] = power[k] / level;
    else
      std::fill_n(grid + c * K, K, 0.0f);
  }
  const RobustStatistics all =
      robustStatistics(grid, flags, n * K, 1, settings_.preStatistics, w.selection);
  const float threshold = float(settings_.preThreshold);
  // In time: each channel a column of [cell][channel lane]: the powers' lanes (their flags
  // as they are) divided by the levels, as the grid's values were.
  divideLanes(w.laneValues.data(), K, channelLanes, w.levels.data(), w.divisors.data());
  sumThresholdColumns(w.laneValues.data(), w.laneFlags.data(), K, channelLanes, all, threshold,
                      maxWindow, w.columns);
  fromLanes(w.laneFlags.data(), n, K, true, channelLanes, flags);
  // In frequency: each cell a column of [channel][cell lane]; the grid itself when its
  // cells fill whole vectors.
  const size_t cellLanes = paddedLanes(K);
  if (cellLanes == K) {
    sumThresholdColumns(grid, flags, n, K, all, threshold, maxWindow, w.columns);
    return;
  }
  toLanes(grid, flags, n, K, false, cellLanes, w.laneValues.data(), w.laneFlags.data());
  sumThresholdColumns(w.laneValues.data(), w.laneFlags.data(), n, cellLanes, all, threshold,
                      maxWindow, w.columns);
  fromLanes(w.laneFlags.data(), n, K, false, cellLanes, flags);
}

void PreCorrelationFlagger::detectInSpectrum(Workspace& w, size_t maxWindow) const {
  const size_t K = size_t(nrCells_);
  const size_t first = size_t(firstChannel_), C = size_t(nrChannels_);
  const size_t n = C - first;
  channelMeans(w.power.data() + first * K, w.flags.data() + first * K, w.cellSpectra.data(), n, K,
               w.series.data(), w.seriesFlags.data(), w.channelSpectra.data());
  // The spectra behind a channel's value: the median channel's (SpectrumNoise.h).
  const float spectra = median(w.channelSpectra.data(), w.seriesFlags.data(), n, 1, w.selection);
  std::copy_n(w.seriesFlags.begin(), n, w.seriesBefore.begin());
  for (int round = 0; round < kSpectrumRounds; ++round) {
    const RobustStatistics noise =
        spectrumNoise(w.series.data(), w.seriesFlags.data(), n, double(spectra), w.selection);
    if (sumThreshold({w.series.data(), w.seriesFlags.data(), n, 1}, noise,
                     float(settings_.preThreshold), maxWindow, w.passScratch) == 0)
      break;
  }
  for (size_t i = 0; i < n; ++i)
    if (w.seriesFlags[i] && !w.seriesBefore[i])
      std::fill(w.flags.begin() + long((first + i) * K),
                w.flags.begin() + long((first + i + 1) * K), uint8_t(1));
}

void PreCorrelationFlagger::detectInTime(Workspace& w) const {
  const size_t K = size_t(nrCells_);
  const size_t first = size_t(firstChannel_), C = size_t(nrChannels_);
  // Each cell column's sum over the channels, in channel order, the columns side by side
  // (a row of the grid at a time, without branches: a flagged cell adds 0).
  double* sums = w.columnSums.data();
  uint32_t* used = w.columnCounts.data();
  addColumns(w.normalised.data() + first * K, w.flags.data() + first * K, C - first, K, sums, used);
  for (size_t k = 0; k < K; ++k) {
    w.series[k] = used[k] ? float(sums[k] / double(used[k])) : 0.0f;
    w.seriesFlags[k] = used[k] == 0;
  }
  const RobustStatistics time = robustStatistics(w.series.data(), w.seriesFlags.data(), K, 1,
                                                 settings_.preStatistics, w.selection);
  std::copy_n(w.seriesFlags.begin(), K, w.seriesBefore.begin());
  sumThreshold({w.series.data(), w.seriesFlags.data(), K, 1}, time, float(settings_.preThreshold),
               size_t(settings_.maxWindow), w.passScratch);
  for (size_t k = 0; k < K; ++k)
    if (w.seriesFlags[k] && !w.seriesBefore[k])
      for (size_t c = first; c < C; ++c) w.flags[c * K + k] = 1;
}

void PreCorrelationFlagger::detectSpectra(const SpectrumMask& valid, Workspace& w) const {
  const size_t n = size_t(nrSpectra_);
  for (size_t s = 0; s < n; ++s) w.spectrumFlags[s] = !valid.valid(int(s));
  const RobustStatistics power = robustStatistics(w.spectrumPower.data(), w.spectrumFlags.data(), n,
                                                  1, settings_.preStatistics, w.selection);
  sumThreshold({w.spectrumPower.data(), w.spectrumFlags.data(), n, 1}, power,
               float(settings_.preThreshold), size_t(settings_.maxWindow), w.passScratch);
}

void PreCorrelationFlagger::fillFlags(const SpectrumMask& valid, const Workspace& w,
                                      ChannelFlags& flags) const {
  const size_t K = size_t(nrCells_);
  for (int c = 0; c < firstChannel_; ++c) flags.channel(c).copyFrom(valid);
  for (int c = firstChannel_; c < nrChannels_; ++c) {
    SpectrumMask& mask = flags.channel(c);
    const uint8_t* cellFlags = w.flags.data() + size_t(c) * K;
    if (spectraPerCell_ == 16) {  // four cells to a word, without a branch
      for (size_t word = 0; word < valid.nrWords(); ++word) {
        uint64_t flagged = 0;
        for (size_t j = 0; j < 4 && 4 * word + j < K; ++j)
          flagged |= (uint64_t(0) - cellFlags[4 * word + j]) & (uint64_t(0xffff) << (16 * j));
        mask.setWord(word, valid.word(word) & ~flagged);
      }
      continue;
    }
    mask.copyFrom(valid);
    for (size_t k = 0; k < K; ++k)
      if (cellFlags[k] && w.cellSpectra[k] > 0)
        mask.clear(int(k) * spectraPerCell_, std::min(nrSpectra_, (int(k) + 1) * spectraPerCell_));
  }
  if (!settings_.preCorrelationNoChannels) return;
  for (int s = 0; s < nrSpectra_; ++s)
    if (w.spectrumFlags[size_t(s)] && valid.valid(s))
      for (int c = firstChannel_; c < nrChannels_; ++c) flags.channel(c).set(s, false);
}

void PreCorrelationFlagger::count(const SpectrumMask& valid, const Workspace& w,
                                  const ChannelFlags& flags,
                                  StationFlagStatistics& statistics) const {
  statistics = {};
  const size_t K = size_t(nrCells_), n = size_t(nrChannels_ - firstChannel_);
  const size_t empty = size_t(std::count(w.emptyCells.begin(), w.emptyCells.end(), uint8_t(1)));
  double powerSum = 0;
  size_t flagged = 0;  // an empty cell is flagged from the start
  sumUnflagged(w.power.data() + size_t(firstChannel_) * K,
               w.flags.data() + size_t(firstChannel_) * K, n * K, powerSum, flagged);
  statistics.cells = n * (K - empty);
  statistics.flaggedCells = flagged - n * empty;
  const uint64_t powerCells = statistics.cells - statistics.flaggedCells;
  statistics.power = powerCells ? powerSum / double(powerCells) : 0.0;
  const uint64_t arrived = uint64_t(valid.count());
  for (int c = firstChannel_; c < nrChannels_; ++c) {
    statistics.validSamples += arrived;
    statistics.flaggedSamples += arrived - uint64_t(flags.channel(c).count());
  }
}

void PreCorrelationFlagger::zeroFlagged(float* samples, const SpectrumMask& valid,
                                        const ChannelFlags& flags, ColumnKernel kernel) const {
  const size_t stride = size_t(paddedSpectra_);
  const bool avx512 = kernel == ColumnKernel::kBest && hasAvx512();
  for (int c = 0; c < nrChannels_; ++c) {
    const SpectrumMask& mask = flags.channel(c);
    float* rows = samples + size_t(c) * 4 * stride;
    for (size_t word = 0; word < valid.nrWords(); ++word) {
      uint64_t lost = valid.word(word) & ~mask.word(word);
      while (lost) {  // a run of lost spectra at a time (a flagged cell is one)
        const int first = std::countr_zero(lost);
        const int length = std::countr_one(lost >> first);
        const size_t s = word * 64 + size_t(first);
        for (size_t r = 0; r < 4; ++r)
          if (avx512)
            zeroRunAvx512(rows + r * stride + s, length);
          else
            std::fill_n(rows + r * stride + s, length, 0.0f);
        lost &= length + first >= 64 ? 0 : ~uint64_t(0) << (first + length);
      }
    }
  }
}

void StationFlagTotals::add(const StationFlagStatistics& block, BrokenStation broken) {
  ++subbandBlocks;
  validSamples += block.validSamples;
  flaggedSamples += broken == BrokenStation::kNo ? block.flaggedSamples : block.validSamples;
  brokenNoSignal += broken == BrokenStation::kNoSignal;
  brokenInterference += broken == BrokenStation::kInterference;
}

std::vector<BrokenStation> findBrokenStations(std::span<const StationFlagStatistics> statistics,
                                              const FlaggingSettings& settings) {
  std::vector<double> powers;
  for (const StationFlagStatistics& s : statistics)
    if (s.cells > 0) powers.push_back(s.power);
  std::vector<BrokenStation> broken(statistics.size(), BrokenStation::kNo);
  if (powers.empty()) return broken;
  std::nth_element(powers.begin(), powers.begin() + long(powers.size() / 2), powers.end());
  const double median = powers[powers.size() / 2];
  for (size_t i = 0; i < statistics.size(); ++i) {
    const StationFlagStatistics& s = statistics[i];
    if (s.cells == 0) continue;  // lost whole: nothing to judge
    if (!(s.power > 0) || s.power < settings.brokenPowerRatio * median)
      broken[i] = BrokenStation::kNoSignal;
    else if (double(s.flaggedCells) > settings.brokenFlaggedFraction * double(s.cells))
      broken[i] = BrokenStation::kInterference;
  }
  return broken;
}

}  // namespace rtcp::correlator
