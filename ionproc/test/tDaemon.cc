// The plug-in daemon: loading plug-ins, clear errors for ones that fail, forwarded
// functions with arrays in and out over the real link, and the correlator plug-in.
#include <cppunit/extensions/HelperMacros.h>

#include <atomic>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

#include "CorrelatorFunctions.h"
#include "Integrator.h"
#include "LinkServer.h"
#include "OutputPath.h"
#include "TestFunctions.h"
#include "daemon/CallService.h"
#include "daemon/PluginHost.h"
#include "rtcp/Baselines.h"
#include "rtcp/Handshake.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SharedMemory.h"

using namespace rtcp;
using namespace rtcp::ion;

namespace {

/// The handshake both sides of the tests' links share.
const rtcp::Handshake& testHandshake() {
  static const rtcp::Handshake handshake(rtcp::ObservationSecret::generate(), 1,
                                         rtcp::ConnectionPurpose::kLink);
  return handshake;
}

/// ionproc's side in one object: plug-ins loaded, the call service on a link.
struct Daemon {
  FunctionRegistry functions;
  std::vector<std::function<std::string()>> summaries;
  PluginHost host;
  std::unique_ptr<CallService> calls;
  std::unique_ptr<LinkServer> server;
  Daemon(const std::string& plugin, const ObservationSettings* settings = nullptr,
         BlockSource* blocks = nullptr, VisibilitySink* sink = nullptr)
      : host(PluginContext{functions, settings, blocks, sink, &summaries}) {
    host.load(plugin);
    calls = std::make_unique<CallService>(functions);
    server = std::make_unique<LinkServer>(LinkEndpoint::parse("tcp:127.0.0.1:0"), *calls,
                                          testHandshake());
  }
  ~Daemon() { server->stop(); }
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// A compute rank's fetch of a StationBlock (as LinkFetcher does it), into a new block.
std::unique_ptr<StationBlock> fetchStationBlock(LinkClient& client, int64_t block, int station,
                                                int firstSubband, int nrSubbands, int nrSamples,
                                                int bitsPerSample) {
  auto result = std::make_unique<StationBlock>(nrSubbands, nrSamples, bitsPerSample);
  std::span<uint8_t> samples = result->samples.span();
  std::span<uint64_t> valid = result->valid.span();
  std::span<SubbandDelay> delays = result->delays.span();
  serveStationBlock.call(client, block, station, firstSubband, nrSubbands, result->header, samples,
                         valid, delays);
  if (samples.size() != result->samples.size() || valid.size() != result->valid.size() ||
      delays.size() != result->delays.size())
    throw LinkError("serveStationBlock: block " + std::to_string(block) + " of station " +
                    std::to_string(station) + " came back with a different shape");
  return result;
}

/// A stand-in for the station input: block samples from a formula, every other sample
/// valid, or flagged by ionproc for blocks listed as gone.
class PatternBlocks : public BlockSource {
 public:
  explicit PatternBlocks(const ObservationSettings& s) : settings_(s) {}
  std::atomic<int> requests{0};
  int64_t goneBlock = -1;
  static uint8_t value(int64_t block, int station, int subband, size_t byte) {
    return uint8_t(block * 31 + station * 7 + subband * 3 + byte);
  }
  std::vector<int> stations() const override {
    std::vector<int> all(size_t(settings_.nrStations()));
    for (size_t i = 0; i < all.size(); ++i) all[i] = int(i);
    return all;
  }
  void serveInto(StationBlock& out, int64_t block, int station, int first, int n) override {
    std::unique_ptr<StationBlock> made = makeBlock(block, station, first, n);
    if (out.samples.owned()) {
      out = std::move(*made);
      return;
    }
    // A slot of the shared-memory link, already of this shape: filled in place, as
    // StationInput fills it.
    out.header = made->header;
    std::memcpy(out.samples.data(), made->samples.data(), made->samples.size());
    std::memcpy(out.valid.data(), made->valid.data(), made->valid.size() * sizeof(uint64_t));
    std::memcpy(out.delays.data(), made->delays.data(), made->delays.size() * sizeof(SubbandDelay));
  }

 private:
  std::unique_ptr<StationBlock> makeBlock(int64_t block, int station, int first, int n) {
    ++requests;
    const int nrSamples = nrHistorySamples(settings_) + int(settings_.samplesPerBlock());
    auto b = std::make_unique<StationBlock>(n, nrSamples, settings_.bitsPerSample);
    b->header.block = block;
    b->header.station = station;
    b->header.firstSubband = first;
    for (int sb = 0; sb < n; ++sb)  // per subband, as toward different beams
      b->delays[size_t(sb)] = {station * 3 - 1 + sb, 0, 1e-9 * station, 2e-9 * (first + sb)};
    if (block == goneBlock) {
      b->header.flaggedByIonproc = 1;
      return b;
    }
    const size_t perSubband = b->samples.size() / n;
    for (int sb = 0; sb < n; ++sb) {
      for (size_t i = 0; i < perSubband; ++i)
        b->samples[sb * perSubband + i] = value(block, station, first + sb, i);
      for (int t = 0; t < nrSamples; t += 2) b->setValid(sb, t, true);
    }
    return b;
  }

  const ObservationSettings& settings_;
};

/// PatternBlocks that lend their rows in place from a shared "ring" of their own, as
/// StationInput with a shared ring does: each lease's rows written where its slot
/// number puts them; a block numbered kOutsideBlock lent with a row past the ring's end.
class RingPatternBlocks : public PatternBlocks {
 public:
  static constexpr int64_t kOutsideBlock = 99;
  static constexpr int kLeases = 16;
  explicit RingPatternBlocks(const ObservationSettings& s)
      : PatternBlocks(s),
        rowBytes_(size_t(nrHistorySamples(s) + s.samplesPerBlock()) *
                  bytesPerDualPolSample(s.bitsPerSample)),
        ring_(SharedMemory::create("rtcp-test-ring",
                                   size_t(kLeases) * size_t(s.nrSubbands()) * rowBytes_)) {}
  std::vector<uint64_t> ended;  ///< leases ended, in order

  const SharedMemoryName* sampleRing() const override { return &ring_.name(); }
  void lendInto(StationBlock& out, int64_t block, int station, int first, int n,
                uint64_t lease) override {
    StationBlock made(n, out.header.nrSamples, out.header.bitsPerSample);
    serveInto(made, block, station, first, n);
    out.header = made.header;
    out.header.rowsInRing = 1;
    std::memcpy(out.valid.data(), made.valid.data(), made.valid.size() * sizeof(uint64_t));
    std::memcpy(out.delays.data(), made.delays.data(), made.delays.size() * sizeof(SubbandDelay));
    for (int j = 0; j < n; ++j) {
      const size_t offset = (size_t(lease) * size_t(n) + size_t(j)) * rowBytes_;
      std::memcpy(ring_.payload() + offset, made.sample(j, 0), rowBytes_);
      out.rowOffsets[size_t(j)] = block == kOutsideBlock ? ring_.payloadBytes() : offset;
    }
  }
  void endLease(uint64_t lease) override { ended.push_back(lease); }

 private:
  size_t rowBytes_;
  SharedMemory ring_;
};

ObservationSettings smallObservation() {
  ObservationSettings s;
  s.observationId = 7;
  s.startTime = 1.8e9;
  s.stopTime = s.startTime + 1;
  s.channelsPerSubband = 16;
  s.spectraPerBlock = 4;
  s.blocksPerIntegration = 2;
  s.realTime = false;
  s.stations.resize(3);
  for (int i = 0; i < 3; ++i) s.stations[i].name = "CS00" + std::to_string(i + 1);
  s.subbands.resize(4);
  for (int i = 0; i < 4; ++i) s.subbands[i] = {i, 300 + i, 0, 0};
  return s;
}

/// The correlator plug-in over pattern blocks of the small observation, with a rank's
/// link to it: the set-up of the shared-memory tests.
struct PluginOnLink {
  ObservationSettings settings = smallObservation();
  PatternBlocks blocks{settings};
  Daemon daemon{RTCP_CORRELATOR_PLUGIN, &settings, &blocks};
  LinkClient client{daemon.server->endpoint(), 0, 0, testHandshake()};
  int nrSamples = nrHistorySamples(settings) + int(settings.samplesPerBlock());
};

}  // namespace

class DaemonTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DaemonTest);
  CPPUNIT_TEST(testMissingPlugin);
  CPPUNIT_TEST(testPluginWithoutEntryPoint);
  CPPUNIT_TEST(testForwardedArrays);
  CPPUNIT_TEST(testManyCoresCalling);
  CPPUNIT_TEST(testRemoteErrors);
  CPPUNIT_TEST(testCorrelatorPlugin);
  CPPUNIT_TEST(testSharedMemoryLink);
  CPPUNIT_TEST(testSharedSubbandLink);
  CPPUNIT_TEST(testRowsLentInTheRing);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testMissingPlugin() {
    FunctionRegistry functions;
    PluginHost host(PluginContext{functions});
    try {
      host.load("/nonexistent/librtcp_nothing.so");
      CPPUNIT_FAIL("loading a missing plug-in must throw");
    } catch (const LinkError& e) {
      CPPUNIT_ASSERT(contains(e.what(), "/nonexistent/librtcp_nothing.so"));
      CPPUNIT_ASSERT(contains(e.what(), "No such file"));  // dlerror()
    }
    // A file that is not a shared object.
    try {
      host.load(RTCP_TEST_SOURCE_DIR "/ionproc/test/TestFunctions.h");
      CPPUNIT_FAIL("loading a text file must throw");
    } catch (const LinkError& e) {
      CPPUNIT_ASSERT(contains(e.what(), "TestFunctions.h"));
      CPPUNIT_ASSERT(contains(e.what(), "invalid ELF header"));
    }
  }

  void testPluginWithoutEntryPoint() {
    FunctionRegistry functions;
    PluginHost host(PluginContext{functions});
    try {
      host.load(RTCP_TEST_PLUGIN_NOENTRY);
      CPPUNIT_FAIL("a plug-in without entry point must not load");
    } catch (const LinkError& e) {
      CPPUNIT_ASSERT(contains(e.what(), RTCP_TEST_PLUGIN_NOENTRY));
      CPPUNIT_ASSERT(contains(e.what(), "rtcp_plugin_register"));
    }
    CPPUNIT_ASSERT(functions.names().empty());
  }

  void testForwardedArrays() {
    Daemon daemon(RTCP_TEST_PLUGIN);
    CPPUNIT_ASSERT_EQUAL(size_t(2), daemon.functions.names().size());
    LinkClient client(daemon.server->endpoint(), 0, 0, testHandshake());
    std::vector<float> in(1001);
    for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.5f;
    std::vector<float> outStorage(4000, -1);
    std::span<float> out(outStorage.data() + 1, 3000);  // unaligned, more room than needed
    std::vector<int16_t> extra = {1, -2, 300, 7};
    int64_t count = 0;
    const double sum = test::scaleAndSum.call(client, 3, in, out, count, extra);
    CPPUNIT_ASSERT_EQUAL(306.0, sum);
    CPPUNIT_ASSERT_EQUAL(int64_t(1005), count);
    CPPUNIT_ASSERT_EQUAL(size_t(1001), out.size());  // shrunk to what came back
    for (size_t i = 0; i < in.size(); ++i) CPPUNIT_ASSERT_EQUAL(3 * in[i], out[i]);
    CPPUNIT_ASSERT_EQUAL(-1.0f, outStorage[1002]);  // nothing written beyond
    // Empty arrays, and an output array too small for the answer.
    std::span<float> none;
    CPPUNIT_ASSERT_EQUAL(0.0, test::scaleAndSum.call(client, 2, {}, none, count, {}));
    CPPUNIT_ASSERT_EQUAL(int64_t(0), count);
    std::span<float> small(outStorage.data(), 10);
    CPPUNIT_ASSERT_THROW(test::scaleAndSum.call(client, 1, in, small, count, extra), LinkError);
  }

  void testManyCoresCalling() {
    Daemon daemon(RTCP_TEST_PLUGIN);
    std::atomic<int> good{0};
    std::vector<std::thread> cores;
    for (int core = 0; core < 4; ++core)
      cores.emplace_back([&, core] {
        LinkClient client(daemon.server->endpoint(), 1, core, testHandshake());
        for (int call = 0; call < 25; ++call) {
          std::vector<float> in(1000 + call * 100 + core, float(core + 1));
          std::vector<float> outStorage(in.size());
          std::span<float> out(outStorage);
          int64_t count = 0;
          const int16_t extra[] = {int16_t(call)};
          const double sum = test::scaleAndSum.call(client, call, in, out, count, extra);
          bool ok = sum == call && count == int64_t(in.size() + 1) && out.size() == in.size();
          for (float v : out) ok = ok && v == float(call * (core + 1));
          good += ok;
        }
      });
    for (auto& t : cores) t.join();
    CPPUNIT_ASSERT_EQUAL(100, good.load());
    CPPUNIT_ASSERT_EQUAL(uint64_t(100), daemon.calls->calls());
  }

  void testRemoteErrors() {
    Daemon daemon(RTCP_TEST_PLUGIN);
    LinkClient client(daemon.server->endpoint(), 0, 0, testHandshake());
    try {
      test::failing.call(client, 7);
      CPPUNIT_FAIL("an exception on ionproc must reach the caller");
    } catch (const LinkError& e) {
      CPPUNIT_ASSERT(contains(e.what(), "failing"));
      CPPUNIT_ASSERT(contains(e.what(), "code 7"));
    }
    try {
      test::notServed.call(client, 1);
      CPPUNIT_FAIL("an unserved function must fail");
    } catch (const LinkError& e) {
      CPPUNIT_ASSERT(contains(e.what(), "no plug-in serves"));
    }
    // The connection still works.
    std::vector<float> in(3, 1.0f), outStorage(3);
    std::span<float> out(outStorage);
    int64_t count = 0;
    CPPUNIT_ASSERT_EQUAL(0.0, test::scaleAndSum.call(client, 2, in, out, count, {}));
    CPPUNIT_ASSERT_EQUAL(2.0f, out[2]);
  }

  void testCorrelatorPlugin() {
    const ObservationSettings settings = smallObservation();
    PatternBlocks blocks(settings);
    blocks.goneBlock = 3;
    std::vector<std::unique_ptr<CorrelatedData>> emitted;
    std::mutex mutex;
    Integrator integrator(settings, [&](std::unique_ptr<CorrelatedData> d) {
      std::lock_guard lock(mutex);
      emitted.push_back(std::move(d));
    });
    Daemon daemon(RTCP_CORRELATOR_PLUGIN, &settings, &blocks, &integrator);
    LinkClient client(daemon.server->endpoint(), 0, 1, testHandshake());
    const int nrSamples = nrHistorySamples(settings) + int(settings.samplesPerBlock());

    // Input: the block as the source made it, samples, valid bits, header.
    auto block = fetchStationBlock(client, 2, 1, 1, 3, nrSamples, 16);
    CPPUNIT_ASSERT_EQUAL(int64_t(2), block->header.block);
    for (int sb = 0; sb < 3; ++sb) {
      CPPUNIT_ASSERT_EQUAL(2 + sb, block->delays[size_t(sb)].coarse);
      CPPUNIT_ASSERT_EQUAL(1e-9, block->delays[size_t(sb)].residualStart);
      CPPUNIT_ASSERT_EQUAL(2e-9 * (1 + sb), block->delays[size_t(sb)].residualEnd);
    }
    CPPUNIT_ASSERT_EQUAL(0, block->header.flaggedByIonproc);
    const size_t perSubband = block->samples.size() / 3;
    for (int sb = 0; sb < 3; ++sb)
      for (size_t i = 0; i < perSubband; i += 97)
        CPPUNIT_ASSERT_EQUAL(PatternBlocks::value(2, 1, 1 + sb, i),
                             block->samples[sb * perSubband + i]);
    CPPUNIT_ASSERT(block->isValid(2, 10) && !block->isValid(2, 11));
    // A block that left the buffer comes flagged, with no valid sample.
    auto gone = fetchStationBlock(client, 3, 0, 0, 4, nrSamples, 16);
    CPPUNIT_ASSERT_EQUAL(1, gone->header.flaggedByIonproc);
    for (uint64_t word : gone->valid) CPPUNIT_ASSERT_EQUAL(uint64_t(0), word);
    // Asking beyond the observation is an error that names the request.
    CPPUNIT_ASSERT_THROW(fetchStationBlock(client, 0, 5, 0, 1, nrSamples, 16), LinkError);

    // Output: two blocks of subband 2 add into integration 0.
    const int nrStations = 3, nrChannels = 16;
    const size_t cells = size_t(nrBaselines(nrStations)) * nrChannels;
    std::vector<std::complex<float>> vis(cells * 4);
    std::vector<uint32_t> valid(cells);
    for (int64_t b = 0; b < 2; ++b) {
      for (size_t i = 0; i < vis.size(); ++i) vis[i] = {float(i) + b, -float(b)};
      for (size_t i = 0; i < cells; ++i) valid[i] = uint32_t(100 + b);
      acceptVisibilities.call(client, 2, b, nrStations, nrChannels, vis, valid);
    }
    std::lock_guard lock(mutex);
    CPPUNIT_ASSERT_EQUAL(size_t(1), emitted.size());
    const CorrelatedData& d = *emitted[0];
    CPPUNIT_ASSERT_EQUAL(2, d.subband);  // the index of subband 302
    CPPUNIT_ASSERT_EQUAL(int64_t(0), d.integration);
    CPPUNIT_ASSERT_EQUAL(std::complex<float>(2 * 17.0f + 1, -1), d.visibilities[17]);
    CPPUNIT_ASSERT_EQUAL(uint32_t(201), d.validSamples[cells - 1]);
    CPPUNIT_ASSERT(contains(daemon.summaries.at(0)(), "1 served flagged"));
  }

  /// The shared-memory path: a lent block holds, in ionproc's segment mapped read-only
  /// here, exactly what the socket path sends; a lease ends with the holder's next request
  /// for that station or with returnStationBlocks, and a slot is reused only then.
  void testSharedMemoryLink() {
    PluginOnLink setUp;
    auto& [settings, blocks, daemon, client, nrSamples] = setUp;
    SharedSegmentInfo info;
    sharedBlockSegment.call(client, info);
    CPPUNIT_ASSERT_EQUAL(6, info.nrSlots);  // two per station
    SharedBlockMapping mapping(info);

    auto lend = [&](int64_t block, int station, int first, int n, int rank) {
      StationBlockHeader header;
      SharedBlockLocation location;
      lendStationBlock.call(setUp.client, block, station, first, n, rank, header, location);
      return std::pair{mapping.block(location, header), location.slot};
    };
    auto [lent, slot] = lend(1, 2, 1, 2, 0);
    auto sent = fetchStationBlock(client, 1, 2, 1, 2, nrSamples, 16);
    CPPUNIT_ASSERT_EQUAL(int64_t(1), lent.header.block);
    CPPUNIT_ASSERT_EQUAL(2, lent.header.station);
    CPPUNIT_ASSERT_EQUAL(2, lent.header.nrSubbands);
    CPPUNIT_ASSERT_EQUAL(sent->samples.size(), lent.samples.size());
    CPPUNIT_ASSERT(std::memcmp(sent->samples.data(), lent.samples.data(), lent.samples.size()) ==
                   0);
    CPPUNIT_ASSERT(std::equal(sent->valid.begin(), sent->valid.end(), lent.valid.begin()));
    CPPUNIT_ASSERT_EQUAL(sent->delays[1].coarse, lent.delays[1].coarse);
    CPPUNIT_ASSERT_EQUAL(sent->delays[1].residualEnd, lent.delays[1].residualEnd);

    // The same holder's next block of that station ends the first lease: the slot comes
    // back (a lease never ending would exhaust the six slots here).
    for (int64_t b = 0; b < 8; ++b) lend(b, 0, 0, 4, 0);
    // Six leases take every slot; returning rank 1's lets rank 2 have one.
    for (int station = 0; station < 3; ++station) {
      lend(2, station, 0, 4, 1);
      if (station > 0) lend(2, station, 0, 4, 0);
    }
    returnStationBlocks.call(client, 1);
    auto [later, laterSlot] = lend(3, 1, 0, 4, 2);
    CPPUNIT_ASSERT_EQUAL(int64_t(3), later.header.block);
    CPPUNIT_ASSERT(contains(daemon.summaries.at(0)(), "lent in shared memory"));
    // The rank's view is read-only; a block of another shape than the slot holds is refused.
    StationBlockHeader tooBig = later.header;
    tooBig.nrSubbands = 1000;
    CPPUNIT_ASSERT_THROW(
        mapping.block({laterSlot, 0, info.firstSlotOffset + info.slotBytes * size_t(laterSlot)},
                      tooBig),
        std::runtime_error);
    // Another segment's description (a wrong nonce) is refused when mapping.
    SharedSegmentInfo other = info;
    other.memory.nonce ^= 1;
    CPPUNIT_ASSERT_THROW(SharedBlockMapping{other}, std::runtime_error);
    (void)slot;
  }

  /// Ranks that take their own subbands of every station: the segment has the layout the
  /// first rank asked for, a rank holds one lease per lease number (its block sets in
  /// flight), each holding what the socket path sends, and a lease ends only with the
  /// same lease number's next request.
  void testSharedSubbandLink() {
    PluginOnLink setUp;
    auto& [settings, blocks, daemon, client, nrSamples] = setUp;
    SharedSegmentInfo info;
    sharedSubbandSegment.call(client, 3, 2, info);  // 3 slots of 2 subbands
    CPPUNIT_ASSERT_EQUAL(3, info.nrSlots);
    SharedBlockMapping mapping(info);
    // Another layout is refused, so is the whole-block segment; the same one is given again.
    CPPUNIT_ASSERT_THROW(sharedSubbandSegment.call(client, 4, 2, info), LinkError);
    CPPUNIT_ASSERT_THROW(sharedBlockSegment.call(client, info), LinkError);
    sharedSubbandSegment.call(client, 3, 2, info);
    SharedMemoryName ring;  // pattern blocks lend no ring: the slots hold the rows
    sharedSampleRing.call(client, ring);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), ring.bytes);

    auto lend = [&](int64_t block, int station, int first, int n, int rank, int lease) {
      StationBlockHeader header;
      SharedBlockLocation location;
      lendStationSubbands.call(setUp.client, block, station, first, n, rank, lease, header,
                               location);
      return std::pair{mapping.block(location, header), location.slot};
    };
    // Two blocks of one station held at once under leases 0 and 1, each as sent.
    auto [first, firstSlot] = lend(1, 2, 2, 2, 0, 0);
    auto [second, secondSlot] = lend(2, 2, 2, 2, 0, 1);
    CPPUNIT_ASSERT(firstSlot != secondSlot);
    for (const auto& [lent, block] : {std::pair{&first, 1}, std::pair{&second, 2}}) {
      auto sent = fetchStationBlock(client, block, 2, 2, 2, nrSamples, 16);
      CPPUNIT_ASSERT_EQUAL(int64_t(block), lent->header.block);
      CPPUNIT_ASSERT_EQUAL(2, lent->header.firstSubband);
      CPPUNIT_ASSERT_EQUAL(sent->samples.size(), lent->samples.size());
      CPPUNIT_ASSERT(
          std::memcmp(sent->samples.data(), lent->samples.data(), lent->samples.size()) == 0);
      CPPUNIT_ASSERT(std::equal(sent->valid.begin(), sent->valid.end(), lent->valid.begin()));
    }
    // Lease 0's next request ends its first lease (three slots would run out otherwise)
    // and lease 1's block stays where it was.
    for (int64_t b = 0; b < 6; ++b) lend(b, 1, 0, 2, 0, 0);
    CPPUNIT_ASSERT_EQUAL(int64_t(2), second.header.block);
    auto again = fetchStationBlock(client, 2, 2, 2, 2, nrSamples, 16);
    CPPUNIT_ASSERT(
        std::memcmp(again->samples.data(), second.samples.data(), second.samples.size()) == 0);
    // A lease number out of range is refused.
    CPPUNIT_ASSERT_THROW(lend(3, 0, 0, 2, 0, 4096), LinkError);
    CPPUNIT_ASSERT_THROW(lend(3, 0, 0, 2, 0, -1), LinkError);
  }

  /// A block source that lends rows in its ring: the slots hold row tables, the rank
  /// reads the rows through the ring it maps (what the socket path sends), a slot's lease
  /// ending ends the source's lease, and a row outside the ring is refused.
  void testRowsLentInTheRing() {
    ObservationSettings settings = smallObservation();
    RingPatternBlocks blocks(settings);
    Daemon daemon(RTCP_CORRELATOR_PLUGIN, &settings, &blocks);
    LinkClient client(daemon.server->endpoint(), 0, 0, testHandshake());
    const int nrSamples = nrHistorySamples(settings) + int(settings.samplesPerBlock());
    SharedSegmentInfo info;
    SharedMemoryName ringInfo;
    sharedSubbandSegment.call(client, 3, 2, info);
    // Slots of row tables only: a 2 MB page each, not a block's samples.
    CPPUNIT_ASSERT(info.slotBytes >= StationBlock::bytesOfRowTable(2, nrSamples));
    SharedBlockMapping mapping(info);
    sharedSampleRing.call(client, ringInfo);
    const SharedMemory ring = SharedMemory::openReadOnly(ringInfo);

    auto lend = [&](int64_t block, int station, int lease) {
      StationBlockHeader header;
      SharedBlockLocation location;
      lendStationSubbands.call(client, block, station, 1, 2, 0, lease, header, location);
      return std::pair{header, location};
    };
    const auto [header, location] = lend(1, 2, 0);
    CPPUNIT_ASSERT_EQUAL(1, header.rowsInRing);
    CPPUNIT_ASSERT_THROW(mapping.block(location, header), std::runtime_error);  // no ring
    const StationBlock lent = mapping.block(location, header, &ring);
    const auto sent = fetchStationBlock(client, 1, 2, 1, 2, nrSamples, 16);
    for (int j = 0; j < 2; ++j)
      CPPUNIT_ASSERT(std::memcmp(lent.sample(j, 0), sent->sample(j, 0),
                                 size_t(nrSamples) * bytesPerDualPolSample(16)) == 0);
    CPPUNIT_ASSERT(std::equal(sent->valid.begin(), sent->valid.end(), lent.valid.begin()));
    CPPUNIT_ASSERT_EQUAL(sent->delays[1].coarse, lent.delays[1].coarse);
    // The same lease number again: the first slot's lease ends at the source too.
    CPPUNIT_ASSERT(blocks.ended.empty());
    lend(2, 2, 0);
    CPPUNIT_ASSERT_EQUAL(size_t(1), blocks.ended.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(location.slot), blocks.ended[0]);
    // A row table pointing past the ring's end is refused, not read.
    const auto [bad, badLocation] = lend(RingPatternBlocks::kOutsideBlock, 1, 1);
    CPPUNIT_ASSERT_THROW(mapping.block(badLocation, bad, &ring), std::runtime_error);
    returnStationBlocks.call(client, 0);
    CPPUNIT_ASSERT_EQUAL(size_t(3), blocks.ended.size());
  }
};

/// Calls a hostile or broken peer may make: sizes and indices from the link are checked
/// against the observation before anything is allocated or computed with.
class DaemonFaultsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DaemonFaultsTest);
  CPPUNIT_TEST(testHugeCallIsRefusedBeforeAllocating);
  CPPUNIT_TEST(testOutOfRangeArgumentsAreErrors);
  CPPUNIT_TEST(testBeamFormedCallsAreBoundedAndChecked);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// One 28-byte request offering 4 GiB once made ionproc allocate and zero 4 GiB.
  void testHugeCallIsRefusedBeforeAllocating() {
    const ObservationSettings settings = smallObservation();
    PatternBlocks blocks(settings);
    Integrator integrator(settings, [](std::unique_ptr<CorrelatedData>) {});
    Daemon daemon(RTCP_CORRELATOR_PLUGIN, &settings, &blocks, &integrator);
    const uint64_t limit = visibilityCallBytes(3, 16);
    CPPUNIT_ASSERT_EQUAL(uint64_t(6 * 16 * 4 * 8 + 6 * 16 * 4), limit);
    for (const auto& [id, size] : {std::pair{acceptVisibilities.id(), uint64_t(1) << 32},
                                   std::pair{acceptVisibilities.id(), limit + 1},
                                   std::pair{serveStationBlock.id(), uint64_t(1)}}) {
      LinkClient client(daemon.server->endpoint(), 0, 1, testHandshake());
      std::vector<uint8_t> head(sizeof id);
      std::memcpy(head.data(), &id, sizeof id);
      try {
        // Refused at the request: the (absent) bulk is never sent.
        client.write(head, nullptr, size_t(size));
        CPPUNIT_FAIL("a call beyond its bound must be refused");
      } catch (const LinkError& e) {
        CPPUNIT_ASSERT_MESSAGE(e.what(), contains(e.what(), "exceed the limit of "));
      }
    }
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), daemon.calls->failures());
    // The daemon serves on: a call of the observation's size goes through.
    LinkClient client(daemon.server->endpoint(), 0, 1, testHandshake());
    const size_t cells = size_t(nrBaselines(3)) * 16;
    std::vector<std::complex<float>> vis(cells * 4);
    std::vector<uint32_t> valid(cells);
    acceptVisibilities.call(client, 0, 0, 3, 16, vis, valid);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), daemon.calls->calls());
  }

  /// Arguments whose arithmetic overflowed int (the fuzzer's finds): errors naming them.
  void testOutOfRangeArgumentsAreErrors() {
    const ObservationSettings settings = smallObservation();
    PatternBlocks blocks(settings);
    Integrator integrator(settings, [](std::unique_ptr<CorrelatedData>) {});
    Daemon daemon(RTCP_CORRELATOR_PLUGIN, &settings, &blocks, &integrator);
    LinkClient client(daemon.server->endpoint(), 0, 1, testHandshake());
    auto remoteError = [&](auto call) {
      try {
        call();
      } catch (const LinkError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    const std::string first =
        remoteError([&] { fetchStationBlock(client, 0, 0, INT32_MAX - 1, 5, 16, 16); });
    CPPUNIT_ASSERT_MESSAGE(first, contains(first, "subbands 2147483646+5"));
    std::vector<std::complex<float>> none;
    std::vector<uint32_t> noCounts;
    const std::string stations =
        remoteError([&] { acceptVisibilities.call(client, 0, 0, INT32_MAX, 16, none, noCounts); });
    CPPUNIT_ASSERT_MESSAGE(stations, contains(stations, "2147483647 stations"));
    // The integrator alone checks the shape before computing with it.
    CPPUNIT_ASSERT_THROW(integrator.add(0, 0, INT32_MAX, INT32_MAX, none, noCounts),
                         std::invalid_argument);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), integrator.statistics().blocks);
    // A segment layout beyond 8 blocks of the observation is refused before mapping it.
    SharedSegmentInfo info;
    const std::string layout =
        remoteError([&] { sharedSubbandSegment.call(client, INT32_MAX, 4, info); });
    CPPUNIT_ASSERT_MESSAGE(layout, contains(layout, "more than 8 blocks"));
  }

  /// acceptBeamFormed takes at most one TAB-subband-block of the parset's Stokes output
  /// (none without beam-formed output), and the output path checks its shape against the
  /// TAB's before anything is serialised.
  void testBeamFormedCallsAreBoundedAndChecked() {
    ObservationSettings settings = smallObservation();
    PatternBlocks blocks(settings);
    const auto refused = [](Daemon& daemon, uint64_t size) {
      LinkClient client(daemon.server->endpoint(), 0, 1, testHandshake());
      const uint32_t id = acceptBeamFormed.id();
      std::vector<uint8_t> head(sizeof id);
      std::memcpy(head.data(), &id, sizeof id);
      try {
        client.write(head, nullptr, size_t(size));
      } catch (const LinkError& e) {
        return contains(e.what(), "exceed the limit of ");
      }
      return false;
    };
    {
      Integrator integrator(settings, [](std::unique_ptr<CorrelatedData>) {});
      Daemon daemon(RTCP_CORRELATOR_PLUGIN, &settings, &blocks, &integrator);
      CPPUNIT_ASSERT(refused(daemon, 1));
    }
    // One coherent TAB of Stokes I, 4 channels: 64 samples a block make 16 output samples.
    BeamFormedSettings& bf = settings.beamFormed;
    bf.coherentEnabled = true;
    bf.coherent.nrChannels = 4;
    bf.saps.resize(1);
    bf.saps[0].nrManualTabs = 1;
    bf.saps[0].tabs.resize(1);
    bf.saps[0].tabs[0].files = {0};
    bf.files.push_back({0, 0, 0, 0, true, 0, 4, "L7_SAP000_B000_S0_P000_bf.h5", "", "."});
    OutputPathOptions options;
    options.toStorage = false;
    OutputPath output(settings, options);
    Daemon daemon(RTCP_CORRELATOR_PLUGIN, &settings, &blocks, &output);
    const uint64_t limit = beamFormedCallBytes(1, 4, 16);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2 * 256), limit);
    CPPUNIT_ASSERT(refused(daemon, limit + 1));

    LinkClient client(daemon.server->endpoint(), 0, 1, testHandshake());
    std::vector<float> samples(16 * 4, 1.0f), fractions(16 * 4, 1.0f);
    acceptBeamFormed.call(client, 2, 1, 0, samples, fractions);
    const auto remoteError = [&](int32_t subband, int64_t block, int32_t tab, size_t nrSamples) {
      std::vector<float> wrong(nrSamples);
      try {
        acceptBeamFormed.call(client, subband, block, tab, wrong, fractions);
      } catch (const LinkError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    const std::string shape = remoteError(2, 1, 0, 15 * 4);
    CPPUNIT_ASSERT_MESSAGE(shape, contains(shape, "not the parset's I x 16 samples x 4 channels"));
    const std::string tab = remoteError(2, 1, 1, 16 * 4);
    CPPUNIT_ASSERT_MESSAGE(tab, contains(tab, "TAB 1 of SAP 0: the parset has no such TAB"));
    const std::string block = remoteError(2, settings.nrBlocks(), 0, 16 * 4);
    CPPUNIT_ASSERT_MESSAGE(block, contains(block, "not the observation's"));
    std::string summary;
    for (const std::string& line : output.summary()) summary += line + "\n";
    CPPUNIT_ASSERT_MESSAGE(summary, contains(summary,
                                             "beam-formed: 1 TAB-subband-blocks received, "
                                             "1 not stored (no storage output)"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(DaemonTest);
CPPUNIT_TEST_SUITE_REGISTRATION(DaemonFaultsTest);
