#pragma once
// Helpers of the station-input tests: packets whose samples encode their absolute sample
// number and subband, recordings, temporary directories and small observations.
#include <chrono>
#include <complex>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "BlockSource.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StationBlock.h"
#include "rtcp/WallClock.h"

namespace rtcp::ion::test {

/// Waits up to 5 s for a condition (counters updated by receiver threads).
template <typename Condition>
bool eventually(Condition condition) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!condition()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

/// RSP packets of one stream, as sent.
using Packets = std::vector<std::vector<uint8_t>>;

constexpr double kStart = 1700000000.0;  ///< an even second
constexpr int kHistory = 15 * 16;        ///< the filter bank's history at 16 channels

/// A new StationBlock served by `source` (BlockSource::serveInto).
inline std::unique_ptr<StationBlock> getBlock(BlockSource& source, int64_t block, int station,
                                              int firstSubband, int nrSubbands) {
  auto out = std::make_unique<StationBlock>();
  source.serveInto(*out, block, station, firstSubband, nrSubbands);
  return out;
}

/// The sample a test packet holds for absolute sample n of a station subband and pol.
inline std::complex<int16_t> testValue(int64_t n, int subband, int pol, int bits) {
  const int m = maxSampleValue(bits);
  const int shift = bits - 1;
  if (pol == 0) return {int16_t(n & m), int16_t(subband & m)};
  return {int16_t((n >> shift) & m), int16_t((n >> (2 * shift)) & m)};
}

/// An RSP packet of samples [firstSample, +16) of subbands [firstSubband, +nrBeamlets).
inline std::vector<uint8_t> makePacket(int stationId, int bits, int nrBeamlets, int64_t firstSample,
                                       int firstSubband, int board = 0) {
  const SampleClock clock(200);
  RspHeader h;
  h.setClockMHz(200);
  h.setBitsPerSample(bits);
  h.setStationId(stationId, board);
  h.nrBeamlets = uint8_t(nrBeamlets);
  const RspStamp stamp = clock.stamp(firstSample);
  h.timestamp = stamp.timestamp;
  h.blockSequenceNumber = stamp.sequence;
  std::vector<std::complex<int16_t>> samples;
  for (int b = 0; b < nrBeamlets; ++b)
    for (int t = 0; t < kRspSamplesPerPacket; ++t)
      for (int p = 0; p < 2; ++p)
        samples.push_back(testValue(firstSample + t, firstSubband + b, p, bits));
  std::vector<uint8_t> packet(rspPacketSize(bits, nrBeamlets));
  encodeRspPacket(h, samples.data(), packet.data());
  return packet;
}

/// Writes packets one after another: a recording.
inline void writeRecording(const std::string& path,
                           const std::vector<std::vector<uint8_t>>& packets) {
  std::ofstream out(path, std::ios::binary);
  for (const auto& p : packets)
    out.write(reinterpret_cast<const char*>(p.data()), std::streamsize(p.size()));
}

/// A fresh directory under the system temporary directory, removed on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rtcp-input-XXXXXX").string();
    path_ = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// A small observation: stations CS001.. (IDs 1..), one beam, subbands 100.., 16-bit, 200 MHz,
/// 16 channels and `steps` spectra per block (256 samples for 16), no delay model.
inline ObservationSettings makeSettings(int nrStations, int nrSubbands, double startTime,
                                        bool realTime, int steps = 16, int bits = 16) {
  ObservationSettings s;
  s.observationId = 1;
  s.startTime = startTime;
  s.stopTime = startTime + 1;
  s.clockMHz = 200;
  s.bitsPerSample = bits;
  s.antennaSet = "LBA_OUTER";
  s.antennaField = "LBA";
  s.bandFilter = "LBA_30_90";
  s.nyquistZone = 1;
  s.beams = {{5.2336866848, 0.7109425145}};
  for (int i = 0; i < nrSubbands; ++i) s.subbands.push_back({i, 100 + i, 0, (100 + i) * 195312.5});
  for (int i = 0; i < nrStations; ++i) {
    StationSettings st;
    st.name = "CS00" + std::to_string(i + 1);
    st.id = i + 1;
    st.field = "LBA";
    st.position = {3826577.066, 461022.948, 5064892.786};
    s.stations.push_back(st);
  }
  s.referencePhaseCenter = {3826577.066, 461022.948, 5064892.786};
  s.channelsPerSubband = 16;
  s.spectraPerBlock = steps;
  s.delayCompensation = false;
  s.realTime = realTime;
  s.secondsOfBuffer = 0.01;
  return s;
}

/// Pointer to sample t of row `subband` of a block.
inline const uint8_t* blockSample(const StationBlock& b, int subband, int t) {
  return b.sample(subband, t);
}

/// Checks one sample of a block against the test pattern (or zeros when flagged);
/// returns an empty string or what differs.
inline std::string checkSample(const StationBlock& b, int row, int subband, int t,
                               int64_t stationSample, bool expectValid) {
  const bool valid = b.isValid(row, t);
  if (valid != expectValid)
    return "sample " + std::to_string(t) + " of row " + std::to_string(row) + " is " +
           (valid ? "valid" : "flagged") + ", expected " + (expectValid ? "valid" : "flagged");
  std::complex<int16_t> x, y;
  decodeRspSample(blockSample(b, row, t), b.header.bitsPerSample, x, y);
  const int bits = b.header.bitsPerSample;
  const auto ex =
      expectValid ? testValue(stationSample, subband, 0, bits) : std::complex<int16_t>();
  const auto ey =
      expectValid ? testValue(stationSample, subband, 1, bits) : std::complex<int16_t>();
  if (x != ex || y != ey)
    return "sample " + std::to_string(t) + " of row " + std::to_string(row) +
           " does not hold station sample " + std::to_string(stationSample);
  return "";
}

}  // namespace rtcp::ion::test
