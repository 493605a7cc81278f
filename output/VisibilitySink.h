#pragma once
/// \file VisibilitySink.h
/// Where correlated blocks go on the I/O node (the Integrator); ionproc's plug-ins reach
/// it through their PluginContext.

#include <complex>
#include <cstdint>
#include <span>

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
};

}  // namespace rtcp::ion
