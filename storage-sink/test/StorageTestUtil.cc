#include "StorageTestUtil.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "rtcp/Baselines.h"
#include "rtcp/Stream.h"

namespace rtcp::storage::test {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base ? base : "/tmp") + "/rtcp-storage-XXXXXX";
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed for " + pattern);
  path_ = pattern;
}

TempDir::~TempDir() {
  if (std::getenv("RTCP_KEEP_TEST_DIRS")) return;  // for looking at what a test wrote
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string beamFormedParset(int observationId) {
  return "Observation.ObsID = " + std::to_string(observationId) + R"(
Observation.startTime = '2026-11-22 20:00:00'
Observation.stopTime = '2026-11-22 20:00:00.2'
Observation.antennaSet = LBA_OUTER
Observation.bandFilter = LBA_30_90
Observation.VirtualInstrument.stationList = [CS001]
Observation.Beam[0].angle1 = 5.2
Observation.Beam[0].angle2 = 0.7
Observation.Beam[0].subbandList = [300, 301]
PIC.Core.CS001LBA.RSP.ports = [udp:127.0.0.1:10010]
Cobalt.blockSize = 8192
Observation.DataProducts.Output_Correlated.enabled = F
Observation.DataProducts.Output_CoherentStokes.enabled = T
Cobalt.BeamFormer.CoherentStokes.nrChannelsPerSubband = 16
Observation.Beam[0].nrTiedArrayBeams = 1
Observation.Beam[0].TiedArrayBeam[0].angle1 = 5.2
Observation.Beam[0].TiedArrayBeam[0].angle2 = 0.7
)";
}

std::string makeParset(const TestObservation& o) {
  std::string stationList;
  std::string ports;
  int port = 10010;
  for (const std::string& s : o.stations) {
    stationList += (stationList.empty() ? "" : ", ") + s;
    ports += "PIC.Core." + s + o.antennaSet.substr(0, 3) +
             ".RSP.ports = [udp:127.0.0.1:" + std::to_string(port++) + "]\n";
  }
  return "Observation.ObsID = " + std::to_string(o.obsId) + "\n" + "Observation.startTime = '" +
         o.start + "'\n" + "Observation.stopTime = '" + o.stop + "'\n" +
         "Observation.sampleClock = 200\n"
         "Observation.nrBitsPerSample = 16\n"
         "Observation.antennaSet = " +
         o.antennaSet + "\n" + "Observation.bandFilter = " + o.bandFilter + "\n" +
         "Observation.VirtualInstrument.stationList = [" + stationList + "]\n" +
         "Observation.channelsPerSubband = " + std::to_string(o.channels) + "\n" +
         "Observation.nrBeams = 1\n"
         "Observation.Beam[0].directionType = J2000\n"
         "Observation.Beam[0].angle1 = 5.2336866848\n"
         "Observation.Beam[0].angle2 = 0.7109425145\n"
         "Observation.Beam[0].subbandList = " +
         o.subbands + "\n" +
         "Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]\n" + ports +
         "OLAP.CNProc.integrationSteps = " + std::to_string(o.steps) + "\n" +
         "OLAP.IONProc.integrationSteps = 1\n"
         "OLAP.realTime = F\n"
         "Observation.DataProducts.Output_Correlated.enabled = T\n"
         "Observation.DataProducts.Output_Correlated.locations = [" +
         o.location + "]\n" + "OLAP.Storage.port = 4100\n" + o.extra;
}

std::string writeParset(const std::string& dir, const TestObservation& observation,
                        const std::string& name) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << makeParset(observation);
  return path;
}

std::complex<float> blockValue(int baseline, int channel, int pol, int64_t integration) {
  return {float(baseline) + 0.25f * float(channel), float(pol) - 0.5f * float(integration)};
}

uint32_t validCount(int baseline, int channel, int64_t integration) {
  return uint32_t(1000 + 10 * baseline + channel + integration);
}

int64_t samplesPerIntegration(const TestObservation& observation) {
  const ObservationSettings s =
      ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
  return int64_t(s.spectraPerBlock) * s.blocksPerIntegration;
}

float blockWeight(int baseline, int channel, int64_t integration, int64_t samplesPerIntegration) {
  return float(validCount(baseline, channel, integration)) / float(samplesPerIntegration);
}

CorrelatedData makeBlock(int nrStations, int nrChannels, int subband, int64_t integration) {
  CorrelatedData block(nrStations, nrChannels);
  block.subband = subband;
  block.integration = integration;
  for (int b = 0; b < nrBaselines(nrStations); ++b)
    for (int c = 0; c < nrChannels; ++c) {
      const uint32_t n = validCount(b, c, integration);
      block.valid(b, c) = n;
      for (int p = 0; p < 4; ++p)
        block.visibility(b, c, p) = blockValue(b, c, p, integration) * float(n);
    }
  return block;
}

const ObservationSecret& testSecret() {
  static const ObservationSecret secret = ObservationSecret::generate();
  return secret;
}

std::string writeSecret(const std::string& dir) {
  const std::string path = dir + "/observation.secret";
  if (!std::filesystem::exists(path)) testSecret().writeFile(path);
  return path;
}

Handshake storageHandshake(int64_t observationId) {
  return Handshake(testSecret(), uint64_t(observationId), ConnectionPurpose::kStorage);
}

std::unique_ptr<Stream> connectSink(uint16_t port, int64_t observationId, double timeoutSeconds) {
  std::unique_ptr<Stream> stream = connectTcp("127.0.0.1", port, timeoutSeconds);
  storageHandshake(observationId).proveToPeer(stream->fileDescriptor());
  return stream;
}

void sendBytes(uint16_t port, const std::vector<uint8_t>& bytes, int64_t observationId) {
  std::unique_ptr<Stream> stream = connectSink(port, observationId);
  stream->write(bytes.data(), bytes.size());
  stream->finishWriting(30);  // the sink's replies unread: a plain close could lose bytes
}

}  // namespace rtcp::storage::test
