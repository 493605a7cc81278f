// libFuzzer target: the link's forwarded calls as ionproc's call service receives them
// (LinkServer's side: a request, the posted operation, its bulk), decoded and run on the
// correlator plug-in (loaded as ionproc loads it) with a real Integrator behind it. The
// input is a sequence of requests:
//   op (1 byte: odd = write, a call; even = read, its answer), head length (1 byte),
//   head bytes, offered size (8 bytes), then the bulk bytes a write brings.
// Checked: no crash, no undefined behaviour (the signed overflows in Integrator::add and
// CorrelatorPlugin::serve were found here), no allocation beyond what the observation
// needs (libFuzzer's -malloc_limit_mb; one request offering 4 GiB made ionproc allocate it).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "CorrelatorFunctions.h"
#include "FuzzCommon.h"
#include "Integrator.h"
#include "daemon/CallService.h"
#include "daemon/PluginHost.h"
#include "rtcp/ObservationSettings.h"

namespace {

using namespace rtcp;
using namespace rtcp::ion;

/// Blocks at once, all samples flagged: the plug-in's serving without a station input.
class FlaggedBlocks : public BlockSource {
 public:
  explicit FlaggedBlocks(const ObservationSettings& s) : settings_(s) {}
  std::vector<int> stations() const override { return {0, 1, 2}; }
  void serveInto(StationBlock& out, int64_t block, int station, int first, int n) override {
    const int nrSamples = nrHistorySamples(settings_) + int(settings_.samplesPerBlock());
    if (out.header.nrSubbands != n || out.header.nrSamples != nrSamples)
      out = StationBlock(n, nrSamples, settings_.bitsPerSample);
    out.header.block = block;
    out.header.station = station;
    out.header.firstSubband = first;
    out.header.flaggedByIonproc = 1;
  }

 private:
  const ObservationSettings& settings_;
};

struct Daemon {
  Daemon()
      : settings(ObservationSettings::fromText(
            "Observation.ObsID = 7\n"
            "Observation.startTime = '2026-11-22 20:00:00'\n"
            "Observation.stopTime = '2026-11-22 20:00:01'\n"
            "Observation.antennaSet = LBA_OUTER\n"
            "Observation.bandFilter = LBA_30_90\n"
            "Observation.VirtualInstrument.stationList = [CS001, CS002, CS003]\n"
            "PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]\n"
            "PIC.Core.CS002LBA.RSP.ports = [udp:127.0.0.1:10011]\n"
            "PIC.Core.CS003LBA.RSP.ports = [udp:127.0.0.1:10012]\n"
            "Observation.nrBeams = 1\n"
            "Observation.Beam[0].angle1 = 5.2336866848\n"
            "Observation.Beam[0].angle2 = 0.7109425145\n"
            "Observation.Beam[0].subbandList = [300..303]\n"
            "Cobalt.Correlator.nrChannelsPerSubband = 16\n"
            "Cobalt.blockSize = 16384\n"
            "Cobalt.Correlator.nrBlocksPerIntegration = 2\n"
            "Observation.DataProducts.Output_Correlated.enabled = F\n",
            "fuzz-link.parset", "/")),
        blocks(settings),
        integrator(settings, [](std::unique_ptr<CorrelatedData>) {}),
        // Slots held by earlier inputs' leases: fail at once, not after 30 s (a timeout).
        host(PluginContext{functions, &settings, &blocks, &integrator, nullptr, 0.0}) {
    host.load(RTCP_CORRELATOR_PLUGIN);
    calls = std::make_unique<CallService>(functions);
  }
  ObservationSettings settings;
  FlaggedBlocks blocks;
  Integrator integrator;
  FunctionRegistry functions;
  PluginHost host;
  std::unique_ptr<CallService> calls;
};

Daemon& daemon() {
  static Daemon d;
  return d;
}

/// Moves `agreed` bytes between the input and a posting's buffers, as the link does.
void transfer(const LinkPosting& posting, fuzz::Input& in, uint64_t agreed, bool write) {
  for (const iovec& part : posting.data) {
    const size_t n = size_t(std::min<uint64_t>(agreed, part.iov_len));
    if (n == 0) continue;
    if (write) {
      const auto bytes = in.takeBytes(n);
      if (!bytes.empty()) std::memcpy(part.iov_base, bytes.data(), bytes.size());
      std::memset(static_cast<uint8_t*>(part.iov_base) + bytes.size(), 0, n - bytes.size());
    } else {
      fuzz::consume(std::memchr(part.iov_base, 0x5a, n));
    }
    agreed -= n;
  }
}

/// Appends one request of the input format.
void appendRequest(std::vector<uint8_t>& out, bool write, std::span<const uint8_t> head,
                   uint64_t size, std::span<const uint8_t> bulk = {}) {
  out.push_back(write ? 1 : 2);
  out.push_back(uint8_t(head.size()));
  out.insert(out.end(), head.begin(), head.end());
  const auto* sizeBytes = reinterpret_cast<const uint8_t*>(&size);
  out.insert(out.end(), sizeBytes, sizeBytes + sizeof size);
  out.insert(out.end(), bulk.begin(), bulk.end());
}

/// The seed corpus (fuzz/corpus/fuzz_link_calls): each function called as a compute rank
/// calls it, its answer read, with the codec's own head layout. Written when
/// RTCP_FUZZ_WRITE_SEEDS names a directory.
void writeSeeds(const std::string& directory) {
  using forwarding::HeadWriter;
  auto save = [&](const std::string& name, const std::vector<uint8_t>& bytes) {
    std::FILE* f = std::fopen((directory + "/" + name).c_str(), "wb");
    if (!f) return;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  };
  auto answer = [&](std::vector<uint8_t>& out, uint32_t id, uint64_t capacity) {
    HeadWriter read;
    read.put(id);
    appendRequest(out, false, read.span(), capacity);
  };
  {
    std::vector<uint8_t> out;
    HeadWriter head;
    head.put(serveStationBlock.id());
    head.put(serveStationBlock.signature());
    head.put(int64_t(1));
    head.put(int32_t(2));
    head.put(int32_t(1));
    head.put(int32_t(3));
    const ObservationSettings& s = daemon().settings;
    const StationBlock shape(3, nrHistorySamples(s) + int(s.samplesPerBlock()), s.bitsPerSample);
    head.put(uint64_t(shape.samples.size()));
    head.put(uint64_t(shape.valid.size()));
    head.put(uint64_t(shape.delays.size()));
    appendRequest(out, true, head.span(), 0);
    answer(out, serveStationBlock.id(),
           forwarding::padded(shape.samples.size()) +
               forwarding::padded(shape.valid.size() * sizeof(uint64_t)) +
               forwarding::padded(shape.delays.size() * sizeof(SubbandDelay)));
    save("serve-station-block", out);
  }
  {
    std::vector<uint8_t> out;
    HeadWriter head;
    head.put(servedStations.id());
    head.put(servedStations.signature());
    head.put(uint64_t(8));
    appendRequest(out, true, head.span(), 0);
    answer(out, servedStations.id(), 64);
    save("served-stations", out);
  }
  for (int blocks = 1; blocks <= 2; ++blocks) {
    std::vector<uint8_t> out;
    const uint64_t cells = 6 * 16;
    for (int b = 0; b < blocks; ++b) {
      HeadWriter head;
      head.put(acceptVisibilities.id());
      head.put(acceptVisibilities.signature());
      head.put(int32_t(2));
      head.put(int64_t(b));
      head.put(int32_t(3));
      head.put(int32_t(16));
      head.put(uint64_t(cells * 4));
      head.put(uint64_t(cells));
      const uint64_t size = visibilityCallBytes(3, 16);
      std::vector<uint8_t> bulk(size, uint8_t(b + 1));
      appendRequest(out, true, head.span(), size, bulk);
      answer(out, acceptVisibilities.id(), 0);
    }
    save("accept-visibilities-" + std::to_string(blocks), out);
  }
  // The shared-memory path: a segment, blocks lent under leases, the leases returned.
  auto call = [&](std::vector<uint8_t>& out, uint32_t id, uint32_t signature, auto... args) {
    HeadWriter head;
    head.put(id);
    head.put(signature);
    (head.put(args), ...);
    appendRequest(out, true, head.span(), 0);
    answer(out, id, 0);
  };
  {
    std::vector<uint8_t> out;
    call(out, sharedBlockSegment.id(), sharedBlockSegment.signature());
    call(out, lendStationBlock.id(), lendStationBlock.signature(), int64_t(1), int32_t(2),
         int32_t(0), int32_t(4), int32_t(0));
    call(out, returnStationBlocks.id(), returnStationBlocks.signature(), int32_t(0));
    save("lend-station-block", out);
  }
  {
    std::vector<uint8_t> out;
    call(out, sharedSubbandSegment.id(), sharedSubbandSegment.signature(), int32_t(6), int32_t(2));
    call(out, lendStationSubbands.id(), lendStationSubbands.signature(), int64_t(1), int32_t(2),
         int32_t(0), int32_t(2), int32_t(0), int32_t(3));
    call(out, lendStationSubbands.id(), lendStationSubbands.signature(), int64_t(2), int32_t(1),
         int32_t(2), int32_t(2), int32_t(1), int32_t(0));
    call(out, returnStationBlocks.id(), returnStationBlocks.signature(), int32_t(1));
    save("lend-station-subbands", out);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::quietLogs();
  daemon();
  if (const char* directory = std::getenv("RTCP_FUZZ_WRITE_SEEDS")) {
    writeSeeds(directory);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Daemon& d = daemon();
  fuzz::Input in({data, size});
  for (int calls = 0; calls < 8 && !in.rest().empty(); ++calls) {
    LinkRequest request;
    request.op = (in.take<uint8_t>() & 1) ? LinkOp::kWrite : LinkOp::kRead;
    const size_t headSize = std::min<size_t>(in.take<uint8_t>(), kMaxHeadSize);
    const auto head = in.takeBytes(headSize);
    request.head = head;
    request.size = in.take<uint64_t>();
    request.connection = 1;
    LinkPosting posting = d.calls->post(request);
    if (posting.refused) continue;
    uint64_t posted = 0;
    for (const iovec& part : posting.data) posted += part.iov_len;
    const uint64_t agreed = std::min(request.size, posted);
    transfer(posting, in, agreed, request.op == LinkOp::kWrite);
    if (posting.done) posting.done(size_t(agreed));
  }
  d.calls->connectionClosed(1);
  return 0;
}
