#pragma once
// Shared helpers of the storage-sink tests: temporary directories, small parsets,
// deterministic correlated blocks and a TCP sender.

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rtcp/CorrelatedBlock.h"
#include "rtcp/Handshake.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Stream.h"

namespace rtcp::storage::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it at the end
/// (kept when RTCP_KEEP_TEST_DIRS is set).
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct TestObservation {
  int64_t obsId = 4242;
  std::string start = "2025-06-01 12:00:00";
  std::string stop = "2025-06-01 12:00:06";  ///< 6 integrations of about 1 s
  std::vector<std::string> stations = {"CS001", "CS002", "CS003", "RS106"};
  std::string subbands = "[300, 301]";
  int channels = 8;
  int steps = 24414;                     ///< spectra per block: 8 * 24414 samples = 0.99999 s
  std::string antennaSet = "LBA_OUTER";  ///< the field is its first three letters
  std::string bandFilter = "LBA_30_90";
  std::string location;  ///< HOST:DIR of the outputs
  std::string extra;     ///< more parset lines
};

/// The parset text of a small observation (LBA unless antennaSet says otherwise).
std::string makeParset(const TestObservation& observation);
/// Writes the parset to dir/name and returns its path.
std::string writeParset(const std::string& dir, const TestObservation& observation,
                        const std::string& name = "test.parset");
/// A beam-formed-only observation: CS001, subbands 300 and 301, 0.2 s of 8192-sample
/// blocks, one coherent Stokes I TAB of 16 channels (one file holding both subbands).
std::string beamFormedParset(int observationId);

/// A block with deterministic contents: the correlator's sum for (baseline, channel, pol)
/// is value(...) * nrValid, nrValid = validCount(...).
CorrelatedData makeBlock(int nrStations, int nrChannels, int subband, int64_t integration);
std::complex<float> blockValue(int baseline, int channel, int pol, int64_t integration);
uint32_t validCount(int baseline, int channel, int64_t integration);
/// A channel's samples in one integration of the observation when none is lost (spectra
/// per block x blocks per integration): what WEIGHT_SPECTRUM divides the valid count by.
int64_t samplesPerIntegration(const TestObservation& observation);
/// WEIGHT_SPECTRUM of makeBlock's cell (DESIGN §2.5, LofarStMan's scale): validCount(...) /
/// samplesPerIntegration, computed as storage-sink computes it.
float blockWeight(int baseline, int channel, int64_t integration, int64_t samplesPerIntegration);

/// The observation's secret every sink and sender of a test program shares.
const ObservationSecret& testSecret();
/// Writes testSecret() into dir/observation.secret (mode 0600, once); returns its path.
std::string writeSecret(const std::string& dir);
/// The storage handshake of an observation with testSecret().
Handshake storageHandshake(int64_t observationId = 4242);
/// Connects to localhost:port (retrying for timeoutSeconds) and proves the connection
/// belongs to the observation.
std::unique_ptr<Stream> connectSink(uint16_t port, int64_t observationId = 4242,
                                    double timeoutSeconds = 5);
/// Connects (connectSink) and sends the bytes; closes the connection at the end.
void sendBytes(uint16_t port, const std::vector<uint8_t>& bytes, int64_t observationId = 4242);

/// The bytes of a connection, handed out at most maxPiece at a time (as a socket does).
class BytesStream : public Stream {
 public:
  BytesStream(std::vector<uint8_t> bytes, size_t maxPiece)
      : bytes_(std::move(bytes)), maxPiece_(maxPiece) {}
  size_t read(void* data, size_t size) override {
    const size_t n = std::min({size, bytes_.size() - position_, maxPiece_});
    std::memcpy(data, bytes_.data() + position_, n);
    position_ += n;
    return n;
  }
  void write(const void*, size_t) override {}

 private:
  std::vector<uint8_t> bytes_;
  size_t position_ = 0, maxPiece_;
};

}  // namespace rtcp::storage::test
