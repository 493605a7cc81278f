#pragma once
/// \file Integrations.h
/// Which output integration a block belongs to: OLAP.IONProc.integrationSteps consecutive
/// blocks add into one integration, integration 0 starting with block 0 (the block at the
/// observation start). One mapping for the correlator's processor, its work distribution
/// and the output's integrator.

#include <cstdint>
#include <stdexcept>
#include <string>

#include "rtcp/ObservationSettings.h"

namespace rtcp {

struct Integrations {
  /// blocksPerIntegration: OLAP.IONProc.integrationSteps; std::invalid_argument if < 1.
  explicit Integrations(int blocksPerIntegration) : blocksPerIntegration(blocksPerIntegration) {
    if (blocksPerIntegration < 1)
      throw std::invalid_argument("OLAP.IONProc.integrationSteps must be >= 1, not " +
                                  std::to_string(blocksPerIntegration));
  }

  /// The integration block `block` (>= 0) adds into.
  int64_t of(int64_t block) const { return block / blocksPerIntegration; }
  /// The block's place within its integration, 0 .. blocksPerIntegration - 1.
  int slotOf(int64_t block) const { return int(block % blocksPerIntegration); }
  /// The first block of integration `integration`.
  int64_t firstBlock(int64_t integration) const { return integration * blocksPerIntegration; }

  int blocksPerIntegration;
};

/// The blocks an observation processes: those of its whole integrations (a tail shorter
/// than one integration is not processed).
inline int64_t nrProcessedBlocks(const ObservationSettings& settings) {
  return settings.nrIntegrations() * settings.blocksPerIntegration;
}

/// The first block the compute ranks ask for: 0, or with a beam former's lead-in
/// (BeamFormedSettings::leadInBlocks) the first of the blocks before the start that only
/// build its state (-leadInBlocks): nothing of them is correlated, written or counted.
inline int64_t firstProcessedBlock(const ObservationSettings& settings) {
  return settings.beamFormed.enabled() ? -int64_t(settings.beamFormed.leadInBlocks) : 0;
}

}  // namespace rtcp
