// The correlator plug-in: serves compute ranks their stations' delayed blocks and takes
// their visibilities for integration and their beam-formed data for storage
// (CorrelatorFunctions.h).
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "CorrelatorFunctions.h"
#include "daemon/Plugin.h"
#include "rtcp/BufferPool.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"
#include "rtcp/StepTimes.h"

namespace rtcp::ion {
namespace {

struct CorrelatorPlugin {
  /// Served blocks' buffers are lent to the link and come back here once sent, so that
  /// serving allocates nothing per block.
  Recycler<StationBlock> pool;
  const ObservationSettings* settings = nullptr;
  double leaseWaitSeconds = 30;  ///< PluginContext::leaseWaitSeconds
  BlockSource* blocks = nullptr;
  VisibilitySink* visibilities = nullptr;
  std::atomic<uint64_t> served{0}, lent{0}, flagged{0}, correlated{0}, beamFormed{0};
  /// The shared-memory path's slots, made when a rank on this host first asks for them.
  std::mutex segmentMutex;
  std::unique_ptr<SharedBlockSegment> segment;
  std::pair<int, int> segmentLayout;  ///< its slots and subbands per slot
  /// Per call, on the link's threads: serving a block, waiting for the input included
  /// (integration is timed by the output path).
  StepTimes times{{"serve block"}};

  void check(int64_t block, int32_t station, int32_t first, int32_t n) const {
    if (!settings || !blocks) throw std::runtime_error("this ionproc has no station input");
    // first + n would overflow for a first near INT32_MAX: compared without the sum.
    if (station < 0 || station >= settings->nrStations() || first < 0 || n < 1 ||
        first >= settings->nrSubbands() || n > settings->nrSubbands() - first ||
        block < firstProcessedBlock(*settings) || block >= settings->nrBlocks())
      throw std::invalid_argument("no block " + std::to_string(block) + " of station " +
                                  std::to_string(station) + " subbands " + std::to_string(first) +
                                  "+" + std::to_string(n));
  }

  /// The input never waits for slow ranks: a block that left the buffer comes back
  /// flagged by ionproc (BlockSource::serveInto). With a lease, the rows stay in the
  /// source's ring, pinned until that lease ends (BlockSource::lendInto).
  void serveInto(StationBlock& out, int64_t block, int32_t station, int32_t first, int32_t n,
                 std::optional<uint64_t> lease = std::nullopt) {
    const auto start = StepTimes::Clock::now();
    if (lease)
      blocks->lendInto(out, block, station, first, n, *lease);
    else
      blocks->serveInto(out, block, station, first, n);
    times.lap(0, start);
    if (out.header.flaggedByIonproc) {
      ++flagged;
      static RateLimiter limiter(5);
      if (limiter.allow())
        RTCP_LOG_WARN("correlator-plugin", "compute ranks behind: block "
                                               << block << " of station " << station
                                               << " served flagged (" << flagged << " so far)");
    }
  }

  void serve(int64_t block, int32_t station, int32_t first, int32_t n, StationBlockHeader& header,
             OutArray<uint8_t>& samples, OutArray<uint64_t>& valid,
             OutArray<SubbandDelay>& delays) {
    check(block, station, first, n);
    // The input never waits for slow ranks: a block that left the buffer comes back
    // flagged by ionproc (BlockSource::serveInto).
    std::shared_ptr<StationBlock> result = pool.take();
    serveInto(*result, block, station, first, n);
    ++served;
    header = result->header;
    samples.lend(result->samples.span(), result);
    valid.lend(result->valid.span(), result);
    delays.lend(result->delays.span(), result);
  }

  SharedBlockSegment& sharedSegment() {
    if (!settings || !blocks) throw std::runtime_error("this ionproc has no station input");
    // Each station's block is lent to one rank at a time, and its lease ends when that
    // rank asks for the next one: a slot per station suffices; twice that lets a rank
    // ask ahead and a fetch with every subband always fits.
    return segmentOf(2 * settings->nrStations(), settings->nrSubbands());
  }

  /// For ranks that lend their own subbands of every station (lendStationSubbands). The
  /// sizes come from outside: at most 8 blocks of every station and subband in all.
  SharedBlockSegment& sharedSubbandSegment(int32_t nrSlots, int32_t subbandsPerSlot) {
    if (!settings || !blocks) throw std::runtime_error("this ionproc has no station input");
    if (subbandsPerSlot < 1 || subbandsPerSlot > settings->nrSubbands() || nrSlots < 1 ||
        int64_t(nrSlots) * subbandsPerSlot >
            8 * int64_t(settings->nrStations()) * settings->nrSubbands())
      throw std::invalid_argument("shared segment of " + std::to_string(nrSlots) + " slots of " +
                                  std::to_string(subbandsPerSlot) +
                                  " subbands: more than 8 blocks of the observation's " +
                                  std::to_string(settings->nrStations()) + " stations x " +
                                  std::to_string(settings->nrSubbands()) + " subbands");
    return segmentOf(nrSlots, subbandsPerSlot);
  }

  /// The segment, made at the first call with this layout; another layout is refused.
  SharedBlockSegment& segmentOf(int nrSlots, int subbandsPerSlot) {
    std::lock_guard lock(segmentMutex);
    if (!segment) {
      const int nrSamples = nrHistorySamples(*settings) + int(settings->samplesPerBlock());
      // Blocks lent from the sample ring hold their valid bits, delays and row offsets only.
      segment = std::make_unique<SharedBlockSegment>(
          nrSlots, blocks->sampleRing() ? StationBlock::bytesOfRowTable(subbandsPerSlot, nrSamples)
                                        : StationBlock::bytesInOnePiece(subbandsPerSlot, nrSamples,
                                                                        settings->bitsPerSample));
      // A slot's lease ends: so do the ring pins of the block it held (the slot number is
      // the lease's name for the block source).
      segment->onRelease([source = blocks](int slot) { source->endLease(uint64_t(slot)); });
      segmentLayout = {nrSlots, subbandsPerSlot};
      RTCP_LOG_INFO(
          "correlator-plugin",
          "shared-memory link: " << segment->info().memory.name << ", " << segment->info().nrSlots
                                 << " slots of " << segment->info().slotBytes / 1e6 << " MB ("
                                 << subbandsPerSlot << " subbands)"
                                 << (blocks->sampleRing() ? ", rows lent in the ring" : ""));
    } else if (segmentLayout != std::pair(nrSlots, subbandsPerSlot)) {
      throw std::invalid_argument(
          "shared segment of " + std::to_string(nrSlots) + " slots of " +
          std::to_string(subbandsPerSlot) + " subbands asked for; " + segment->info().memory.name +
          " has " + std::to_string(segmentLayout.first) + " of " +
          std::to_string(segmentLayout.second) + " (ranks started with different options?)");
    }
    return *segment;
  }

  /// The segment a rank asked for before lending (made once, never replaced).
  SharedBlockSegment& existingSegment() {
    std::lock_guard lock(segmentMutex);
    if (!segment) throw std::runtime_error("no shared segment: ask for one first");
    return *segment;
  }

  static constexpr int32_t kLeases = 4096;
  /// A lease's holder: the rank in the upper half (returnBlocks), lease and station below.
  static uint64_t holder(int32_t rank, int32_t station, int32_t lease) {
    return uint64_t(uint32_t(rank)) << 32 | uint64_t(uint32_t(lease)) << 20 | uint32_t(station);
  }

  void lend(int64_t block, int32_t station, int32_t first, int32_t n, int32_t rank, int32_t lease,
            StationBlockHeader& header, SharedBlockLocation& location) {
    check(block, station, first, n);
    if (rank < 0) throw std::invalid_argument("rank " + std::to_string(rank));
    if (lease < 0 || lease >= kLeases)
      throw std::invalid_argument("lease " + std::to_string(lease) + " (0.." +
                                  std::to_string(kLeases - 1) + ")");
    SharedBlockSegment& shared = existingSegment();
    const int nrSamples = nrHistorySamples(*settings) + int(settings->samplesPerBlock());
    location = shared.lease(holder(rank, station, lease), leaseWaitSeconds);
    try {  // a block too large for the slot or a failed serve ends the lease
      if (blocks->sampleRing()) {
        StationBlock slot = shared.rowTable(location.slot, n, nrSamples, settings->bitsPerSample);
        serveInto(slot, block, station, first, n, uint64_t(location.slot));
        header = slot.header;
      } else {
        StationBlock slot = shared.block(location.slot, n, nrSamples, settings->bitsPerSample);
        serveInto(slot, block, station, first, n);
        if (slot.samples.owned())  // the source replaced the slot's buffers: nothing is shared
          throw std::logic_error("the block source did not serve into the shared slot");
        header = slot.header;
      }
    } catch (...) {
      shared.release(~uint64_t(0), holder(rank, station, lease));
      throw;
    }
    ++lent;
  }

  /// The ring's segment; bytes = 0 when the source lends none.
  rtcp::SharedMemoryName sampleRing() const {
    const SharedMemoryName* ring = blocks ? blocks->sampleRing() : nullptr;
    return ring ? *ring : rtcp::SharedMemoryName{};
  }

  void returnBlocks(int32_t rank) {
    std::lock_guard lock(segmentMutex);
    if (segment) segment->release(~uint64_t(0) << 32, holder(rank, 0, 0));
  }

  void listStations(OutArray<int32_t>& out) const {
    const std::vector<int> stations = blocks ? blocks->stations() : std::vector<int>{};
    std::span<int32_t> list = out.allocate(stations.size());
    std::copy(stations.begin(), stations.end(), list.begin());
  }

  void accept(int32_t subband, int64_t block, int32_t nrStations, int32_t nrChannels,
              std::span<const std::complex<float>> data, std::span<const uint32_t> counts) {
    if (!visibilities) throw std::runtime_error("this ionproc has no output");
    if (settings && (nrStations < 1 || nrStations > settings->nrStations() ||
                     nrChannels != settings->channelsPerSubband))
      throw std::invalid_argument("visibilities of " + std::to_string(nrStations) + " stations x " +
                                  std::to_string(nrChannels) + " channels: the observation has " +
                                  std::to_string(settings->nrStations()) + " stations of " +
                                  std::to_string(settings->channelsPerSubband) + " channels");
    visibilities->add(subband, block, nrStations, nrChannels, data, counts);
    ++correlated;
  }

  void acceptBeamFormed(int32_t subband, int64_t block, int32_t tab, std::span<const float> samples,
                        std::span<const float> validFraction) {
    if (!visibilities) throw std::runtime_error("this ionproc has no output");
    visibilities->addBeamFormed(subband, block, tab, samples, validFraction);
    ++beamFormed;
  }

  std::string summary() const {
    return "correlator plug-in: " + std::to_string(served) +
           " station blocks served over the link, " + std::to_string(lent) +
           " lent in shared memory, " + std::to_string(flagged) +
           " served flagged because the ranks fell behind, " + std::to_string(correlated) +
           " correlated blocks and " + std::to_string(beamFormed) +
           " beam-formed TAB-blocks received; steps: " + times.report();
  }
};

/// No acceptBeamFormed call brings more than one TAB-subband-block of the observation's
/// largest Stokes output; without beam-formed output, none is taken.
uint64_t largestBeamFormedCall(const ObservationSettings* settings) {
  if (!settings) return UINT64_MAX;
  const BeamFormedSettings& bf = settings->beamFormed;
  uint64_t largest = 0;
  for (bool coherent : {true, false})
    if (coherent ? bf.coherentEnabled : bf.incoherentEnabled) {
      const StokesSettings& st = bf.stokes(coherent);
      largest = std::max(
          largest, beamFormedCallBytes(st.nrComponents(), st.nrChannels,
                                       st.outputSamplesPerBlock(settings->samplesPerBlock())));
    }
  return largest;
}

}  // namespace
}  // namespace rtcp::ion

RTCP_PLUGIN(context) {
  using namespace rtcp::ion;
  auto plugin = std::make_shared<CorrelatorPlugin>();
  plugin->settings = context.settings;
  plugin->blocks = context.blocks;
  plugin->visibilities = context.visibilities;
  plugin->leaseWaitSeconds = context.leaseWaitSeconds;
  context.functions.serve(
      serveStationBlock,
      [plugin](int64_t block, int32_t station, int32_t first, int32_t n,
               rtcp::StationBlockHeader& header, OutArray<uint8_t>& samples,
               OutArray<uint64_t>& valid, OutArray<rtcp::SubbandDelay>& delays) {
        plugin->serve(block, station, first, n, header, samples, valid, delays);
      },
      0);  // no input arrays
  context.functions.serve(
      sharedBlockSegment,
      [plugin](SharedSegmentInfo& info) { info = plugin->sharedSegment().info(); }, 0);
  context.functions.serve(
      lendStationBlock,
      [plugin](int64_t block, int32_t station, int32_t first, int32_t n, int32_t rank,
               rtcp::StationBlockHeader& header, SharedBlockLocation& location) {
        plugin->sharedSegment();  // made at the first call if no rank asked for it
        plugin->lend(block, station, first, n, rank, 0, header, location);
      },
      0);
  context.functions.serve(
      sharedSubbandSegment,
      [plugin](int32_t nrSlots, int32_t subbandsPerSlot, SharedSegmentInfo& info) {
        info = plugin->sharedSubbandSegment(nrSlots, subbandsPerSlot).info();
      },
      0);
  context.functions.serve(
      lendStationSubbands,
      [plugin](int64_t block, int32_t station, int32_t first, int32_t n, int32_t rank,
               int32_t lease, rtcp::StationBlockHeader& header, SharedBlockLocation& location) {
        plugin->lend(block, station, first, n, rank, lease, header, location);
      },
      0);
  context.functions.serve(
      sharedSampleRing, [plugin](rtcp::SharedMemoryName& ring) { ring = plugin->sampleRing(); }, 0);
  context.functions.serve(
      returnStationBlocks, [plugin](int32_t rank) { plugin->returnBlocks(rank); }, 0);
  context.functions.serve(
      servedStations, [plugin](OutArray<int32_t>& stations) { plugin->listStations(stations); }, 0);
  context.functions.serve(
      acceptVisibilities,
      [plugin](int32_t subband, int64_t block, int32_t nrStations, int32_t nrChannels,
               std::span<const std::complex<float>> data, std::span<const uint32_t> counts) {
        plugin->accept(subband, block, nrStations, nrChannels, data, counts);
      },
      // No call brings more than one block of the observation's visibilities.
      context.settings ? visibilityCallBytes(context.settings->nrStations(),
                                             context.settings->channelsPerSubband)
                       : UINT64_MAX);
  context.functions.serve(
      acceptBeamFormed,
      [plugin](int32_t subband, int64_t block, int32_t tab, std::span<const float> samples,
               std::span<const float> validFraction) {
        plugin->acceptBeamFormed(subband, block, tab, samples, validFraction);
      },
      largestBeamFormedCall(context.settings));
  if (context.summaries) context.summaries->push_back([plugin] { return plugin->summary(); });
}
