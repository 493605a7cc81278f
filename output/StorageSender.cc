#include "StorageSender.h"

#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>
#include <stdexcept>

#include "DiskSpool.h"
#include "SerialisedSlots.h"
#include "rtcp/LittleEndian.h"
#include "rtcp/Logger.h"
#include "rtcp/Stream.h"

namespace rtcp::ion {

namespace {

enum Kind { kIntegration = 0, kBeamFormed = 1 };
const char* const kItemNames[] = {"integrations", "beam-formed blocks"};

Kind kindOf(const uint8_t* bytes) {
  return wire::get<uint32_t>(bytes, 0) == kBeamFormedMagic ? kBeamFormed : kIntegration;
}

/// The stream a serialised block belongs to and its place in it (DurableReply's terms).
std::pair<DurableStream, int64_t> streamOf(const uint8_t* bytes) {
  if (kindOf(bytes) == kBeamFormed) {
    const BeamFormedHeader h = BeamFormedHeader::read(bytes);
    return {{DurableStream::Kind::kBeamFormed, h.sap, h.tab, h.subband}, int64_t(h.block)};
  }
  const CorrelatedHeader h = CorrelatedHeader::read(bytes);
  return {{DurableStream::Kind::kIntegrations, 0, 0, h.subband}, int64_t(h.integration)};
}

}  // namespace

StorageSender::Counters& StorageSender::Counters::operator+=(const Counters& o) {
  queued += o.queued, sent += o.sent, dropped += o.dropped, spooled += o.spooled;
  resent += o.resent, durable += o.durable, unprotected += o.unprotected;
  return *this;
}

/// One storage host:port: a bounded queue and the thread that sends it. Integrations and
/// beam-formed blocks take the same way (queue, spool, in flight, retained), each kind with
/// its own queue bound and counters.
class StorageSender::Connection {
 public:
  Connection(uint64_t observationId, StorageDestination destination, Options options)
      : observationId_(observationId),
        destination_(std::move(destination)),
        options_(options),
        name_("tcp:" + destination_.host + ":" + std::to_string(destination_.port)),
        spool_(options_.spoolDirectory + "/L" + std::to_string(observationId) + "-" +
                   destination_.host + "-" + std::to_string(destination_.port) + ".spool",
               options_.waitWhenFull ? 0 : options_.spoolBytes),
        thread_([this] { run(); }) {}
  ~Connection() { stop(); }

  void write(std::unique_ptr<CorrelatedData> data) {
    std::unique_lock lock(mutex_);
    const Way way = admit(kIntegration, lock);
    if (way != Way::kQueue) {
      if (way == Way::kSpool && spool_.push(data->serialise(observationId_)))
        return spooled(kIntegration);
      if (dropped(kIntegration))
        RTCP_LOG_WARN("storage", name_ << ": output queue (" << options_.queueCapacity
                                       << " integrations) and spool (" << spool_.bytes()
                                       << " bytes) full; dropped integration " << data->integration
                                       << " of subband index " << data->subband << " ("
                                       << statistics_.dropped << " dropped so far)");
      return;
    }
    queue_.push_back({std::move(data), {}, 0, false, kIntegration});
    wake_.notify_all();
  }

  /// One serialised beam-formed block, behind what is queued (or spooled).
  void writeBeamFormed(SerialisedBytes bytes) {
    std::unique_lock lock(mutex_);
    const Way way = admit(kBeamFormed, lock);
    if (way != Way::kQueue) {
      if (way == Way::kSpool && spool_.push({bytes.data(), bytes.size()}))
        return spooled(kBeamFormed);
      if (dropped(kBeamFormed)) {
        const BeamFormedHeader h = BeamFormedHeader::read(bytes.data());
        RTCP_LOG_WARN("storage", name_ << ": beam-formed queue ("
                                       << options_.beamFormedQueueCapacity << " blocks) and spool ("
                                       << spool_.bytes() << " bytes) full; dropped SAP " << h.sap
                                       << " TAB " << h.tab << " subband index " << h.subband
                                       << " block " << h.block << " ("
                                       << statistics_.beamFormed.dropped
                                       << " beam-formed blocks dropped so far)");
      }
      return;
    }
    queue_.push_back({nullptr, std::move(bytes), 0, false, kBeamFormed});
    wake_.notify_all();
  }

  bool drain(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mutex_);
    wake_.notify_all();
    return idle_.wait_until(lock, deadline, [&] {
      return queue_.empty() && inFlight_.empty() && !sending_ && spool_.empty();
    });
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      stopping_ = true;
      wake_.notify_all();
      room_.notify_all();
    }
    thread_.join();
    std::lock_guard lock(mutex_);
    size_t left[2] = {pending_[kIntegration], pending_[kBeamFormed]};
    dropSpooled(left);
    for (const Kind kind : {kIntegration, kBeamFormed})
      if (left[kind]) {
        counters(kind).dropped += left[kind];
        RTCP_LOG_ERROR("storage", name_ << ": " << left[kind] << " " << kItemNames[kind]
                                        << " could not be sent");
      }
  }

  /// The pool of serialised beam-formed blocks, for those read back from the spool.
  void useBeamFormedSlots(SerialisedSlots* slots) {
    std::lock_guard lock(mutex_);
    beamFormedSlots_ = slots;
  }

  Statistics statistics() const {
    std::lock_guard lock(mutex_);
    Statistics statistics = statistics_;
    if (slots_) statistics.recycledBuffers = slots_->reused();
    return statistics;
  }

 private:
  struct Item {
    std::unique_ptr<CorrelatedData> data;  ///< until serialised
    SerialisedBytes bytes;                 ///< serialised on first send, kept for a resend
    uint64_t endOffset = 0;                ///< stream offset after its last byte
    bool delivered = false;                ///< counted sent already (a retained one resent)
    Kind kind = kIntegration;
  };
  enum class Way { kQueue, kSpool, kDrop };

  Counters& counters(Kind kind) {
    return kind == kBeamFormed ? statistics_.beamFormed : static_cast<Counters&>(statistics_);
  }
  size_t capacity(Kind kind) const {
    return kind == kBeamFormed ? options_.beamFormedQueueCapacity : options_.queueCapacity;
  }

  /// Where a new item of `kind` goes: into the queue (counted queued and pending), behind a
  /// full queue or anything spooled into the spool, nowhere once stopping. With
  /// waitWhenFull, waits for room in the queue first. Mutex held.
  Way admit(Kind kind, std::unique_lock<std::mutex>& lock) {
    if (options_.waitWhenFull)
      room_.wait(lock, [&] { return pending_[kind] < capacity(kind) || stopping_; });
    if (stopping_) return Way::kDrop;
    // In order: once something is in the spool, what comes later goes there too.
    if (pending_[kind] >= capacity(kind) || !spool_.empty()) return Way::kSpool;
    ++counters(kind).queued;
    ++pending_[kind];
    return Way::kQueue;
  }

  /// An item of `kind` went into the spool. Mutex held.
  void spooled(Kind kind) {
    ++counters(kind).queued;
    ++counters(kind).spooled;
    statistics_.spoolHighWaterBytes = spool_.highWaterBytes();
    if (!spoolWarned_)
      RTCP_LOG_WARN("storage", name_ << ": output queue full (" << capacity(kind) << " "
                                     << kItemNames[kind] << "); spooling to " << spool_.path());
    spoolWarned_ = true;
    wake_.notify_all();
  }

  /// An item of `kind` found queue and spool full: counted; true when it is to be logged (a
  /// long outage drops one per subband per integration time: once a second, with the count).
  bool dropped(Kind kind) {
    ++counters(kind).dropped;
    return dropLog_.allow();
  }

  /// Empties the spool at the end, adding its items to left[kind]. Mutex held.
  void dropSpooled(size_t left[2]) {
    try {
      while (const std::optional<std::vector<uint8_t>> bytes = spool_.pop())
        ++left[kindOf(bytes->data())];
    } catch (const std::exception& e) {
      left[kIntegration] += spool_.clear();  // of either kind; unreadable
      RTCP_LOG_ERROR("storage", name_ << ": " << e.what());
    }
  }

  void run() {
    double retry = options_.initialRetrySeconds;
    std::unique_ptr<SerialisedSlots> slots;
    if (options_.integrationBytes) {
      slots = newSlots(options_.integrationBytes);
      slots->populate();
    }
    std::unique_lock lock(mutex_);
    slots_ = std::move(slots);
    while (!stopping_) {
      confirmDelivered();
      refillFromSpool();
      if (queue_.empty()) {
        if (inFlight_.empty()) idle_.notify_all();
        // Idle: wake for new work, or soon to see in-flight bytes acknowledged.
        wake_.wait_for(lock, inFlight_.empty() ? std::chrono::milliseconds(500)
                                               : std::chrono::milliseconds(5));
        continue;
      }
      std::string closed;
      if (!stream_ || !readReplies(closed)) {
        if (stream_) connectionBroke(closed);
        lock.unlock();
        const bool connected = connect();
        lock.lock();
        if (!connected) {
          wake_.wait_for(lock, std::chrono::duration<double>(retry), [&] { return stopping_; });
          retry = std::min(retry * 2, options_.maxRetrySeconds);
          continue;
        }
        retry = options_.initialRetrySeconds;
      }
      Item item = std::move(queue_.front());
      queue_.pop_front();
      if (item.bytes.empty()) {
        item.bytes = slotsFor(*item.data).take(item.data->serialisedSize());
        item.data->serialise(observationId_, item.bytes.span());
      }
      std::unique_ptr<CorrelatedData> spent = std::move(item.data);  // the bytes are sent, kept
      sending_ = true;  // in neither deque while it is written: drain() must not see idle
      lock.unlock();
      if (spent && options_.recycle) options_.recycle(std::move(spent));
      spent.reset();
      bool ok = true;
      std::string why;
      try {
        stream_->write(item.bytes.data(), item.bytes.size());
      } catch (const std::exception& e) {
        ok = false;
        why = e.what();
      }
      lock.lock();
      sending_ = false;
      if (ok) {
        offset_ += item.bytes.size();
        item.endOffset = offset_;
        inFlight_.push_back(std::move(item));
      } else {
        queue_.push_front(std::move(item));
        connectionBroke(why);
      }
    }
  }

  bool connect() {
    try {
      auto stream = connectTcp(destination_.host, destination_.port, 0);
      try {
        options_.handshake->proveToPeer(stream->fileDescriptor());
      } catch (const HandshakeError& e) {
        RTCP_LOG_ERROR("storage", "storage-sink at " << name_ << ": " << e.what()
                                                     << "; nothing sent, retrying");
        warned_ = true;
        return false;
      }
      std::lock_guard lock(mutex_);
      stream_ = std::move(stream);
      offset_ = 0;
      ++statistics_.connects;
      RTCP_LOG_INFO("storage", "connected to storage-sink at " << name_);
      return true;
    } catch (const std::exception& e) {
      if (!warned_)
        RTCP_LOG_WARN("storage", "cannot reach storage-sink: " << e.what() << "; retrying");
      warned_ = true;
      return false;
    }
  }

  /// Takes the sink's replies that arrived (never waiting) and forgets what they say is
  /// on its disk; false, with why, when the sink closed its end or sent what is not a reply.
  bool readReplies(std::string& why) {
    uint8_t bytes[64 * DurableReply::kSize];
    bool open = true;
    while (open) {
      const ssize_t n = ::recv(stream_->fileDescriptor(), bytes, sizeof bytes, MSG_DONTWAIT);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      if (n <= 0) {  // what it said before it closed (or died) still counts
        why = n == 0 ? "storage-sink closed the connection" : std::strerror(errno);
        open = false;
        break;
      }
      replyBytes_.insert(replyBytes_.end(), bytes, bytes + n);
    }
    size_t used = 0;
    bool advanced = false;
    for (; replyBytes_.size() - used >= DurableReply::kSize; used += DurableReply::kSize) {
      const std::optional<DurableReply> reply = DurableReply::read(replyBytes_.data() + used);
      if (!reply) {
        why = "storage-sink sent something that is not a DurableReply";
        replyBytes_.clear();
        return false;
      }
      int64_t& durable = durable_.try_emplace(reply->stream, -1).first->second;
      advanced |= int64_t(reply->sequence) > durable;
      durable = std::max(durable, int64_t(reply->sequence));
    }
    replyBytes_.erase(replyBytes_.begin(), replyBytes_.begin() + ptrdiff_t(used));
    if (advanced) forgetDurable();
    if (!open) replyBytes_.clear();  // a partial reply of a connection that ended
    return open;
  }

  /// Forgets the retained items the sink said are on its disk.
  void forgetDurable() {
    const auto onDisk = [&](const Item& item) {
      const auto [stream, sequence] = streamOf(item.bytes.data());
      const auto it = durable_.find(stream);
      return it != durable_.end() && sequence <= it->second;
    };
    const auto end = std::remove_if(retained_.begin(), retained_.end(), onDisk);
    for (auto it = end; it != retained_.end(); ++it) {
      retainedBytes_ -= it->bytes.size();
      keptBeamFormed_ -= it->kind == kBeamFormed;
      ++counters(it->kind).durable;
    }
    retained_.erase(end, retained_.end());
  }

  /// Moves spooled items into the queue while it has room for either kind (they are newer
  /// than what it holds: write() spools everything while the spool is not empty). A kind
  /// with no queue (a connection without beam-formed files) counts as room for one, or its
  /// bound of 0 would keep the other kind's spooled items there for ever.
  void refillFromSpool() {
    const auto room = [&](Kind kind) {
      return pending_[kind] < std::max<size_t>(1, capacity(kind));
    };
    while (!spool_.empty() && room(kIntegration) && room(kBeamFormed)) {
      try {
        SerialisedBytes bytes(*spool_.pop());
        const Kind kind = kindOf(bytes.data());
        if (kind == kBeamFormed && beamFormedSlots_) {  // into the pool, not kept in the heap
          SerialisedBytes slot = beamFormedSlots_->take(bytes.size());
          std::copy_n(bytes.data(), bytes.size(), slot.data());
          bytes = std::move(slot);
        }
        ++pending_[kind];
        queue_.push_back({nullptr, std::move(bytes), 0, false, kind});
      } catch (const std::exception& e) {
        const size_t lost = spool_.clear();
        statistics_.dropped += lost;  // of either kind: unreadable, counted as integrations
        RTCP_LOG_ERROR("storage",
                       name_ << ": " << e.what() << "; " << lost << " spooled blocks dropped");
      }
    }
    if (spool_.empty()) spoolWarned_ = false;
  }

  /// Drops in-flight items whose bytes the sink's TCP stack acknowledged.
  void confirmDelivered() {
    if (!stream_ || inFlight_.empty()) return;
    int unacknowledged = 0;
    if (ioctl(stream_->fileDescriptor(), SIOCOUTQ, &unacknowledged) != 0) return;
    const uint64_t acknowledged = offset_ - uint64_t(unacknowledged);
    while (!inFlight_.empty() && inFlight_.front().endOffset <= acknowledged) {
      Item& item = inFlight_.front();
      --pending_[item.kind];
      if (!item.delivered) ++counters(item.kind).sent;
      item.delivered = true;
      retain(std::move(item));
      inFlight_.pop_front();
      room_.notify_all();
    }
  }

  /// Keeps an acknowledged item to send again should the connection break, until the sink
  /// says it is on its disk: a sink that dies loses what it took in but had not flushed.
  /// Beyond retainBytes the oldest kept are forgotten, and beyond beamFormedKeptCapacity
  /// the oldest kept beam-formed block (counted unprotected either way).
  void retain(Item&& item) {
    if (item.bytes.size() > options_.retainBytes ||
        (item.kind == kBeamFormed && options_.beamFormedKeptCapacity == 0)) {
      ++counters(item.kind).unprotected;
      return;
    }
    if (item.kind == kBeamFormed && keptBeamFormed_ >= options_.beamFormedKeptCapacity) {
      const auto oldest = std::find_if(retained_.begin(), retained_.end(),
                                       [](const Item& kept) { return kept.kind == kBeamFormed; });
      forget(oldest);
    }
    retainedBytes_ += item.bytes.size();
    keptBeamFormed_ += item.kind == kBeamFormed;
    retained_.push_back(std::move(item));
    while (retainedBytes_ > options_.retainBytes) forget(retained_.begin());
  }

  /// Forgets a kept item before the sink said it is on its disk.
  void forget(std::deque<Item>::iterator kept) {
    retainedBytes_ -= kept->bytes.size();
    keptBeamFormed_ -= kept->kind == kBeamFormed;
    ++counters(kept->kind).unprotected;
    retained_.erase(kept);
  }

  /// The pool of the connection's serialised integrations (made at the start, or else at
  /// the first one, whose size every integration of the observation has): slots for those
  /// sent and not yet acknowledged and for what may be retained. Mutex held.
  SerialisedSlots& slotsFor(const CorrelatedData& data) {
    if (!slots_) slots_ = newSlots(data.serialisedSize());
    return *slots_;
  }
  std::unique_ptr<SerialisedSlots> newSlots(size_t bytes) const {
    return std::make_unique<SerialisedSlots>(
        bytes, IntegrationSendPool::slotsFor(bytes, options_.retainBytes,
                                             options_.integrationsPerConnection));
  }

  /// Puts what was retained and what was not acknowledged back in front of the queue, in
  /// order.
  void connectionBroke(const std::string& why) {
    confirmDelivered();
    RTCP_LOG_WARN("storage", name_
                                 << ": connection lost (" << why << "); " << inFlight_.size()
                                 << " unacknowledged and " << retained_.size()
                                 << " acknowledged blocks not yet on its disk will be sent again");
    for (const std::deque<Item>* items : {&inFlight_, &retained_})
      for (const Item& item : *items) ++counters(item.kind).resent;
    while (!inFlight_.empty()) {
      queue_.push_front(std::move(inFlight_.back()));
      inFlight_.pop_back();
    }
    while (!retained_.empty()) {
      ++pending_[retained_.back().kind];  // waiting again
      queue_.push_front(std::move(retained_.back()));
      retained_.pop_back();
    }
    retainedBytes_ = 0;
    keptBeamFormed_ = 0;
    stream_.reset();
    warned_ = false;
  }

  uint64_t observationId_;
  StorageDestination destination_;
  Options options_;
  std::string name_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_, room_;
  std::unique_ptr<SerialisedSlots> slots_;  ///< before the items: they give slots back to it
  std::deque<Item> queue_;                  ///< waiting to be sent
  std::deque<Item> inFlight_;               ///< sent, not yet acknowledged
  std::deque<Item> retained_;  ///< acknowledged, not yet on the sink's disk, oldest first
  uint64_t retainedBytes_ = 0;
  size_t keptBeamFormed_ = 0;  ///< beam-formed items in retained_
  /// The pool of serialised beam-formed blocks (StorageSender's), for those read back from
  /// the spool; nullptr: they keep the spool's heap bytes.
  SerialisedSlots* beamFormedSlots_ = nullptr;
  std::map<DurableStream, int64_t> durable_;  ///< [stream]: newest block on its disk
  std::vector<uint8_t> replyBytes_;           ///< the sink's replies, a partial one at the end
  bool sending_ = false;                      ///< an item taken from queue_ is being written
  /// [kind]: items in queue_, in inFlight_ or being written (not retained ones)
  size_t pending_[2] = {0, 0};
  std::unique_ptr<Stream> stream_;
  uint64_t offset_ = 0;
  bool stopping_ = false, warned_ = false, spoolWarned_ = false;
  RateLimiter dropLog_{1.0};
  DiskSpool spool_;  ///< behind queue_: what did not fit in it, oldest first
  Statistics statistics_;
  std::thread thread_;  // last: starts once everything else is constructed
};

StorageSender::StorageSender(uint64_t observationId,
                             const std::map<int, StorageDestination>& destinations, Options options,
                             const std::vector<StorageDestination>& beamFormedDestinations)
    : observationId_(observationId) {
  if (!options.handshake)
    throw std::invalid_argument("StorageSender: no handshake (the observation's secret)");
  std::map<StorageDestination, Connection*> byDestination;
  // A connection that carries only beam-formed blocks makes no pool of integration slots.
  Options beamFormedOnly = options;
  beamFormedOnly.integrationBytes = 0;
  const auto connectionTo = [&](const StorageDestination& destination, const Options& o) {
    Connection*& connection = byDestination[destination];
    if (!connection) {
      connections_.push_back(std::make_unique<Connection>(observationId, destination, o));
      connection = connections_.back().get();
    }
    return connection;
  };
  for (const auto& [subband, destination] : destinations) {
    Options own = options;  // the connection's bounds, from the subbands it carries
    const auto bounds = options.integrationConnections.find(destination.host);
    if (bounds != options.integrationConnections.end()) {
      own.queueCapacity = bounds->second.queueIntegrations;
      own.integrationsPerConnection = bounds->second.integrations;
    }
    bySubband_[subband] = connectionTo(destination, own);
  }
  for (const StorageDestination& destination : beamFormedDestinations)
    byFile_.push_back(connectionTo(destination, beamFormedOnly));
  if (!beamFormedDestinations.empty()) {
    // Every connection's queue and kept blocks (BeamFormedSendPool.h, as observe's memory
    // plan counts them), faulted in now: retain() keeps no more than its share.
    std::set<Connection*> beamFormedConnections(byFile_.begin(), byFile_.end());
    const BeamFormedSendPool pool{std::max<size_t>(options.beamFormedBytes, 64),
                                  options.beamFormedQueueCapacity, options.beamFormedKeptCapacity,
                                  beamFormedConnections.size()};
    beamFormedSlots_ = std::make_unique<SerialisedSlots>(pool.blockBytes, pool.slots());
    beamFormedSlots_->populate();
    for (Connection* connection : beamFormedConnections)
      connection->useBeamFormedSlots(beamFormedSlots_.get());
  }
}

StorageSender::~StorageSender() {
  finish(0);
  connections_.clear();  // before the pool of their beam-formed blocks
}

std::map<int, StorageDestination> StorageSender::destinations(const ObservationSettings& settings) {
  std::map<int, StorageDestination> result;
  for (const auto& [host, subbands] : correlatedConnections(settings))
    for (int subband : subbands)
      result[subband] = {host, uint16_t(settings.correlatedOutput.storagePort)};
  return result;
}

std::vector<StorageDestination> StorageSender::beamFormedDestinations(
    const ObservationSettings& settings) {
  std::vector<StorageDestination> result;
  for (const BeamFormedFile& file : settings.beamFormed.files)
    result.push_back({file.host.empty() ? "localhost" : file.host,
                      uint16_t(settings.correlatedOutput.storagePort)});
  return result;
}

void StorageSender::writeBeamFormed(const std::vector<int>& files, const BeamFormedHeader& header,
                                    std::span<const float> samples,
                                    std::span<const float> validFraction) {
  std::vector<Connection*> targets;
  for (int file : files)
    if (file >= 0 && size_t(file) < byFile_.size() &&
        std::find(targets.begin(), targets.end(), byFile_[size_t(file)]) == targets.end())
      targets.push_back(byFile_[size_t(file)]);
  if (targets.empty()) {
    ++beamFormedUnrouted_;
    RTCP_LOG_ERROR("storage", "no output location for beam-formed SAP "
                                  << header.sap << " TAB " << header.tab << " subband index "
                                  << header.subband << "; block " << header.block << " dropped");
    return;
  }
  const size_t bytes = kBeamFormedHeaderSize + header.expectedPayloadSize();
  for (Connection* connection : targets) {
    SerialisedBytes serialised = beamFormedSlots_->take(bytes);
    serialiseBeamFormed(header, samples, validFraction, serialised.span());
    connection->writeBeamFormed(std::move(serialised));
  }
}

void StorageSender::write(std::unique_ptr<CorrelatedData> data) {
  const auto it = bySubband_.find(data->subband);
  if (it == bySubband_.end()) {
    RTCP_LOG_ERROR("storage", "no output location for subband index "
                                  << data->subband << "; integration " << data->integration
                                  << " dropped");
    return;
  }
  it->second->write(std::move(data));
}

bool StorageSender::finish(double timeoutSeconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeoutSeconds));
  bool complete = true;
  for (auto& c : connections_) complete = c->drain(deadline) && complete;
  for (auto& c : connections_) c->stop();
  return complete;
}

StorageSender::Statistics StorageSender::statistics() const {
  Statistics total;
  for (const auto& c : connections_) {
    const Statistics s = c->statistics();
    total += s;
    total.beamFormed += s.beamFormed;
    total.connects += s.connects;
    total.recycledBuffers += s.recycledBuffers;
    total.spoolHighWaterBytes = std::max(total.spoolHighWaterBytes, s.spoolHighWaterBytes);
  }
  total.beamFormed.dropped += beamFormedUnrouted_;
  if (beamFormedSlots_) {
    total.beamFormedPoolSlots = beamFormedSlots_->nrSlots();
    total.beamFormedPoolOverflowed = beamFormedSlots_->overflowed();
  }
  return total;
}

}  // namespace rtcp::ion
