#pragma once
/// \file VisibilitySink.h
/// Where correlated and beam-formed blocks go on the I/O node (the output path: the
/// Integrator and the storage connections); ionproc's plug-ins reach it through their
/// PluginContext.

#include <complex>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace rtcp::ion {

class VisibilitySink {
 public:
  virtual ~VisibilitySink() = default;
  /// One block's visibilities[baseline][channel][pol] and validSamples[baseline][channel]
  /// of the subband with index `subbandIndex` in the subband list. Thread-safe; throws
  /// std::invalid_argument for a wrong shape or a block out of range.
  virtual void add(int subbandIndex, int64_t block, int nrStations, int nrChannels,
                   std::span<const std::complex<float>> visibilities,
                   std::span<const uint32_t> validSamples) = 0;
  /// One TAB's beam-formed data of one subband-block (DESIGN §2.4b's payload arrays:
  /// samples[component][sample][channel], validFraction[sample][channel]) for the
  /// storage-sinks of its files. Thread-safe; throws std::invalid_argument when the TAB,
  /// subband or block is not the observation's or the arrays are not the TAB's shape. A
  /// sink without beam-formed output (the Integrator alone) refuses them.
  virtual void addBeamFormed(int subbandIndex, int64_t block, int tab,
                             std::span<const float> samples, std::span<const float> validFraction);
};

inline void VisibilitySink::addBeamFormed(int, int64_t, int, std::span<const float>,
                                          std::span<const float>) {
  throw std::runtime_error("this output takes no beam-formed data");
}

}  // namespace rtcp::ion
