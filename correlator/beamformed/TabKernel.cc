#include "TabKernel.h"

#include <omp.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "TabTiles.h"

namespace rtcp::correlator::beamformed {

TabKernel::TabKernel(int nrStations, int nrTabs, int nrChannels, int paddedSamples, Isa isa,
                     int nrThreads)
    : nrStations_(nrStations),
      nrTabs_(nrTabs),
      nrChannels_(nrChannels),
      paddedSamples_(paddedSamples),
      isa_(CorrelatorKernel::resolve(isa, "TabKernel")),
      nrThreads_(nrThreads > 0 ? nrThreads : omp_get_max_threads()) {
  if (nrStations < 1 || nrTabs < 1 || nrChannels < 1 || paddedSamples < 16 ||
      paddedSamples % 16 != 0)
    throw std::invalid_argument("TabKernel: " + std::to_string(nrStations) + " stations, " +
                                std::to_string(nrTabs) + " TABs, " + std::to_string(nrChannels) +
                                " channels, " + std::to_string(paddedSamples) +
                                " padded samples (a multiple of 16)");
}

void TabKernel::form(std::span<const float* const> stations, const std::complex<float>* weights,
                     float* beams) const {
  if (int(stations.size()) != nrStations_)
    throw std::invalid_argument("TabKernel: " + std::to_string(stations.size()) +
                                " stations, expected " + std::to_string(nrStations_));
  const int items = 2 * nrChannels_;
#pragma omp parallel for schedule(static) num_threads(nrThreads_) if (nrThreads_ > 1)
  for (int item = 0; item < items; ++item) formRows(stations, weights, item / 2, item % 2, beams);
}

void TabKernel::formRows(std::span<const float* const> stations, const std::complex<float>* weights,
                         int channel, int pol, float* beams) const {
  const size_t offset = size_t(channel * 2 + pol) * 2 * size_t(paddedSamples_);
  std::vector<const float*> rows(static_cast<size_t>(nrStations_));
  for (int s = 0; s < nrStations_; ++s) rows[size_t(s)] = stations[size_t(s)] + offset;
  const tiles::Rows args{
      rows.data(),
      reinterpret_cast<const float*>(weights + size_t(channel) * nrStations_ * nrTabs_),
      beams + offset,
      nrStations_,
      nrTabs_,
      size_t(paddedSamples_),
      floatsPerTab()};
  switch (isa_) {
    case Isa::kAvx512:
      tiles::formAvx512(args, 0, paddedSamples_);
      break;
    case Isa::kAvx2:
      tiles::formAvx2(args, 0, paddedSamples_);
      break;
    default:
      tiles::formGeneric(args, 0, paddedSamples_);
  }
}

}  // namespace rtcp::correlator::beamformed
