#pragma once
/// \file IntegrationSendPool.h
/// The integrations ionproc holds on their way to storage (output/StorageSender.h), sized
/// once for both sides as BeamFormedSendPool.h sizes the beam-formed blocks: ionproc's
/// storage connections are made with these bounds, and observe's memory plan counts them
/// before the observation starts (observe/MemoryPlan.h).
///
/// Per storage connection that carries correlated output (one per storage host,
/// correlatedConnections()): a queue of integrations waiting to be sent, each whole in
/// memory (--output-queue, at least two of each subband the connection carries: an
/// integration of every subband completes at once); and a pool of serialisation slots,
/// made and faulted in when the connection starts, for kInFlightBytes in the socket's
/// buffers and what --retain-mb keeps until the sink says it is on disk, at most kMaxSlots
/// and never more than the integrations the connection carries. In real time an integration that
/// finds the queue full goes to the spool on disk; one that finds every slot taken is
/// serialised into the heap (counted).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "rtcp/ObservationSettings.h"

namespace rtcp {

/// ionproc's defaults (--output-queue, --retain-mb), which observe does not change.
constexpr size_t kDefaultOutputQueue = 16;
constexpr double kDefaultRetainMb = 256;

/// One storage connection's share of the pool.
struct IntegrationConnectionPool {
  size_t subbands = 0;           ///< subbands it carries
  size_t queueIntegrations = 0;  ///< waiting to be sent
  size_t integrations = 0;       ///< it carries, of its subbands (0: unknown)
  size_t slots = 0;              ///< serialisation slots
};

struct IntegrationSendPool {
  size_t integrationBytes = 0;  ///< a serialised integration (0: no correlated output)
  size_t integrations = 0;      ///< the observation's, of every subband (0: unknown)
  /// [storage host]: the connections that carry integrations (none without correlated
  /// output)
  std::map<std::string, IntegrationConnectionPool> connections;
  static constexpr size_t kInFlightBytes = size_t(16) << 20;
  static constexpr size_t kMaxSlots = 4096;  ///< more (tiny ones) come from the heap

  /// A connection's serialisation slots for integrations of `bytes`: what may be retained
  /// and what is in flight, and two more; at most kMaxSlots and `integrations` (0: unknown).
  static size_t slotsFor(size_t bytes, uint64_t retainBytes, size_t integrations);
  /// Every connection's queue and slots.
  double bytes() const;
};

/// The storage host subband `index` goes to (Output_Correlated.locations; the last one's
/// for subbands beyond the list, "localhost" when none).
std::string correlatedStorageHost(const ObservationSettings& s, size_t index);
/// The storage connections of correlated output, as ionproc makes them: one per storage
/// host (one port: OLAP.Storage.port), [host]: the subband indices it carries, ascending.
std::map<std::string, std::vector<int>> correlatedConnections(const ObservationSettings& s);

/// The pool as ionproc makes it with `queuePerConnection` (--output-queue) and
/// `retainBytes` (--retain-mb) per connection, each connection bounded by its own
/// subbands; without correlated output no connection (bytes() 0).
IntegrationSendPool integrationSendPool(const ObservationSettings& s,
                                        size_t queuePerConnection = kDefaultOutputQueue,
                                        uint64_t retainBytes = uint64_t(kDefaultRetainMb *
                                                                        1048576));

}  // namespace rtcp
