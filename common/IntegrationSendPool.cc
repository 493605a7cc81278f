#include "rtcp/IntegrationSendPool.h"

#include <algorithm>

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

double IntegrationSendPool::bytes() const {
  double total = 0;
  for (const auto& [host, connection] : connections)
    total += double(connection.queueIntegrations + connection.slots) * double(integrationBytes);
  return total;
}

std::map<std::string, std::vector<int>> correlatedConnections(const ObservationSettings& s) {
  std::map<std::string, std::vector<int>> connections;
  for (size_t i = 0; i < s.subbands.size(); ++i)
    connections[correlatedStorageHost(s, i)].push_back(int(i));
  return connections;
}

IntegrationSendPool integrationSendPool(const ObservationSettings& s, size_t queuePerConnection,
                                        uint64_t retainBytes) {
  IntegrationSendPool pool;
  const int64_t perSubband =  // with a last one cut short
      (s.nrBlocks() + s.blocksPerIntegration - 1) / s.blocksPerIntegration;
  const size_t integrations = size_t(std::max<int64_t>(0, perSubband));
  pool.integrations = integrations * size_t(s.nrSubbands());
  if (!s.correlatedOutput.enabled) return pool;
  CorrelatedHeader shape;
  shape.nrStations = uint32_t(s.nrStations());
  shape.nrChannels = uint32_t(s.channelsPerSubband);
  pool.integrationBytes = kCorrelatedHeaderSize + shape.expectedPayloadSize();
  for (const auto& [host, subbands] : correlatedConnections(s)) {
    IntegrationConnectionPool& connection = pool.connections[host];
    connection.subbands = subbands.size();
    // At least two integrations of each of its subbands: one block per subband and
    // integration, so 16 would hold hundreds of subbands to a few blocks in flight at a time.
    connection.queueIntegrations = std::max(queuePerConnection, 2 * subbands.size());
    connection.integrations = integrations * subbands.size();
    connection.slots =
        IntegrationSendPool::slotsFor(pool.integrationBytes, retainBytes, connection.integrations);
  }
  return pool;
}

}  // namespace rtcp
