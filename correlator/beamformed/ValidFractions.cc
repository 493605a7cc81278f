#include "ValidFractions.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace rtcp::correlator::beamformed {

namespace {

/// Length of [a, a + la) ∩ [b, b + lb) on a circle of circumference m (a, b in [0, m),
/// la, lb <= m).
int64_t cyclicOverlap(int64_t a, int64_t la, int64_t b, int64_t lb, int64_t m) {
  int64_t overlap = 0;
  for (int64_t shift : {-m, int64_t(0), m})
    overlap += std::max<int64_t>(0, std::min(a + la, b + shift + lb) - std::max(a, b + shift));
  return overlap;
}

/// Where channel c of C starts (units of fs / (2 C_d C_f), in [0, m)): at (c − C/2 − 1/2) fs / C.
int64_t channelStart(int c, int nrChannels, int64_t unitsPerChannel, int64_t m) {
  const int64_t start = (2 * int64_t(c - nrChannels / 2) - 1) * unitsPerChannel / 2;
  return ((start % m) + m) % m;
}

}  // namespace

void stationFractions(std::span<const ChannelFlags* const> stations, int nrSpectra, float* cells) {
  if (stations.empty()) throw std::invalid_argument("stationFractions: no stations");
  const int nrChannels = stations[0]->nrChannels();
  const float perStation = 1.0f / float(stations.size());
  std::vector<int> counts(static_cast<size_t>(nrSpectra));
  for (int c = 0; c < nrChannels; ++c) {
    bool whole = true;
    for (const ChannelFlags* station : stations)
      whole = whole && station->channel(c).count() == nrSpectra;
    if (whole) {  // the common case: every station valid in the whole channel
      for (int s = 0; s < nrSpectra; ++s) cells[size_t(s) * size_t(nrChannels) + size_t(c)] = 1;
      continue;
    }
    std::fill(counts.begin(), counts.end(), 0);
    for (const ChannelFlags* station : stations) {
      const SpectrumMask& mask = station->channel(c);
      for (size_t w = 0; w < mask.nrWords(); ++w)
        for (uint64_t bits = mask.word(w); bits; bits &= bits - 1)
          ++counts[w * 64 + size_t(std::countr_zero(bits))];
    }
    for (int s = 0; s < nrSpectra; ++s)
      cells[size_t(s) * size_t(nrChannels) + size_t(c)] =
          counts[size_t(s)] == int(stations.size()) ? 1.0f : float(counts[size_t(s)]) * perStation;
  }
}

ValidFractionMap::ValidFractionMap(int nrDelayChannels, int nrFinalChannels, int nrSamples)
    : nrDelayChannels_(nrDelayChannels),
      nrFinalChannels_(nrFinalChannels),
      nrSamples_(nrSamples),
      shares_(size_t(std::max(nrFinalChannels, 0))) {
  if (nrDelayChannels < 1 || nrFinalChannels < 1 || nrSamples % nrDelayChannels != 0 ||
      nrSamples % nrFinalChannels != 0)
    throw std::invalid_argument("ValidFractionMap: " + std::to_string(nrSamples) +
                                " samples do not divide into " + std::to_string(nrDelayChannels) +
                                " delay channels and " + std::to_string(nrFinalChannels) +
                                " final channels");
  for (int f = 0; f < nrFinalChannels_; ++f)
    for (int d = 0; d < nrDelayChannels_; ++d)
      if (const double w = weight(f, d); w > 0) shares_[size_t(f)].push_back({d, float(w)});
}

double ValidFractionMap::weight(int finalChannel, int delayChannel) const {
  // Units of fs / (2 C_d C_f): a final channel is 2 C_d long, a delay channel 2 C_f.
  const int64_t m = 2 * int64_t(nrDelayChannels_) * int64_t(nrFinalChannels_);
  const int64_t finalLength = 2 * int64_t(nrDelayChannels_);
  const int64_t delayLength = 2 * int64_t(nrFinalChannels_);
  const int64_t overlap =
      cyclicOverlap(channelStart(finalChannel, nrFinalChannels_, finalLength, m), finalLength,
                    channelStart(delayChannel, nrDelayChannels_, delayLength, m), delayLength, m);
  return double(overlap) / double(finalLength);
}

void ValidFractionMap::map(const float* cells, float* valid, std::vector<float>& scratch) const {
  const int cd = nrDelayChannels_, cf = nrFinalChannels_;
  const int delaySpectra = nrSamples_ / cd, finalSpectra = nrSamples_ / cf;
  // rows[delay spectrum][final channel]: each delay spectrum's cells in the final channels.
  scratch.resize(size_t(delaySpectra) * size_t(cf));
  for (int s = 0; s < delaySpectra; ++s) {
    const float* in = cells + size_t(s) * size_t(cd);
    float* row = scratch.data() + size_t(s) * size_t(cf);
    for (int f = 0; f < cf; ++f) {
      float sum = 0;
      for (const Share& share : shares_[size_t(f)]) sum += share.weight * in[share.delayChannel];
      row[f] = sum;
    }
  }
  // In time: final spectrum j covers samples [j C_f, (j + 1) C_f).
  for (int j = 0; j < finalSpectra; ++j) {
    float* out = valid + size_t(j) * size_t(cf);
    const int64_t begin = int64_t(j) * cf, end = begin + cf;
    const int first = int(begin / cd), last = int((end - 1) / cd);
    if (first == last) {
      std::copy_n(scratch.data() + size_t(first) * size_t(cf), cf, out);
      continue;
    }
    std::fill_n(out, cf, 0.0f);
    for (int s = first; s <= last; ++s) {
      const float share =
          float(std::min(end, int64_t(s + 1) * cd) - std::max(begin, int64_t(s) * cd)) / float(cf);
      const float* row = scratch.data() + size_t(s) * size_t(cf);
      for (int f = 0; f < cf; ++f) out[f] += share * row[f];
    }
  }
}

}  // namespace rtcp::correlator::beamformed
