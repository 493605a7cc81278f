#include "rtcp/IntegrationSendPool.h"

#include <algorithm>
#include <set>

#include "rtcp/CorrelatedBlock.h"

namespace rtcp {

size_t IntegrationSendPool::slotsFor(size_t bytes, uint64_t retainBytes, size_t integrations) {
  // Steady state: what may be retained and what is in flight; a queue filling up while
  // storage is away runs over into the heap.
  size_t slots = std::min<size_t>(kMaxSlots, (retainBytes + kInFlightBytes) / bytes + 2);
  if (integrations) slots = std::min(slots, integrations);
  return slots;
}

std::string correlatedStorageHost(const ObservationSettings& s, size_t index) {
  const std::vector<std::string>& hosts = s.correlatedOutput.hosts;
  const std::string host = hosts.empty() ? "" : hosts[std::min(index, hosts.size() - 1)];
  return host.empty() ? "localhost" : host;
}

IntegrationSendPool integrationSendPool(const ObservationSettings& s, size_t queuePerConnection,
                                        uint64_t retainBytes) {
  IntegrationSendPool pool;
  // At least two integrations of every subband: one block per subband and integration, so
  // 16 would hold hundreds of subbands to a few blocks in flight at a time.
  pool.queueIntegrations = std::max(queuePerConnection, 2 * size_t(s.nrSubbands()));
  const int64_t integrations =  // with a last one cut short
      (s.nrBlocks() + s.blocksPerIntegration - 1) / s.blocksPerIntegration;
  pool.integrations = size_t(std::max<int64_t>(0, integrations)) * size_t(s.nrSubbands());
  if (!s.correlatedOutput.enabled) return pool;
  CorrelatedHeader shape;
  shape.nrStations = uint32_t(s.nrStations());
  shape.nrChannels = uint32_t(s.channelsPerSubband);
  pool.integrationBytes = kCorrelatedHeaderSize + shape.expectedPayloadSize();
  pool.slots = IntegrationSendPool::slotsFor(pool.integrationBytes, retainBytes, pool.integrations);
  std::set<std::string> hosts;  // one connection per storage host (one port: OLAP.Storage.port)
  for (size_t i = 0; i < s.subbands.size(); ++i) hosts.insert(correlatedStorageHost(s, i));
  pool.connections = hosts.size();
  return pool;
}

}  // namespace rtcp
