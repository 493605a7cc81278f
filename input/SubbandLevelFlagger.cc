#include "SubbandLevelFlagger.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <numeric>

#include "rtcp/RspPacket.h"

namespace rtcp::ion {
namespace {

constexpr int kWordBits = 64;

/// |re|^2 + |im|^2 of the two signed nibbles of a 4-bit byte, for every byte.
constexpr std::array<int, 256> nibblePowers() {
  std::array<int, 256> table{};
  for (int b = 0; b < 256; ++b) {
    const int lo = (b & 0xf) >= 8 ? (b & 0xf) - 16 : (b & 0xf);
    const int hi = (b >> 4) >= 8 ? (b >> 4) - 16 : (b >> 4);
    table[size_t(b)] = lo * lo + hi * hi;
  }
  return table;
}
constexpr std::array<int, 256> kNibblePowers = nibblePowers();

/// Sum of squares of samples [from, to) of a row: 4 components of type T per sample (16-
/// and 8-bit), or 2 bytes looked up (4-bit).
int64_t sumOfSquares(const uint8_t* row, int64_t from, int64_t to, int bitsPerSample) {
  int64_t sum = 0;
  if (bitsPerSample == 16) {
    const size_t n = size_t(to - from) * 4;
    const uint8_t* start = row + size_t(from) * 8;
    for (size_t i = 0; i < n; ++i) {
      int16_t v;
      std::memcpy(&v, start + 2 * i, 2);  // little-endian, as the host
      sum += int32_t(v) * int32_t(v);
    }
  } else if (bitsPerSample == 8) {
    const int8_t* v = reinterpret_cast<const int8_t*>(row) + size_t(from) * 4;
    const size_t n = size_t(to - from) * 4;
    for (size_t i = 0; i < n; ++i) sum += int32_t(v[i]) * int32_t(v[i]);
  } else {
    const uint8_t* v = row + size_t(from) * 2;
    const size_t n = size_t(to - from) * 2;
    for (size_t i = 0; i < n; ++i) sum += kNibblePowers[v[i]];
  }
  return sum;
}

double median(std::vector<double> values) {
  const size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(mid), values.end());
  double m = values[mid];
  if (values.size() % 2 == 0)
    m = (m + *std::max_element(values.begin(), values.begin() + std::ptrdiff_t(mid))) / 2;
  return m;
}

/// L at position j of the sorted levels, extended beyond the ends by odd reflection.
double reflected(const std::vector<double>& levels, int64_t j) {
  const int64_t n = int64_t(levels.size());
  if (j < 0) return 2 * levels.front() - levels[size_t(std::min(-j, n - 1))];
  if (j >= n) return 2 * levels.back() - levels[size_t(std::max(2 * (n - 1) - j, int64_t(0)))];
  return levels[size_t(j)];
}

}  // namespace

int64_t levelWordStride(int64_t count) {
  return std::clamp<int64_t>(count / kWordBits / kMinLevelWords, 1, kMaxLevelStride);
}

RowPower rowPower(const uint8_t* row, const uint64_t* valid, int64_t count, int bitsPerSample,
                  int64_t wordStride) {
  int64_t sum = 0, samples = 0;
  for (int64_t start = 0; start < count; start += wordStride * kWordBits) {
    const int64_t end = std::min(count, start + kWordBits);
    const uint64_t all =
        end - start == kWordBits ? ~uint64_t(0) : (uint64_t(1) << (end - start)) - 1;
    const uint64_t bits = valid[start / kWordBits] & all;
    if (bits == all) {  // the common case: every sample arrived
      sum += sumOfSquares(row, start, end, bitsPerSample);
      samples += end - start;
      continue;
    }
    for (uint64_t rest = bits; rest; rest &= rest - 1) {
      const int64_t t = start + std::countr_zero(rest);
      sum += sumOfSquares(row, t, t + 1, bitsPerSample);
      ++samples;
    }
  }
  return {double(sum), samples};
}

RowPower rowPowerReference(const uint8_t* row, const uint64_t* valid, int64_t count,
                           int bitsPerSample, int64_t wordStride) {
  const int bytes = bytesPerDualPolSample(bitsPerSample);
  RowPower power;
  for (int64_t t = 0; t < count; ++t) {
    if ((t / kWordBits) % wordStride != 0) continue;
    if (!((valid[t / kWordBits] >> (t % kWordBits)) & 1)) continue;
    std::complex<int16_t> x, y;
    decodeRspSample(row + t * bytes, bitsPerSample, x, y);
    power.sum += double(x.real()) * x.real() + double(x.imag()) * x.imag() +
                 double(y.real()) * y.real() + double(y.imag()) * y.imag();
    ++power.samples;
  }
  return power;
}

SubbandLevelVerdict judgeSubbandLevels(std::span<const double> frequencies,
                                       std::span<const double> powers,
                                       const SubbandLevelFlagging& settings) {
  SubbandLevelVerdict verdict;
  verdict.flagged.assign(powers.size(), 0);
  verdict.residualDb.assign(powers.size(), 0);
  // The subbands with data, in frequency order.
  std::vector<size_t> order;
  for (size_t i = 0; i < powers.size(); ++i)
    if (std::isfinite(powers[i]) && powers[i] > 0) order.push_back(i);
  if (int(order.size()) < kMinSubbandsToJudge) return verdict;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return frequencies[a] < frequencies[b]; });
  std::vector<double> levels(order.size());
  for (size_t j = 0; j < order.size(); ++j) levels[j] = 10 * std::log10(powers[order[j]]);

  // The bandpass: a running median over +-k subbands (ends reflected), and the residuals.
  const int64_t k = std::min<int64_t>(settings.halfWindow, int64_t(levels.size()) - 1);
  std::vector<double> window(size_t(2 * k + 1));
  std::vector<double> residuals(levels.size());
  for (int64_t j = 0; j < int64_t(levels.size()); ++j) {
    for (int64_t d = -k; d <= k; ++d) window[size_t(d + k)] = reflected(levels, j + d);
    residuals[size_t(j)] = levels[size_t(j)] - median(window);
  }
  const double centre = median(residuals);
  std::vector<double> deviations(residuals.size());
  for (size_t j = 0; j < residuals.size(); ++j) deviations[j] = std::abs(residuals[j] - centre);
  verdict.sigmaDb = 1.4826 * median(deviations);
  verdict.thresholdDb = std::max(settings.minimumDb, settings.sigmas * verdict.sigmaDb);
  for (size_t j = 0; j < order.size(); ++j) {
    verdict.residualDb[order[j]] = residuals[j];
    verdict.flagged[order[j]] = residuals[j] > verdict.thresholdDb;
  }
  return verdict;
}

}  // namespace rtcp::ion
