#include "rtcp/BeamFormedSendPool.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "rtcp/BeamFormedWire.h"

namespace rtcp {

size_t largestBeamFormedBlock(const ObservationSettings& s) {
  const BeamFormedSettings& bf = s.beamFormed;
  size_t largest = 0;
  for (bool coherent : {true, false})
    if (coherent ? bf.coherentEnabled : bf.incoherentEnabled) {
      const StokesSettings& st = bf.stokes(coherent);
      largest = std::max(largest, kBeamFormedHeaderSize +
                                      size_t(st.nrComponents() + 1) * size_t(st.nrChannels) *
                                          size_t(st.outputSamplesPerBlock(s.samplesPerBlock())) *
                                          sizeof(float));
    }
  return largest;
}

size_t beamFormedBlocksPerBlock(const ObservationSettings& s) {
  size_t blocks = 0;
  for (const SubbandSettings& subband : s.subbands)
    if (size_t(subband.beam) < s.beamFormed.saps.size())
      blocks += s.beamFormed.saps[size_t(subband.beam)].tabs.size();
  return blocks;
}

BeamFormedSendPool beamFormedSendPool(const ObservationSettings& s, size_t queuePerConnection,
                                      uint64_t retainBytes) {
  BeamFormedSendPool pool;
  if (!s.beamFormed.enabled()) return pool;
  pool.blockBytes = largestBeamFormedBlock(s);
  const size_t perBlock = beamFormedBlocksPerBlock(s);
  pool.queueBlocks = std::max(queuePerConnection, 2 * perBlock);
  const double blocksToDisk =
      std::ceil(kBeamFormedSyncSeconds / std::max(1e-9, s.blockDuration())) + 2;
  pool.keptBlocks = std::min(size_t(blocksToDisk) * perBlock,
                             size_t(retainBytes / std::max<size_t>(pool.blockBytes, 1)));
  std::set<std::string> hosts;  // one connection per storage host (one port: OLAP.Storage.port)
  for (const BeamFormedFile& file : s.beamFormed.files)
    hosts.insert(file.host.empty() ? "localhost" : file.host);
  pool.connections = hosts.size();
  return pool;
}

}  // namespace rtcp
