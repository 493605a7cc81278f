#pragma once
/// \file BeamFormedBlock.h
/// Beam-formed output of one subband of one block for one tied-array beam (TAB): what the
/// compute ranks make (correlator/beamformed/), ionproc forwards and storage-sink writes
/// into LOFAR's beam-formed HDF5 files (DESIGN §2.7). The contract between those parts.
///
/// A "TAB" here is any beam-formed beam of a SAP: a coherent TAB, an incoherent one
/// (stations' Stokes summed), or a fly's-eye beam (one station). `tab` numbers them within
/// their SAP in the order of BeamFormedSettings (common/rtcp/BeamFormedSettings.h).

#include <cstdint>

#include "rtcp/AlignedBuffer.h"

namespace rtcp {

/// What a TAB's samples hold (Cobalt.BeamFormer.*.which).
enum class StokesKind : uint8_t {
  kI = 0,     ///< Stokes I: one real component
  kIQUV = 1,  ///< Stokes I, Q, U, V: four real components
  kXXYY = 2,  ///< complex voltages: four real components Xr, Xi, Yr, Yi
};

/// Components of a StokesKind: 1 or 4.
constexpr int nrStokesComponents(StokesKind kind) { return kind == StokesKind::kI ? 1 : 4; }

/// One TAB's beam-formed data for one subband and one block.
struct BeamFormedData {
  BeamFormedData() = default;
  /// Zeroed buffers of the given shape.
  BeamFormedData(StokesKind kind, int nrChannels, int nrSamples)
      : kind(kind),
        nrChannels(nrChannels),
        nrSamples(nrSamples),
        samples(size_t(nrStokesComponents(kind)) * size_t(nrSamples) * size_t(nrChannels)),
        validFraction(size_t(nrSamples) * size_t(nrChannels)) {}

  StokesKind kind = StokesKind::kI;
  int sap = 0;                         ///< the beam (SAP) index, Observation.Beam[sap]
  int tab = 0;                         ///< the TAB within its SAP
  int subband = 0;                     ///< subband index in the observation's subband list
  int64_t block = 0;                   ///< block number (0 = the block starting at the start)
  int nrChannels = 0;                  ///< output channels per subband (nrChannelsPerSubband)
  int nrSamples = 0;                   ///< output samples in this block (after time integration)
  AlignedBuffer<float> samples;        ///< [component][sample][channel]
  AlignedBuffer<float> validFraction;  ///< [sample][channel]: valid input samples / all, 0..1

  int nrComponents() const { return nrStokesComponents(kind); }
  float& sample(int component, int sample, int channel) {
    return samples[(size_t(component) * size_t(nrSamples) + size_t(sample)) * size_t(nrChannels) +
                   size_t(channel)];
  }
  float sample(int component, int sample, int channel) const {
    return samples[(size_t(component) * size_t(nrSamples) + size_t(sample)) * size_t(nrChannels) +
                   size_t(channel)];
  }
};

/// A TAB's mean power over the samples and channels of one block that had valid input
/// (Stokes I; of complex voltages |X|^2 + |Y|^2), for the operator's console; 0 when none
/// had.
inline double meanPower(const BeamFormedData& data) {
  double sum = 0;
  int64_t count = 0;
  for (int t = 0; t < data.nrSamples; ++t)
    for (int c = 0; c < data.nrChannels; ++c) {
      if (data.validFraction[size_t(t) * size_t(data.nrChannels) + size_t(c)] <= 0) continue;
      if (data.kind == StokesKind::kXXYY) {
        for (int k = 0; k < 4; ++k) sum += double(data.sample(k, t, c)) * data.sample(k, t, c);
      } else {
        sum += data.sample(0, t, c);
      }
      ++count;
    }
  return count ? sum / double(count) : 0;
}

}  // namespace rtcp
