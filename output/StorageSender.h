#pragma once
/// \file StorageSender.h
/// Sends integrations to storage-sink over TCP as DESIGN §2.4 blocks (header, CRC-64,
/// payload: CorrelatedData::serialise), one connection per storage host:port, each with
/// its own sender thread and a two-level write-back cache: a bounded queue in memory, then
/// a bounded spool file (DiskSpool.h). Storage down, stopped or slow: integrations wait in
/// the queue, and those beyond it in the spool, in order, while the connection is retried
/// with back-off, and are sent once storage-sink takes data again; only when both are full
/// is an integration dropped, counted and logged (storage-sink flags it as a gap). write()
/// never blocks in real time; for replays that need not keep pace (Options::waitWhenFull)
/// it waits for room in the queue instead.
///
/// Delivery: an integration counts as sent once the sink's TCP stack acknowledged all
/// its bytes (the socket's unacknowledged-bytes count, SIOCOUTQ). It is kept (up to
/// Options::retainBytes) until the sink says, in a DurableReply on the same connection,
/// that it is in its MeasurementSet on disk: a sink that dies loses what it took in but
/// had not flushed. When a connection breaks, what was not acknowledged and what was kept
/// is sent again, in order, on the next one; a restarted sink refuses what it has as
/// duplicates. A sink that closed is noticed before the next send.
///
/// Beam-formed blocks (DESIGN §2.4b) take the same way, in the same order on the same
/// connections: their own queue bound (Options::beamFormedQueueCapacity), then the same
/// spool, kept after they were sent until the sink says they are in its files on disk (a
/// DurableReply of kind beam-formed) within the same retainBytes and at most
/// Options::beamFormedKeptCapacity of them (beyond it the oldest kept is forgotten, counted
/// unprotected), sent again after a broken connection; counted apart
/// (Statistics::beamFormed). Their serialised bytes live in one pool for every connection
/// (rtcp/BeamFormedSendPool.h: the queues and the kept blocks, which observe's memory plan
/// counts), faulted in at the start; a block read back from the spool is copied into it.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "rtcp/BeamFormedSendPool.h"
#include "rtcp/BeamFormedWire.h"
#include "rtcp/CorrelatedBlock.h"
#include "rtcp/Handshake.h"
#include "rtcp/IntegrationSendPool.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::ion {

class SerialisedSlots;

struct StorageDestination {
  std::string host;
  uint16_t port = 0;
  bool operator<(const StorageDestination& o) const {
    return std::tie(host, port) < std::tie(o.host, o.port);
  }
};

class StorageSender {
 public:
  struct Options {
    /// Integrations waiting per connection (--output-queue).
    size_t queueCapacity = kDefaultOutputQueue;
    double initialRetrySeconds = 0.1;  ///< first reconnection delay, doubling...
    double maxRetrySeconds = 5;        ///< ...up to this
    /// Replays as fast as the chain goes (OLAP.realTime = F): write() waits for room in
    /// a full queue instead of dropping, which slows the chain down to storage's pace.
    bool waitWhenFull = false;
    /// The spool behind the queue, per connection (ionproc --spool-mb; 0: none), and the
    /// directory of its files (--spool-dir).
    uint64_t spoolBytes = 0;
    std::string spoolDirectory = "/tmp";
    /// Bytes of acknowledged integrations kept until the sink says they are on its disk,
    /// to send again after a connection broke (ionproc --retain-mb; 0: none). Beyond it
    /// the oldest are forgotten: a sink dying then loses them, as flagged gaps.
    uint64_t retainBytes = 0;
    /// Bytes of every serialised integration (the observation's shape), for the pool of
    /// serialisation slots each connection makes and faults in when it starts (16 MB in
    /// flight and what may be retained, Options::retainBytes), so that no integration
    /// lands in fresh memory while the observation runs. 0: the pool is made at the first
    /// integration, unpopulated.
    size_t integrationBytes = 0;
    /// Integrations the observation sends per connection at most (0: unknown): a pool for
    /// more would never be used.
    size_t integrationsPerConnection = 0;
    /// [storage host]: its connection's own queueCapacity and integrationsPerConnection,
    /// from the subbands it carries (IntegrationSendPool.h); a host not listed takes the
    /// two above.
    std::map<std::string, IntegrationConnectionPool> integrationConnections;
    /// Takes each integration once it is serialised (the Integrator's recycle(), so that
    /// its memory is used again); empty: freed.
    std::function<void(std::unique_ptr<CorrelatedData>)> recycle;
    /// Proves each connection belongs to the observation before anything is sent, and
    /// that the sink knows the secret too (Handshake.h); required.
    std::shared_ptr<const Handshake> handshake;
    /// Beam-formed blocks waiting or unacknowledged per connection in memory (beside the
    /// integrations' queueCapacity; the rest go to the spool), beam-formed blocks kept per
    /// connection until the sink says they are on its disk, and the bytes of the largest
    /// one (0: no beam-formed output); BeamFormedSendPool.h.
    size_t beamFormedQueueCapacity = 64;
    size_t beamFormedKeptCapacity = 64;
    size_t beamFormedBytes = 0;
  };
  /// What happened to one kind of block (integrations, or beam-formed blocks: per storage
  /// connection, as a TAB-subband-block goes to each host holding one of its files).
  struct Counters {
    uint64_t queued = 0;       ///< accepted by write() / writeBeamFormed()
    uint64_t sent = 0;         ///< acknowledged by the sink's TCP stack
    uint64_t dropped = 0;      ///< queue and spool full, no location, or left over at finish()
    uint64_t spooled = 0;      ///< went through the spool file (the queue was full)
    uint64_t resent = 0;       ///< sent again after a connection broke (and retained)
    uint64_t durable = 0;      ///< the sink said they are on its disk
    uint64_t unprotected = 0;  ///< forgotten before that (beyond retainBytes)
    Counters& operator+=(const Counters& other);
  };
  /// The integrations' counters, and the beam-formed blocks' apart.
  struct Statistics : Counters {
    Counters beamFormed;
    uint64_t spoolHighWaterBytes = 0;  ///< the most a spool file held
    uint64_t connects = 0;             ///< connections made
    uint64_t recycledBuffers = 0;      ///< serialised into a buffer an earlier one used
    /// The pool of serialised beam-formed blocks: its slots, and the blocks that found
    /// none free and took heap memory (0 while the bounds hold).
    uint64_t beamFormedPoolSlots = 0, beamFormedPoolOverflowed = 0;
  };

  /// destinations: storage host and port per subband index (correlated output);
  /// beamFormedDestinations: per beam-formed file (index in settings.beamFormed.files).
  /// Throws std::invalid_argument without options.handshake.
  StorageSender(uint64_t observationId, const std::map<int, StorageDestination>& destinations,
                Options options,
                const std::vector<StorageDestination>& beamFormedDestinations = {});
  ~StorageSender();
  StorageSender(const StorageSender&) = delete;
  StorageSender& operator=(const StorageSender&) = delete;

  /// Host (Output_Correlated.locations) and port (OLAP.Storage.port) of every subband.
  static std::map<int, StorageDestination> destinations(const ObservationSettings& settings);
  /// Host (Output_CoherentStokes / Output_IncoherentStokes.locations) and port
  /// (OLAP.Storage.port) of every beam-formed file.
  static std::vector<StorageDestination> beamFormedDestinations(
      const ObservationSettings& settings);

  /// Queues an integration for its subband's storage (in memory, or in the spool behind a
  /// full queue); drops it when both are full (or, with waitWhenFull, waits for room).
  void write(std::unique_ptr<CorrelatedData> data);
  /// Queues one TAB's beam-formed data of a subband-block (header: its labels and shape;
  /// size and CRC are filled in) for the storage-sinks of `files` (indices in
  /// settings.beamFormed.files; one block per distinct connection). Real time: spooled
  /// when its queue is full, dropped when the spool is full too; with waitWhenFull, waits
  /// for room.
  void writeBeamFormed(const std::vector<int>& files, const BeamFormedHeader& header,
                       std::span<const float> samples, std::span<const float> validFraction);
  /// Waits up to timeoutSeconds for everything queued to be sent, then stops; what is
  /// left counts as dropped. True when nothing was left.
  bool finish(double timeoutSeconds);
  Statistics statistics() const;

 private:
  class Connection;
  uint64_t observationId_;
  std::unique_ptr<SerialisedSlots> beamFormedSlots_;  ///< before the connections: they hold slots
  std::map<int, Connection*> bySubband_;
  std::vector<Connection*> byFile_;  ///< [beam-formed file]
  std::vector<std::unique_ptr<Connection>> connections_;
  std::atomic<uint64_t> beamFormedUnrouted_{0};  ///< blocks with no file to go to
};

}  // namespace rtcp::ion
