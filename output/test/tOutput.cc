// The output side: Integrator sums and counts, StorageSender's delivery to a
// storage-sink that stops and restarts (a test listener that checks every block), and the
// OutputPath that joins them for ionproc; the tests' dump file.
#include <cppunit/extensions/HelperMacros.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "DumpFile.h"
#include "Integrator.h"
#include "OutputPath.h"
#include "StorageSender.h"
#include "rtcp/Baselines.h"
#include "rtcp/BeamFormedWire.h"
#include "rtcp/Crc64.h"
#include "rtcp/Handshake.h"
#include "rtcp/LittleEndian.h"
#include "rtcp/Stream.h"

using namespace rtcp;
using namespace rtcp::ion;

namespace {

constexpr int kStations = 2, kChannels = 8;
constexpr size_t kCells = size_t(nrBaselines(kStations)) * kChannels;

/// One block's data: visibility i = (i + block, subband), counts 10 + block.
struct BlockData {
  std::vector<std::complex<float>> vis = std::vector<std::complex<float>>(kCells * 4);
  std::vector<uint32_t> valid = std::vector<uint32_t>(kCells);
  BlockData(int64_t block, int subband) {
    for (size_t i = 0; i < vis.size(); ++i) vis[i] = {float(i + block), float(subband)};
    for (auto& v : valid) v = uint32_t(10 + block);
  }
};

struct Collector {
  std::mutex mutex;
  std::vector<std::unique_ptr<CorrelatedData>> items;
  Integrator::Emit emit() {
    return [this](std::unique_ptr<CorrelatedData> d) {
      std::lock_guard lock(mutex);
      items.push_back(std::move(d));
    };
  }
};

/// The observation's secret and storage handshake of the tests (observation 42).
const ObservationSecret& testSecret() {
  static const ObservationSecret secret = ObservationSecret::generate();
  return secret;
}
const std::shared_ptr<const Handshake>& testHandshake() {
  static const auto handshake =
      std::make_shared<const Handshake>(testSecret(), 42, ConnectionPurpose::kStorage);
  return handshake;
}

/// A storage-sink stand-in: accepts connections on a fixed port that prove they belong to
/// observation 42, reads DESIGN §2.4 blocks and §2.4b beam-formed blocks, checks header and
/// CRC, and counts every (subband, integration) and beam-formed (subband, block) it got;
/// with replyDurable, says after each beam-formed block that it is on its disk.
class TestSink {
 public:
  explicit TestSink(uint16_t port = 0) { start(port); }
  ~TestSink() { stop(); }
  uint16_t port() const { return port_; }

  void start(uint16_t port) {
    listener_ = std::make_unique<TcpListener>("127.0.0.1", port);
    port_ = listener_->port();
    thread_ = std::thread([this] {
      while (auto stream = listener_->accept()) {
        try {
          testHandshake()->acceptPeer(stream->fileDescriptor());
        } catch (const HandshakeError&) {
          continue;
        }
        {
          std::lock_guard lock(mutex_);
          stream_ = stream.get();
        }
        readBlocks(*stream);
        std::lock_guard lock(mutex_);
        stream_ = nullptr;
      }
    });
  }
  /// Stops listening and closes the connection (after the block being read).
  void stop() {
    if (!listener_) return;
    listener_->shutdown();
    {
      std::lock_guard lock(mutex_);
      if (stream_) stream_->shutdown();
    }
    thread_.join();
    listener_.reset();
  }
  std::map<std::pair<int, int64_t>, int> received() {
    std::lock_guard lock(mutex_);
    return received_;
  }
  std::map<std::pair<int, int64_t>, int> beamFormedReceived() {
    std::lock_guard lock(mutex_);
    return beamFormedReceived_;
  }
  bool waitForBeamFormed(size_t n, double seconds = 10) {
    for (int i = 0; i < seconds * 100; ++i) {
      {
        std::lock_guard lock(mutex_);
        size_t total = 0;
        for (const auto& [key, count] : beamFormedReceived_) total += size_t(count);
        if (total >= n) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
  std::atomic<bool> replyDurable{false};
  size_t total() {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& [key, count] : received_) n += count;
    return n;
  }
  int bad() const { return bad_; }
  bool waitForTotal(size_t n, double seconds = 10) {
    for (int i = 0; i < seconds * 100; ++i) {
      if (total() >= n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }

 private:
  void readBlocks(Stream& stream) {
    try {
      uint8_t headerBytes[kCorrelatedHeaderSize];
      while (stream.readExact(headerBytes, sizeof headerBytes)) {
        if (wire::get<uint32_t>(headerBytes, 0) == kBeamFormedMagic) {
          if (!readBeamFormed(stream, headerBytes)) return;
          continue;
        }
        const CorrelatedHeader header = CorrelatedHeader::read(headerBytes);
        if (checkCorrelatedHeader(header)) {
          ++bad_;
          return;
        }
        std::vector<uint8_t> payload(header.payloadSize);
        if (!stream.readExact(payload.data(), payload.size())) return;
        if (crc64(payload.data(), payload.size()) != header.payloadCrc ||
            header.observationId != 42) {
          ++bad_;
          continue;
        }
        std::lock_guard lock(mutex_);
        ++received_[{int(header.subband), int64_t(header.integration)}];
      }
    } catch (const std::exception&) {
      // a connection cut in the middle of a block: the sender resends what was not acknowledged
    }
  }

  bool readBeamFormed(Stream& stream, const uint8_t* headerBytes) {
    const BeamFormedHeader header = BeamFormedHeader::read(headerBytes);
    if (checkBeamFormedHeader(header)) {
      ++bad_;
      return false;
    }
    std::vector<uint8_t> payload(header.payloadSize);
    if (!stream.readExact(payload.data(), payload.size())) return false;
    if (crc64(payload.data(), payload.size()) != header.payloadCrc || header.observationId != 42) {
      ++bad_;
      return true;
    }
    {
      std::lock_guard lock(mutex_);
      ++beamFormedReceived_[{int(header.subband), int64_t(header.block)}];
    }
    if (replyDurable) {
      uint8_t reply[DurableReply::kSize];
      DurableReply{{DurableStream::Kind::kBeamFormed, header.sap, header.tab, header.subband},
                   header.block}
          .write(reply);
      stream.write(reply, sizeof reply);
    }
    return true;
  }

  std::unique_ptr<TcpListener> listener_;
  uint16_t port_ = 0;
  std::thread thread_;
  std::mutex mutex_;
  Stream* stream_ = nullptr;
  std::map<std::pair<int, int64_t>, int> received_;
  std::map<std::pair<int, int64_t>, int> beamFormedReceived_;
  std::atomic<int> bad_{0};
};

std::unique_ptr<CorrelatedData> integration(int subband, int64_t number) {
  auto d = std::make_unique<CorrelatedData>(kStations, kChannels);
  d->subband = subband;
  d->integration = number;
  for (size_t i = 0; i < d->visibilities.size(); ++i)
    d->visibilities[i] = {float(i), float(number)};
  for (auto& v : d->validSamples) v = uint32_t(number);
  return d;
}

}  // namespace

/// A TAB's block of subband 0: Stokes I, 4 channels, 8 samples, its values from its number.
void writeBeamFormedBlock(StorageSender& sender, int64_t block) {
  BeamFormedHeader header;
  header.observationId = 42;
  header.stokes = uint8_t(StokesKind::kI);
  header.nrChannels = 4;
  header.nrSamples = 8;
  header.block = uint64_t(block);
  std::vector<float> samples(32, float(block)), valid(32, 1.0f);
  sender.writeBeamFormed({0}, header, samples, valid);
}

/// A sender's options for tests of a sink that goes away: the test handshake, and retries
/// after 0.02 s growing to 0.1 s so that a sink that comes back is found quickly.
StorageSender::Options quickRetryOptions() {
  StorageSender::Options options;
  options.handshake = testHandshake();
  options.initialRetrySeconds = 0.02;
  options.maxRetrySeconds = 0.1;
  return options;
}

/// Three beam-formed blocks to `sink`, which then goes away while five more are written
/// (a queue of 2, the rest spooled) and comes back on the same port; the sender's
/// statistics once everything went.
StorageSender::Statistics sendBeamFormedAcrossARestart(TestSink& sink) {
  const uint16_t port = sink.port();
  const std::string spool = std::filesystem::temp_directory_path().string();
  StorageSender::Options options = quickRetryOptions();
  options.beamFormedQueueCapacity = 2;
  options.beamFormedBytes = kBeamFormedHeaderSize + 2 * 32 * sizeof(float);
  options.spoolBytes = 1 << 20;
  options.spoolDirectory = spool;
  options.retainBytes = 1 << 20;
  StorageSender sender(42, {}, options, {{"127.0.0.1", port}});
  for (int64_t b = 0; b < 3; ++b) writeBeamFormedBlock(sender, b);
  CPPUNIT_ASSERT(sink.waitForBeamFormed(3));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // acknowledged, replies read
  sink.stop();
  for (int64_t b = 3; b < 8; ++b) writeBeamFormedBlock(sender, b);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));  // retries fail meanwhile
  sink.start(port);
  CPPUNIT_ASSERT(sender.finish(10));
  return sender.statistics();
}

class OutputTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(OutputTest);
  CPPUNIT_TEST(testIntegrationSumsAndCounts);
  CPPUNIT_TEST(testIncompleteAndLateBlocks);
  CPPUNIT_TEST(testRecycledIntegrationsSumAfresh);
  CPPUNIT_TEST(testSenderRecyclesWhatItSerialised);
  CPPUNIT_TEST(testBadBlocksRejected);
  CPPUNIT_TEST(testDestinations);
  CPPUNIT_TEST(testSinkRestart);
  CPPUNIT_TEST(testSpooledIntegrationsSentWithoutBeamFormedQueue);
  CPPUNIT_TEST(testReplayWaitsForLateSink);
  CPPUNIT_TEST(testBeamFormedSpooledAndSentAgain);
  CPPUNIT_TEST(testBeamFormedOnDiskNotSentAgain);
  CPPUNIT_TEST(testBeamFormedKeptWithinThePool);
  CPPUNIT_TEST(testOutputPathToStorage);
  CPPUNIT_TEST(testDumpRoundTrip);
  CPPUNIT_TEST(testOutputPathWithoutStorage);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testIntegrationSumsAndCounts() {
    Collector out;
    Integrator integrator(3, {150, 151}, 6, out.emit());
    // Blocks of two integrations of both subbands, out of order, as ranks return them.
    for (int64_t block : {2, 0, 4, 1, 5, 3})
      for (int sb : {1, 0}) {
        const BlockData data(block, sb);
        integrator.add(sb, block, kStations, kChannels, data.vis, data.valid);
      }
    std::lock_guard lock(out.mutex);
    CPPUNIT_ASSERT_EQUAL(size_t(4), out.items.size());
    for (const auto& d : out.items) {
      const int64_t first = d->integration * 3;
      const int sb = d->subband;  // the index (subbands 150, 151)
      for (size_t i = 0; i < kCells * 4; i += 7)
        CPPUNIT_ASSERT_EQUAL(std::complex<float>(3.0f * i + 3 * first + 3, 3.0f * sb),
                             d->visibilities[i]);
      for (size_t i = 0; i < kCells; ++i)
        CPPUNIT_ASSERT_EQUAL(uint32_t(30 + 3 * first + 3), d->validSamples[i]);
    }
    const auto s = integrator.statistics();
    CPPUNIT_ASSERT_EQUAL(uint64_t(12), s.blocks);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.incompleteIntegrations);
  }

  /// Integrations handed back (as the storage sender does once it has serialised them)
  /// are filled again: their stale sums must not leak into the next integration.
  void testRecycledIntegrationsSumAfresh() {
    std::vector<std::unique_ptr<CorrelatedData>> sent;
    Integrator* self = nullptr;
    Integrator integrator(2, {150}, -1, [&](std::unique_ptr<CorrelatedData> d) {
      auto copy = std::make_unique<CorrelatedData>(d->nrStations, d->nrChannels);
      copy->integration = d->integration;
      std::copy(d->visibilities.begin(), d->visibilities.end(), copy->visibilities.begin());
      std::copy(d->validSamples.begin(), d->validSamples.end(), copy->validSamples.begin());
      sent.push_back(std::move(copy));
      self->recycle(std::move(d));
    });
    self = &integrator;
    for (int64_t block = 0; block < 6; ++block) {
      const BlockData data(block, 0);
      integrator.add(0, block, kStations, kChannels, data.vis, data.valid);
    }
    CPPUNIT_ASSERT_EQUAL(size_t(3), sent.size());
    for (const auto& d : sent) {
      const int64_t first = d->integration * 2;
      for (size_t i = 0; i < kCells * 4; i += 5)
        CPPUNIT_ASSERT_EQUAL(std::complex<float>(2.0f * i + 2 * first + 1, 0), d->visibilities[i]);
      for (size_t i = 0; i < kCells; ++i)
        CPPUNIT_ASSERT_EQUAL(uint32_t(20 + 2 * first + 1), d->validSamples[i]);
    }
  }

  /// The sender hands every integration it serialised to Options::recycle, and serialises
  /// into the buffers of integrations already acknowledged.
  void testSenderRecyclesWhatItSerialised() {
    TestSink sink;
    std::atomic<int> recycled{0};
    StorageSender::Options options;
    options.handshake = testHandshake();
    options.recycle = [&](std::unique_ptr<CorrelatedData> d) { recycled += d != nullptr; };
    StorageSender writer(42, {{300, {"127.0.0.1", sink.port()}}}, options);
    for (int64_t i = 0; i < 20; ++i) {
      writer.write(integration(300, i));
      CPPUNIT_ASSERT(sink.waitForTotal(size_t(i + 1)));
    }
    CPPUNIT_ASSERT(writer.finish(10));
    CPPUNIT_ASSERT_EQUAL(0, sink.bad());
    CPPUNIT_ASSERT_EQUAL(20, recycled.load());
    // One at a time, each acknowledged before the next: all but the first few reuse.
    CPPUNIT_ASSERT(writer.statistics().recycledBuffers >= 15);
  }

  void testIncompleteAndLateBlocks() {
    Collector out;
    Integrator integrator(2, {150}, -1, out.emit(), 2);
    auto add = [&](int64_t block) {
      const BlockData data(block, 0);
      integrator.add(0, block, kStations, kChannels, data.vis, data.valid);
    };
    add(0);  // integration 0 lacks block 1 (a rank died)
    add(0);  // a duplicate: ignored
    add(2);
    add(3);  // integration 1 complete
    CPPUNIT_ASSERT_EQUAL(size_t(1), out.items.size());
    add(4);  // integration 2 opens: integration 0 (2 behind) goes out incomplete
    CPPUNIT_ASSERT_EQUAL(size_t(2), out.items.size());
    CPPUNIT_ASSERT_EQUAL(int64_t(0), out.items[1]->integration);
    CPPUNIT_ASSERT_EQUAL(uint32_t(10), out.items[1]->validSamples[0]);  // one block's count
    add(1);              // too late for integration 0
    integrator.flush();  // integration 2, incomplete
    CPPUNIT_ASSERT_EQUAL(size_t(3), out.items.size());
    const auto s = integrator.statistics();
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), s.duplicates);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), s.late);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), s.incompleteIntegrations);
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), s.integrations);
  }

  void testBadBlocksRejected() {
    Collector out;
    Integrator integrator(2, {150}, 4, out.emit());
    const BlockData data(0, 0);
    CPPUNIT_ASSERT_THROW(integrator.add(1, 0, kStations, kChannels, data.vis, data.valid),
                         std::invalid_argument);
    CPPUNIT_ASSERT_THROW(integrator.add(0, 4, kStations, kChannels, data.vis, data.valid),
                         std::invalid_argument);
    CPPUNIT_ASSERT_THROW(integrator.add(0, 0, kStations + 1, kChannels, data.vis, data.valid),
                         std::invalid_argument);
    integrator.add(0, 0, kStations, kChannels, data.vis, data.valid);
    const std::vector<std::complex<float>> otherVis(size_t(nrBaselines(3)) * kChannels * 4);
    const std::vector<uint32_t> otherValid(size_t(nrBaselines(3)) * kChannels);
    CPPUNIT_ASSERT_THROW(integrator.add(0, 1, 3, kChannels, otherVis, otherValid),
                         std::invalid_argument);
  }

  void testDestinations() {
    ObservationSettings s;
    s.subbands = {{0, 100, 0, 0}, {1, 101, 0, 0}, {2, 102, 0, 0}};
    s.correlatedOutput.hosts = {"store1", "store2"};
    s.correlatedOutput.storagePort = 4321;
    const auto d = StorageSender::destinations(s);
    // Keyed by subband index (the blocks' subband field), not by number.
    CPPUNIT_ASSERT_EQUAL(std::string("store1"), d.at(0).host);
    CPPUNIT_ASSERT_EQUAL(std::string("store2"), d.at(2).host);  // the last one for the rest
    CPPUNIT_ASSERT_EQUAL(uint16_t(4321), d.at(1).port);
    // One connection per host, bounded by the subbands it carries (IntegrationSendPool.h):
    // the pool groups the subbands as the sender does.
    s.correlatedOutput.enabled = true;
    const IntegrationSendPool pool = integrationSendPool(s, 3, 0);
    CPPUNIT_ASSERT_EQUAL(size_t(2), pool.connections.size());
    std::map<std::string, size_t> carried;
    for (const auto& [subband, destination] : d) ++carried[destination.host];
    for (const auto& [host, connection] : pool.connections)
      CPPUNIT_ASSERT_EQUAL(carried.at(host), connection.subbands);
    CPPUNIT_ASSERT_EQUAL(size_t(3), pool.connections.at("store1").queueIntegrations);
    CPPUNIT_ASSERT_EQUAL(size_t(2 * 2), pool.connections.at("store2").queueIntegrations);
  }

  void testSinkRestart() {
    TestSink sink;
    const uint16_t port = sink.port();
    StorageSender::Options options = quickRetryOptions();
    options.queueCapacity = 6;
    StorageSender writer(42, {{300, {"127.0.0.1", port}}, {301, {"127.0.0.1", port}}}, options);
    int64_t next = 0;
    for (; next < 5; ++next) {
      for (int sb : {300, 301}) writer.write(integration(sb, next));
      CPPUNIT_ASSERT(sink.waitForTotal(size_t(2 * next + 2)));
    }

    sink.stop();  // storage goes down: 6 integrations wait, 2 more overflow
    for (; next < 9; ++next)
      for (int sb : {300, 301}) writer.write(integration(sb, next));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));  // retries fail meanwhile
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), writer.statistics().dropped);
    CPPUNIT_ASSERT_EQUAL(size_t(10), sink.total());

    sink.start(port);  // storage is back
    CPPUNIT_ASSERT(writer.finish(10));
    CPPUNIT_ASSERT(sink.waitForTotal(16));
    const auto received = sink.received();
    CPPUNIT_ASSERT_EQUAL(0, sink.bad());
    CPPUNIT_ASSERT_EQUAL(size_t(16), received.size());
    for (const auto& [key, count] : received) CPPUNIT_ASSERT_EQUAL(1, count);  // none twice
    for (int64_t i = 0; i < 8; ++i)
      for (int sb : {300, 301}) CPPUNIT_ASSERT(received.count({sb, i}));  // the first 16 written
    const auto s = writer.statistics();
    CPPUNIT_ASSERT_EQUAL(uint64_t(16), s.sent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), s.dropped);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), s.connects);
  }

  /// A connection without beam-formed files (their queue bound 0, as OutputPath sets it for
  /// such an observation) sends the integrations it spooled while the sink was away.
  void testSpooledIntegrationsSentWithoutBeamFormedQueue() {
    TestSink sink;
    const uint16_t port = sink.port();
    StorageSender::Options options = quickRetryOptions();
    options.queueCapacity = 2;
    options.beamFormedQueueCapacity = 0;
    options.spoolBytes = 1 << 20;
    options.spoolDirectory = std::filesystem::temp_directory_path().string();
    StorageSender writer(42, {{300, {"127.0.0.1", port}}}, options);
    writer.write(integration(300, 0));
    CPPUNIT_ASSERT(sink.waitForTotal(1));
    sink.stop();
    for (int64_t i = 1; i < 8; ++i) writer.write(integration(300, i));  // 2 queued, 5 spooled
    std::this_thread::sleep_for(std::chrono::milliseconds(150));        // retries fail meanwhile
    sink.start(port);
    CPPUNIT_ASSERT(writer.finish(10));
    CPPUNIT_ASSERT(sink.waitForTotal(8));
    const auto s = writer.statistics();
    CPPUNIT_ASSERT(s.spooled >= 5);
    CPPUNIT_ASSERT_EQUAL(uint64_t(8), s.sent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.dropped);
    for (int64_t i = 0; i < 8; ++i) CPPUNIT_ASSERT(sink.received().count({300, i}));
  }

  /// Beam-formed blocks take the integrations' way: a sink that goes away leaves them in
  /// the queue and then the spool; what it had taken in but not said was on its disk is
  /// sent again to the sink that comes back, in order, and nothing is dropped.
  void testBeamFormedSpooledAndSentAgain() {
    TestSink sink;
    const auto s = sendBeamFormedAcrossARestart(sink);
    CPPUNIT_ASSERT(sink.waitForBeamFormed(8 + 3));  // acknowledged by TCP; read by the sink now
    const auto received = sink.beamFormedReceived();
    CPPUNIT_ASSERT_EQUAL(0, sink.bad());
    for (int64_t b = 0; b < 8; ++b)  // the three before the outage twice: never said on disk
      CPPUNIT_ASSERT_EQUAL(b < 3 ? 2 : 1, received.count({0, b}) ? received.at({0, b}) : 0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(8), s.beamFormed.queued);
    CPPUNIT_ASSERT(s.beamFormed.spooled >= 3);  // beyond its queue of 2 while the sink was away
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), s.beamFormed.resent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(8), s.beamFormed.sent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.beamFormed.dropped);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.beamFormed.unprotected);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.queued);  // the integrations' counters: none
  }

  /// ... and what the sink said was in its files (a DurableReply of kind beam-formed) is
  /// forgotten, not sent again.
  void testBeamFormedOnDiskNotSentAgain() {
    TestSink sink;
    sink.replyDurable = true;
    const auto s = sendBeamFormedAcrossARestart(sink);
    CPPUNIT_ASSERT(sink.waitForBeamFormed(8));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // none more comes
    const auto received = sink.beamFormedReceived();
    for (int64_t b = 0; b < 8; ++b) CPPUNIT_ASSERT_EQUAL(1, received.at({0, b}));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.beamFormed.resent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(8), s.beamFormed.sent);
    CPPUNIT_ASSERT(s.beamFormed.durable >= 3);  // those before the outage at least
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.beamFormed.dropped);
  }

  /// Blocks kept to send again stay within the pool's share (beamFormedKeptCapacity): the
  /// oldest beyond it is forgotten, counted unprotected, none is serialised into the heap,
  /// and a sink that comes back gets the kept ones again.
  void testBeamFormedKeptWithinThePool() {
    TestSink sink;
    const uint16_t port = sink.port();
    StorageSender::Options options = quickRetryOptions();
    options.beamFormedQueueCapacity = 8;
    options.beamFormedKeptCapacity = 3;
    options.beamFormedBytes = kBeamFormedHeaderSize + 2 * 32 * sizeof(float);
    options.retainBytes = 1 << 20;
    StorageSender sender(42, {}, options, {{"127.0.0.1", port}});
    for (int64_t b = 0; b < 8; ++b) {
      writeBeamFormedBlock(sender, b);
      CPPUNIT_ASSERT(sink.waitForBeamFormed(size_t(b + 1)));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // acknowledged by TCP, kept
    sink.stop();
    sink.start(port);
    writeBeamFormedBlock(sender, 8);  // finds the connection gone: the kept ones go again first
    CPPUNIT_ASSERT(sender.finish(10));
    CPPUNIT_ASSERT(sink.waitForBeamFormed(9 + 3));
    const auto received = sink.beamFormedReceived();
    for (int64_t b = 0; b < 9; ++b)  // the three kept last twice, the rest once
      CPPUNIT_ASSERT_EQUAL(b >= 5 && b < 8 ? 2 : 1, received.at({0, b}));
    const auto s = sender.statistics();
    // Blocks 0-4 forgotten as 5-7 were kept, and 5 again once 8 was kept after them.
    CPPUNIT_ASSERT_EQUAL(uint64_t(6), s.beamFormed.unprotected);
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), s.beamFormed.resent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(9), s.beamFormed.sent);
    CPPUNIT_ASSERT_EQUAL(uint64_t(8 + 3 + BeamFormedSendPool::kSpareSlots), s.beamFormedPoolSlots);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), s.beamFormedPoolOverflowed);
  }

  /// A replay (waitWhenFull) whose storage-sink comes up late loses nothing: write()
  /// holds the producer back until there is room.
  void testReplayWaitsForLateSink() {
    TestSink sink;
    const uint16_t port = sink.port();
    sink.stop();
    StorageSender::Options options = quickRetryOptions();
    options.queueCapacity = 3;
    options.maxRetrySeconds = 0.05;
    options.waitWhenFull = true;
    StorageSender writer(42, {{300, {"127.0.0.1", port}}}, options);
    std::atomic<int> written{0};
    std::thread producer([&] {
      for (int64_t i = 0; i < 10; ++i, ++written) writer.write(integration(300, i));
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CPPUNIT_ASSERT_EQUAL(3, written.load());  // held back, not dropped
    sink.start(port);
    producer.join();
    CPPUNIT_ASSERT(writer.finish(10));
    CPPUNIT_ASSERT(sink.waitForTotal(10));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), writer.statistics().dropped);
    CPPUNIT_ASSERT_EQUAL(0, sink.bad());
  }

  /// Blocks in, integrations out to storage-sink.
  void testOutputPathToStorage() {
    TestSink sink;
    const ObservationSettings settings = twoSubbands(sink.port());
    OutputPathOptions options;
    options.secret = testSecret();
    {
      OutputPath path(settings, options);
      CPPUNIT_ASSERT(path.storage());
      addFourBlocks(path);
      CPPUNIT_ASSERT(path.finish());
      CPPUNIT_ASSERT_EQUAL(uint64_t(4), path.integrator().statistics().integrations);
      CPPUNIT_ASSERT_EQUAL(size_t(3), path.summary().size());  // integration, storage, steps
      CPPUNIT_ASSERT_EQUAL(uint64_t(8), path.stepTimes().calls(OutputPath::kIntegrate));
      CPPUNIT_ASSERT_EQUAL(uint64_t(4), path.stepTimes().calls(OutputPath::kQueueForStorage));
    }
    CPPUNIT_ASSERT(sink.waitForTotal(4));
    CPPUNIT_ASSERT_EQUAL(0, sink.bad());
    const auto received = sink.received();
    for (int sb : {0, 1})  // subband indices (subbands 300, 301)
      for (int64_t i = 0; i < 2; ++i) CPPUNIT_ASSERT_EQUAL(1, received.at(std::make_pair(sb, i)));
  }

  /// The tests' dump file (output/test/DumpFile.h): integrations written are read back.
  void testDumpRoundTrip() {
    const ObservationSettings settings = twoSubbands(1);
    const std::string dump = tempPath("dump.vis");
    {
      rtcp::ion::test::DumpWriter writer(dump, settings.observationId);
      Integrator integrator(settings, [&](std::unique_ptr<CorrelatedData> integration) {
        writer.write(*integration);
      });
      addFourBlocks(integrator);
      integrator.flush();
      CPPUNIT_ASSERT_EQUAL(uint64_t(4), writer.written());
    }
    const std::vector<CorrelatedData> dumped = rtcp::ion::test::readDump(dump);
    CPPUNIT_ASSERT_EQUAL(size_t(4), dumped.size());
    for (const CorrelatedData& d : dumped) {
      // Blocks 2i and 2i + 1 add up: visibility k = (2k + 4i + 1, 2 (subband index)).
      const int64_t first = 2 * d.integration;
      const float index = float(d.subband);
      for (size_t k = 0; k < d.visibilities.size(); k += 7)
        CPPUNIT_ASSERT_EQUAL(std::complex<float>(float(2 * k + 2 * first + 1), 2 * index),
                             d.visibilities[k]);
      CPPUNIT_ASSERT_EQUAL(uint32_t(20 + 2 * first + 1), d.validSamples[0]);
    }
    std::filesystem::remove(dump);
  }

  /// toStorage = false (ionproc --no-output): integrates, sends nothing.
  void testOutputPathWithoutStorage() {
    const ObservationSettings settings = twoSubbands(1);
    OutputPathOptions options;
    options.secret = testSecret();
    options.toStorage = false;
    OutputPath path(settings, options);
    CPPUNIT_ASSERT(!path.storage());
    for (int64_t block = 0; block < 2; ++block) {
      const BlockData d(block, 0);
      path.add(0, block, kStations, kChannels, d.vis, d.valid);
    }
    CPPUNIT_ASSERT(path.finish());
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), path.integrator().statistics().integrations);
    CPPUNIT_ASSERT_EQUAL(size_t(2), path.summary().size());  // integration, steps
  }

 private:
  /// Observation 42 of subbands 300 and 301, two blocks per integration, storage on port.
  /// Blocks 0..3 of subband indices 0 and 1, last block first.
  static void addFourBlocks(VisibilitySink& sink) {
    for (int64_t block = 3; block >= 0; --block)  // any order
      for (int sb : {0, 1}) {
        const BlockData d(block, sb);
        sink.add(sb, block, kStations, kChannels, d.vis, d.valid);
      }
  }

  static ObservationSettings twoSubbands(uint16_t port) {
    ObservationSettings s;
    s.observationId = 42;
    s.startTime = 1.8e9;
    s.stopTime = s.startTime + 10;
    s.channelsPerSubband = kChannels;
    s.blocksPerIntegration = 2;
    s.stations.resize(kStations);
    s.subbands = {{0, 300, 0, 58.6e6}, {1, 301, 0, 58.8e6}};
    s.correlatedOutput.hosts = {"127.0.0.1"};
    s.correlatedOutput.storagePort = port;
    return s;
  }
  static std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() /
            ("rtcp-output-" + std::to_string(getpid()) + "-" + name))
        .string();
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(OutputTest);
