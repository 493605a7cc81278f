// libFuzzer target: storage-sink's ingest of one connection: header checks against the
// observation before anything is allocated, payload reads into staging buffers, CRC-64
// verification, staging, and the rebuilt data of every block staged. The observation:
// 2 stations, 4 channels, 2 subbands; the seeds are good blocks of it and their faults.
// Checked: no crash, no undefined behaviour, no hang; every block staged passed its CRC
// and has the observation's shape.
#include <algorithm>
#include <cstring>
#include <map>

#include "BlockReceiver.h"
#include "FuzzCommon.h"
#include "OutputLayout.h"
#include "rtcp/Crc64.h"
#include "rtcp/ObservationSettings.h"

namespace {

/// The fuzz input as a connection.
class MemoryStream : public rtcp::Stream {
 public:
  explicit MemoryStream(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  size_t read(void* data, size_t size) override {
    // Short reads, as TCP gives them: at most 100 bytes at a time.
    const size_t n = std::min({size, bytes_.size(), size_t(100)});
    std::memcpy(data, bytes_.data(), n);
    bytes_ = bytes_.subspan(n);
    return n;
  }
  void write(const void*, size_t) override {}

 private:
  std::span<const uint8_t> bytes_;
};

const rtcp::ObservationSettings& settings() {
  static const rtcp::ObservationSettings s = rtcp::ObservationSettings::fromText(
      "Observation.ObsID = 1001\n"
      "Observation.startTime = '2026-11-22 20:00:00'\n"
      "Observation.stopTime = '2026-11-22 20:00:10'\n"
      "Observation.antennaSet = LBA_OUTER\n"
      "Observation.bandFilter = LBA_30_90\n"
      "Observation.VirtualInstrument.stationList = [CS001, CS002]\n"
      "PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]\n"
      "PIC.Core.CS002LBA.RSP.ports = [udp:127.0.0.1:10011]\n"
      "Observation.nrBeams = 1\n"
      "Observation.Beam[0].angle1 = 5.2336866848\n"
      "Observation.Beam[0].angle2 = 0.7109425145\n"
      "Observation.Beam[0].subbandList = [150..151]\n"
      "Cobalt.Correlator.nrChannelsPerSubband = 4\n"
      "Cobalt.blockSize = 195312\n"
      "Cobalt.Correlator.nrBlocksPerIntegration = 1\n"
      "Observation.DataProducts.Output_Correlated.enabled = T\n"
      "Observation.DataProducts.Output_Correlated.locations = [localhost:/nonexistent]\n",
      "fuzz-storage.parset", "/");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  rtcp::fuzz::quietLogs();
  settings();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace rtcp;
  using namespace rtcp::storage;
  const ObservationSettings& s = settings();
  const BlockValidator validator(s, {{0, 0}, {1, 1}});  // subband indices
  // Room for every block the input can hold (each is at least a header): never blocks.
  StagingOptions options;
  options.capacityBytes = (size / kCorrelatedHeaderSize + 1) * validator.payloadSize();
  options.flushIntervalSeconds = 1e6;
  StagingArea staging(2, validator.payloadSize(), options);
  IngestStatistics statistics;
  // A small receive buffer: the sink's 256 KiB, allocated per input, made the harness slow
  // (about 430 inputs a second under ASan); small also takes the large-payload path.
  BlockReceiver receiver(validator, staging, statistics, 4096);
  MemoryStream stream({data, size});
  receiver.run(stream, "fuzz");
  staging.close();
  for (int output = 0; output < 2; ++output)
    for (auto batch = staging.nextBatch(output); !batch.empty(); batch = staging.nextBatch(output))
      for (auto& block : batch) {
        const CorrelatedHeader& h = block->header;
        if (validator.check(h).reason != BlockReject::kNone ||
            h.payloadSize != validator.payloadSize() ||
            crc64(block->payload.data(), h.payloadSize) != h.payloadCrc)
          __builtin_trap();
        const CorrelatedData d = CorrelatedData::fromPayload(h, block->payload.data());
        fuzz::consume(d.visibilities.size());
        staging.release(std::move(block));
      }
  return 0;
}
