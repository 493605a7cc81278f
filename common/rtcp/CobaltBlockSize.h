#pragma once
/// \file CobaltBlockSize.h
/// How LOFAR turns a requested correlator integration time into COBALT's block keys (the
/// scheduler's BlockSize, SAS/Scheduler blocksize.h): a block of 0.6 to 1.3 s, a multiple
/// of 16 x channels x integrations per block; integrations of whole blocks, or for times
/// under 0.6 s several integrations per block. The integration time COBALT then delivers
/// is blockSize / nrIntegrationsPerBlock x nrBlocksPerIntegration samples.

#include <cstdint>

namespace rtcp {

struct CobaltBlockSize {
  int64_t blockSize = 0;           ///< Cobalt.blockSize: samples per subband per block
  int nrBlocksPerIntegration = 1;  ///< Cobalt.Correlator.nrBlocksPerIntegration
  int nrIntegrationsPerBlock = 1;  ///< Cobalt.Correlator.nrIntegrationsPerBlock
  double integrationTime = 0;      ///< seconds, as delivered
};

/// The block keys LOFAR's scheduler derives from a requested integration time (seconds)
/// for a correlator of `channels` channels at clockMHz. Throws std::invalid_argument for a
/// time that is not positive.
CobaltBlockSize cobaltBlockSize(double integrationTime, int channels, int clockMHz);

}  // namespace rtcp
