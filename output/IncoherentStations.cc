#include "IncoherentStations.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rtcp/Baselines.h"

namespace rtcp::ion {

namespace {

/// Mean power of station s's polarisation product pol (0: XX, 3: YY) in channel c; 0 when
/// nothing of it is valid.
double autoPower(CorrelatedData& d, int s, int c, int pol) {
  const int baseline = baselineIndex(s, s);
  const uint32_t n = d.valid(baseline, c);
  return n ? double(d.visibility(baseline, c, pol).real()) / n : 0.0;
}

}  // namespace

std::vector<double> coherenceSignificance(std::span<CorrelatedData* const> window) {
  if (window.empty()) return {};
  const int N = window.front()->nrStations, C = window.front()->nrChannels;
  const int firstChannel = C > 1 ? 1 : 0;
  std::vector<double> sum(size_t(nrBaselines(N)), 0.0);
  std::vector<uint64_t> cells(sum.size(), 0);
  for (CorrelatedData* integration : window) {
    CorrelatedData& d = *integration;
    for (int q = 1; q < N; ++q)
      for (int p = 0; p < q; ++p) {
        const int baseline = baselineIndex(p, q);
        for (int c = firstChannel; c < C; ++c) {
          const uint32_t n = d.valid(baseline, c);
          if (n == 0) continue;
          for (int pol : {0, 3}) {
            // A station whose valid samples are zeros (a dead receiver the pre-correlation
            // flagger did not judge) has no sky either: coherence 0.
            const double power = autoPower(d, p, c, pol) * autoPower(d, q, c, pol);
            const double coherence =
                power > 0
                    ? std::norm(std::complex<double>(d.visibility(baseline, c, pol)) / double(n)) /
                          power
                    : 0.0;
            sum[size_t(baseline)] += double(n) * coherence - 1;
            ++cells[size_t(baseline)];
          }
        }
      }
  }
  std::vector<double> z(sum.size(), 0.0);
  for (int q = 1; q < N; ++q)
    for (int p = 0; p < q; ++p) {
      const size_t b = size_t(baselineIndex(p, q));
      z[b] = cells[b] ? sum[b] / std::sqrt(double(cells[b]))
                      : std::numeric_limits<double>::quiet_NaN();
    }
  return z;
}

std::vector<bool> findIncoherentStations(const std::vector<double>& significance, int nrStations) {
  std::vector<bool> incoherent(size_t(nrStations), false);
  if (nrStations < 3) return incoherent;
  auto z = [&](int p, int q) {
    return significance[size_t(baselineIndex(std::min(p, q), std::max(p, q)))];
  };
  for (int s = 0; s < nrStations; ++s) {
    bool anyData = false, coherent = false;
    for (int other = 0; other < nrStations; ++other) {
      if (other == s || std::isnan(z(s, other))) continue;
      anyData = true;
      coherent |= z(s, other) >= kNoCoherence;
    }
    incoherent[size_t(s)] = anyData && !coherent;
  }
  bool skySeen = false;
  for (int q = 1; q < nrStations; ++q)
    for (int p = 0; p < q; ++p)
      skySeen |= !incoherent[size_t(p)] && !incoherent[size_t(q)] && z(p, q) > kSkyCoherence;
  if (!skySeen) incoherent.assign(size_t(nrStations), false);
  return incoherent;
}

}  // namespace rtcp::ion
