// The station input end to end: packets through the real file and UDP paths into blocks,
// with exact flags; a silent station in real time; the coarse delay shift.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <cmath>
#include <random>
#include <set>
#include <thread>

#include "InputTestUtil.h"
#include "StationInput.h"
#include "rtcp/DelayModel.h"
#include "rtcp/SharedMemory.h"
#include "rtcp/StationBufferSize.h"
#include "rtcp/Stream.h"

namespace rtcp::ion {
namespace {

using namespace test;
constexpr int kBlock = 256;  ///< 16 spectra x 16 channels

/// Packets of a stream for samples [from, to) in steps of 16, except those in `lost`.
Packets streamPackets(int stationId, int nrBeamlets, int firstSubband, int64_t from, int64_t to,
                      std::vector<int64_t> lost = {}) {
  Packets packets;
  for (int64_t n = from; n < to; n += 16)
    if (std::find(lost.begin(), lost.end(), n) == lost.end())
      packets.push_back(makePacket(stationId, 16, nrBeamlets, n, firstSubband));
  return packets;
}

/// Checks every sample of a served block (station samples via n_s) against `arrived`. The
/// flagged samples of a block lent in place are whatever the ring held: not checked.
template <typename Arrived>
void checkBlock(const StationBlock& b, int64_t blockStart, Arrived arrived) {
  for (int row = 0; row < b.header.nrSubbands; ++row)
    for (int t = 0; t < b.header.nrSamples; ++t) {
      const int64_t n = blockStart - kHistory + t - b.delays[size_t(row)].coarse;
      const int subband = b.header.firstSubband + row;
      const bool valid = arrived(subband, n);
      if (b.header.rowsInRing && !valid) {
        CPPUNIT_ASSERT(!b.isValid(row, t));
        continue;
      }
      const std::string problem = checkSample(b, row, subband, t, n, valid);
      CPPUNIT_ASSERT_MESSAGE("block " + std::to_string(b.header.block) + ": " + problem,
                             problem.empty());
    }
}

/// One real-time station, blocks of 1024 samples (5.2 ms), fed by a recording of samples
/// [start - 1024, start + 64 Ki) in dir.
ObservationSettings recordedStation(const TempDir& dir, double secondsOfBuffer,
                                    int64_t nrSamples = 64 * 1024) {
  ObservationSettings s = makeSettings(1, 4, kStart, true, 64);
  const int64_t S = s.startSample();
  writeRecording(dir.file("r"), streamPackets(1, 4, 0, S - 1024, S + nrSamples));
  s.stations[0].inputs = {"file:" + dir.file("r")};
  s.secondsOfBuffer = secondsOfBuffer;
  return s;
}

}  // namespace

class StationInputTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StationInputTest);
  CPPUNIT_TEST(testRecordingWithFaults);
  CPPUNIT_TEST(testUdpWithFaults);
  CPPUNIT_TEST(testSilentStationInRealTime);
  CPPUNIT_TEST(testCoarseDelayShift);
  CPPUNIT_TEST(testDelayModelStation);
  CPPUNIT_TEST(testRealTimeReplayPacesRecording);
  CPPUNIT_TEST(testReplayStartsAtFirstRequest);
  CPPUNIT_TEST(testLentFromTheSharedRing);
  CPPUNIT_TEST(testBuffersAreWhatTheMemoryPlanCounts);
  CPPUNIT_TEST(testBrightSubbandServedFlagged);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// The view across subbands (SubbandLevelFlagger.h): of 8 subbands of noise, subband 5
  /// 30 dB brighter; with Rtcp.Flagging.subbandLevel on it is served flagged whole (valid
  /// bits clear, samples zero) to every caller, however the subbands are asked for, and
  /// counted apart from what did not arrive; the others are served as they arrived.
  void testBrightSubbandServedFlagged() {
    TempDir dir;
    ObservationSettings s = makeSettings(1, 8, kStart, false, 512);  // blocks of 8192 samples
    s.flagging.online = true;
    s.flagging.subbandLevel.on = true;
    const int64_t S = s.startSample(), block = s.samplesPerBlock();
    std::mt19937 random(5);
    Packets packets;
    for (int64_t n = S - 256; n < S + 4 * block; n += 16) {
      std::vector<std::complex<int16_t>> samples;
      for (int b = 0; b < 8; ++b) {
        std::normal_distribution<float> noise(0, b == 5 ? 3000 : 95);
        for (int t = 0; t < 2 * kRspSamplesPerPacket; ++t)
          samples.push_back({int16_t(noise(random)), int16_t(noise(random))});
      }
      RspHeader h;
      h.setClockMHz(200);
      h.setBitsPerSample(16);
      h.setStationId(1);
      h.nrBeamlets = 8;
      const RspStamp stamp = SampleClock(200).stamp(n);
      h.timestamp = stamp.timestamp;
      h.blockSequenceNumber = stamp.sequence;
      packets.emplace_back(rspPacketSize(16, 8));
      encodeRspPacket(h, samples.data(), packets.back().data());
    }
    writeRecording(dir.file("r"), packets);
    s.stations[0].inputs = {"file:" + dir.file("r")};
    StationInput input(s);
    input.start();
    for (int64_t b = 0; b < 4; ++b) {
      // As two ranks ask, subbands 0-3 and 4-7 (the second judged by the first's call).
      for (int first : {0, 4}) {
        const auto served = getBlock(input, b, 0, first, 4);
        for (int row = 0; row < 4; ++row) {
          const bool bright = first + row == 5;
          int valid = 0;
          for (int t = 0; t < served->header.nrSamples; ++t) valid += served->isValid(row, t);
          CPPUNIT_ASSERT_EQUAL_MESSAGE(
              "block " + std::to_string(b) + ", subband " + std::to_string(first + row),
              bright ? 0 : served->header.nrSamples, valid);
          if (bright)
            for (int t = 0; t < served->header.nrSamples; t += 97)
              CPPUNIT_ASSERT_EQUAL(uint8_t(0), *served->sample(row, t));
        }
      }
    }
    const StationStatistics st = input.statistics().at(0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(4), st.subbandBlocksLevelFlagged);
    CPPUNIT_ASSERT_EQUAL(uint64_t(4 * (kHistory + block)), st.samplesLevelFlagged);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.samplesFlagged);  // everything arrived
    CPPUNIT_ASSERT_EQUAL(uint64_t(8 * 4 * (kHistory + block)), st.samplesServed);
  }

  /// observe's memory plan and its time for faulting buffers in count stationBufferBytes:
  /// the station input allocates exactly that, with a long buffer and with the blocks in
  /// flight and the latency beyond a short one, for two streams of which one carries the
  /// 4 subbands.
  void testBuffersAreWhatTheMemoryPlanCounts() {
    for (const double seconds : {0.01, 3.0}) {
      ObservationSettings s = makeSettings(2, 4, kStart, true, 1024);
      s.secondsOfBuffer = seconds;
      for (auto& st : s.stations) st.inputs = {"udp:127.0.0.1:0", "udp:127.0.0.1:0"};
      StationInput input(s);
      for (int i = 0; i < 2; ++i) {
        CPPUNIT_ASSERT_EQUAL(stationBufferCapacity(s), input.buffer(i).capacity());
        CPPUNIT_ASSERT_EQUAL(stationBufferBytes(s, i), double(input.buffer(i).bytes()));
      }
      if (seconds > 1) CPPUNIT_ASSERT(double(input.buffer(0).capacity()) >= 3.0 * s.subbandWidth());
    }
  }

  void testRecordingWithFaults() {
    TempDir dir;
    ObservationSettings s = makeSettings(1, 64, kStart, false);  // streams of 61 and 3 subbands
    const int64_t S = s.startSample();
    // Stream 0: packet S+32 lost, S+64 twice, S+96 and S+112 swapped, a packet of another
    // station, and at the end one far older than the buffer holds (before the observation).
    Packets p0 = streamPackets(1, 61, 0, S - 256, S + 1024, {S + 32});
    auto at = [&](int64_t n) { return size_t((n - (S - 256)) / 16 - (n > S + 32 ? 1 : 0)); };
    std::swap(p0[at(S + 96)], p0[at(S + 112)]);
    p0.insert(p0.begin() + long(at(S + 64)), makePacket(1, 16, 61, S + 64, 0));
    p0.insert(p0.begin() + 3, makePacket(7, 16, 61, S - 200, 0));
    p0.push_back(makePacket(1, 16, 61, S - 3000, 0));
    // Stream 1 ends early, at S + 512, and carries one beamlet more than needed.
    Packets p1 = streamPackets(1, 4, 61, S - 256, S + 512);
    writeRecording(dir.file("s0.rsp"), p0);
    writeRecording(dir.file("s1.rsp"), p1);
    s.stations[0].inputs = {"file:" + dir.file("s0.rsp"), "file:" + dir.file("s1.rsp")};

    StationInput input(s);
    input.start();
    auto arrived = [&](int subband, int64_t n) {
      if (subband >= 61) return n >= S - 256 && n < S + 512;
      return n >= S - 256 && n < S + 1024 && !(n >= S + 32 && n < S + 48);
    };
    // A range across both streams.
    auto b = getBlock(input, 1, 0, 59, 4);
    checkBlock(*b, s.blockStartSample(1), arrived);
    for (int64_t block = 0; block < 5; ++block) {
      b = getBlock(input, block, 0, 0, 64);
      CPPUNIT_ASSERT_EQUAL(0, b->delays[0].coarse);
      CPPUNIT_ASSERT_EQUAL(kHistory + kBlock, b->header.nrSamples);
      checkBlock(*b, s.blockStartSample(block), arrived);
    }

    CPPUNIT_ASSERT(
        eventually([&] { return input.buffer(0).ended(0) && input.buffer(0).ended(1); }));
    const StationStatistics st = input.statistics().at(0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(p0.size() + p1.size()), st.packetsReceived);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), st.rejected[size_t(RspReject::kStation)]);
    // The one far older than the buffer: before the observation and its margin.
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), st.rejected[size_t(RspReject::kBeforeObservation)]);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), st.rejectedTotal());
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), st.duplicated);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.late);
    // Stored: all but the rejected two and the duplicate.
    CPPUNIT_ASSERT_EQUAL(uint64_t(p0.size() + p1.size() - 3), st.packetsAccepted);
    CPPUNIT_ASSERT_EQUAL(uint64_t(6), st.blocksServed);
    // Block 4 is [S + 784, S + 1280): stream 0 ended at S + 1024, stream 1 at S + 512.
    CPPUNIT_ASSERT_DOUBLES_EQUAL((61.0 * 256 + 3.0 * 496) / (64.0 * 496),
                                 st.lastBlockFlaggedFraction, 1e-12);
  }

  void testUdpWithFaults() {
    ObservationSettings s = makeSettings(1, 8, kStart, false);
    s.stations[0].inputs = {"udp:127.0.0.1:0"};
    const int64_t S = s.startSample();
    StationInputOptions options;
    options.stallTimeout = 20;
    StationInput input(s, {}, options);
    input.start();
    auto out = openStreamForWriting(
        StreamDescriptor::parse("udp:127.0.0.1:" + std::to_string(input.udpPort(0, 0))));
    Packets packets = streamPackets(1, 8, 0, S - 256, S + 528, {S - 16, S + 256});
    std::swap(packets[20], packets[21]);
    packets.insert(packets.begin() + 30, packets[29]);  // a duplicate
    const std::vector<uint8_t> shortPacket(packets[5].begin(), packets[5].end() - 8);
    std::vector<uint8_t> wrongClock = makePacket(1, 16, 8, S, 0);
    wrongClock[1] &= 0x7f;  // 160 MHz
    packets.insert(packets.begin() + 7, shortPacket);
    packets.insert(packets.begin() + 9, wrongClock);
    for (const auto& p : packets) {
      out->write(p.data(), p.size());
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    auto arrived = [&](int, int64_t n) {
      return n >= S - 256 && n < S + 528 && !(n >= S - 16 && n < S) &&
             !(n >= S + 256 && n < S + 272);
    };
    auto b0 = getBlock(input, 0, 0, 0, 8);
    checkBlock(*b0, s.blockStartSample(0), arrived);
    auto b1 = getBlock(input, 1, 0, 2, 5);
    checkBlock(*b1, s.blockStartSample(1), arrived);
    CPPUNIT_ASSERT_EQUAL(0, b1->header.flaggedByIonproc);

    // Block 1 has been served: its samples arriving now are late.
    const auto late = makePacket(1, 16, 8, S + 256, 0);
    out->write(late.data(), late.size());
    CPPUNIT_ASSERT(eventually([&] { return input.statistics()[0].late == 1; }));
    const StationStatistics st = input.statistics()[0];
    CPPUNIT_ASSERT_EQUAL(uint64_t(packets.size() + 1), st.packetsReceived);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), st.rejected[size_t(RspReject::kSize)]);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), st.rejected[size_t(RspReject::kClock)]);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), st.duplicated);
  }

  void testSilentStationInRealTime() {
    const double start = wallClock() + 0.2;
    ObservationSettings s = makeSettings(1, 4, start, true);
    s.stations[0].inputs = {"udp:127.0.0.1:0"};
    StationInputOptions options;
    options.maxLatency = 0.05;
    StationInput input(s, {}, options);
    input.start();
    CPPUNIT_ASSERT_EQUAL(0.0, input.clockShift());
    const SampleClock clock(200);
    for (int64_t block = 0; block < 3; ++block) {
      auto b = getBlock(input, block, 0, 0, 4);
      const double served = wallClock();
      const double due = clock.unixTime(s.blockStartSample(block + 1)) + *options.maxLatency;
      CPPUNIT_ASSERT(served >= due - 0.002);
      CPPUNIT_ASSERT_MESSAGE("served " + std::to_string(served - due) + " s late",
                             served < due + 0.25);
      for (size_t w = 0; w < b->valid.size(); ++w) CPPUNIT_ASSERT_EQUAL(uint64_t(0), b->valid[w]);
      CPPUNIT_ASSERT_EQUAL(0, b->header.flaggedByIonproc);
    }
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, input.statistics()[0].lastBlockFlaggedFraction, 0);
  }

  /// Injected delays that change across blocks: n_s rises for station 0 (positive) and
  /// falls for station 1 (negative); blocks straddle the odd second kStart + 1.
  void testCoarseDelayShift() {
    TempDir dir;
    const double start = kStart + 1 - 0.003;
    ObservationSettings s = makeSettings(2, 4, start, false);
    const double fs = s.subbandWidth();
    auto tau = [&](int station, double t) {
      return station == 0 ? (40.2 + 3000 * (t - start)) / fs : (-55.4 - 2000 * (t - start)) / fs;
    };
    StationInputOptions options;
    options.delays = [&](int beam, double t) {
      CPPUNIT_ASSERT_EQUAL(0, beam);
      return std::vector<double>{tau(0, t), tau(1, t)};
    };
    options.maxDelaySeconds = 120 / fs;
    const int64_t S = s.startSample();
    for (int st = 0; st < 2; ++st) {
      writeRecording(dir.file("s" + std::to_string(st)),
                     streamPackets(st + 1, 4, 0, S - 600, S + 2000));
      s.stations[size_t(st)].inputs = {"file:" + dir.file("s" + std::to_string(st))};
    }
    StationInput input(s, {}, options);
    input.start();
    const SampleClock clock(200);
    std::set<int> shifts[2];
    for (int64_t block = 0; block < 6; ++block)
      for (int st = 0; st < 2; ++st) {
        auto b = getBlock(input, block, st, 0, 4);
        const int64_t start0 = s.blockStartSample(block);
        const double middle = clock.unixTime(start0) + 0.5 * kBlock / fs;
        const int n = int(std::llround(tau(st, middle) * fs));
        CPPUNIT_ASSERT_EQUAL(n, b->delays[0].coarse);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(tau(st, clock.unixTime(start0)) - n / fs,
                                     b->delays[0].residualStart, 1e-13);
        CPPUNIT_ASSERT_DOUBLES_EQUAL(tau(st, clock.unixTime(start0 + kBlock)) - n / fs,
                                     b->delays[0].residualEnd, 1e-13);
        checkBlock(*b, start0, [](int, int64_t) { return true; });
        shifts[st].insert(n);
      }
    CPPUNIT_ASSERT(*shifts[0].begin() > 0 && shifts[0].size() > 3);
    CPPUNIT_ASSERT(*shifts[1].rbegin() < 0 && shifts[1].size() > 3);
    // The blocks straddle the second boundary (odd seconds hold 195312 samples).
    CPPUNIT_ASSERT(clock.stamp(s.blockStartSample(2)).timestamp <
                   clock.stamp(s.blockStartSample(3)).timestamp);
  }

  /// Blocks lent in place from the shared ring, read through the segment a rank maps:
  /// every sample where it belongs, through many turns of the ring and its mirror, with
  /// coarse delays of both signs that change, and a lost packet flagged.
  void testLentFromTheSharedRing() {
    TempDir dir;
    ObservationSettings s = makeSettings(2, 4, kStart, false);
    const double fs = s.subbandWidth();
    StationInputOptions options;
    options.delays = [&](int, double t) {
      return std::vector<double>{(30.2 + 4000 * (t - kStart)) / fs,
                                 (-55.4 - 3000 * (t - kStart)) / fs};
    };
    options.maxDelaySeconds = 120 / fs;
    options.sharedRing = true;
    const int64_t S = s.startSample();
    const int64_t lost = S - 600 + 16 * 361;  // a packet in block 20
    for (int st = 0; st < 2; ++st) {
      writeRecording(dir.file("s" + std::to_string(st)),
                     streamPackets(st + 1, 4, 0, S - 600, S + 40 * kBlock + 600, {lost}));
      s.stations[size_t(st)].inputs = {"file:" + dir.file("s" + std::to_string(st))};
    }
    StationInput input(s, {}, options);
    CPPUNIT_ASSERT(input.sampleRing());
    const SharedMemory ring = SharedMemory::openReadOnly(*input.sampleRing());
    CPPUNIT_ASSERT(input.buffer(0).capacity() < 20 * kBlock);  // turns several times
    input.start();
    AlignedBuffer<uint8_t> tables[2][2];
    for (int64_t block = 0; block < 40; ++block)
      for (int st = 0; st < 2; ++st) {
        const uint64_t lease = uint64_t(2 * st + block % 2);  // two blocks in flight
        AlignedBuffer<uint8_t>& table = tables[st][block % 2];
        table = AlignedBuffer<uint8_t>(StationBlock::bytesOfRowTable(4, kHistory + kBlock));
        StationBlock b = StationBlock::overRowTable(table.data(), 4, kHistory + kBlock, 16);
        input.lendInto(b, block, st, 0, 4, lease);
        b.rowBase = ring.payload();
        CPPUNIT_ASSERT(b.header.rowsInRing && !b.header.flaggedByIonproc);
        checkBlock(b, s.blockStartSample(block),
                   [&](int, int64_t n) { return n < lost || n >= lost + 16; });
      }
    for (uint64_t lease = 0; lease < 4; ++lease) input.endLease(lease);
  }

  /// DelayModel toward the beam: a station 60 km from the reference.
  void testDelayModelStation() {
    TempDir dir;
    ObservationSettings s = makeSettings(2, 4, kStart, false);
    s.delayCompensation = true;
    s.stations[1].position = {s.referencePhaseCenter[0] + 30000, s.referencePhaseCenter[1] - 40000,
                              s.referencePhaseCenter[2] + 30000};
    const int64_t S = s.startSample();
    for (int st = 0; st < 2; ++st) {
      writeRecording(dir.file("s" + std::to_string(st)),
                     streamPackets(st + 1, 4, 0, S - 600, S + 1200));
      s.stations[size_t(st)].inputs = {"file:" + dir.file("s" + std::to_string(st))};
    }
    StationInput input(s);
    input.start();
    DelayModel model(s);
    const SampleClock clock(200);
    const double fs = s.subbandWidth();
    for (int64_t block = 0; block < 2; ++block) {
      const double middle = clock.unixTime(s.blockStartSample(block)) + 0.5 * kBlock / fs;
      const auto tau = model.delays(s.beams[0], middle);
      for (int st = 0; st < 2; ++st) {
        auto b = getBlock(input, block, st, 0, 4);
        CPPUNIT_ASSERT_EQUAL(int(std::llround(tau[size_t(st)] * fs)), b->delays[0].coarse);
        checkBlock(*b, s.blockStartSample(block), [](int, int64_t) { return true; });
      }
    }
    CPPUNIT_ASSERT_EQUAL(0, getBlock(input, 0, 0, 0, 4)->delays[0].coarse);
    CPPUNIT_ASSERT(std::abs(getBlock(input, 0, 1, 0, 4)->delays[0].coarse) > 10);
  }

  /// OLAP.realTime = T with a recording: played at wall-clock pace, shifted so that the
  /// observation start plays at start(); blocks are served at their shifted time.
  void testRealTimeReplayPacesRecording() {
    TempDir dir;
    ObservationSettings s =
        recordedStation(dir, 0.5);  // slack for a slow (sanitised, loaded) test run
    StationInputOptions options;
    options.maxLatency = 0.02;
    StationInput input(s, {}, options);
    const double started = wallClock();
    input.start();
    CPPUNIT_ASSERT_DOUBLES_EQUAL(started - kStart, input.clockShift(), 0.05);
    const SampleClock clock(200);
    for (int64_t block : {0, 3, 7}) {
      auto b = getBlock(input, block, 0, 0, 4);
      const double due = clock.unixTime(s.blockStartSample(block + 1)) + input.clockShift() + 0.02;
      CPPUNIT_ASSERT(wallClock() >= due - 0.002);
      checkBlock(*b, s.blockStartSample(block), [](int, int64_t) { return true; });
      // Paced: the reader has not run ahead of the wall clock (the recording lasts 0.34 s).
      const double playedUntil = clock.unixTime(input.buffer(0).head(0)) + input.clockShift();
      CPPUNIT_ASSERT(playedUntil < wallClock() + kReplayLead + 0.001);
    }
  }

  /// replayFromFirstRequest: a real-time replay plays from the first block asked for, so
  /// that ranks which took longer than the buffer to start still get block 0 whole;
  /// without it, block 0 has left the buffer by then and comes back flagged.
  void testReplayStartsAtFirstRequest() {
    TempDir dir;
    // 0.84 s: longer than the buffer (0.05 s asked; the latency and the input's lead ahead
    // of the clock make it 0.55 s), so that a replay started early overwrites block 0.
    ObservationSettings s = recordedStation(dir, 0.05, 160 * 1024);
    const int64_t S = s.startSample();
    for (const bool fromFirstRequest : {true, false}) {
      StationInputOptions options;
      // Block 0 is replayed in real time from the request on: waiting 0.25 s past its end
      // for the reader thread keeps a loaded (or instrumented) machine from flagging it.
      options.maxLatency = 0.25;
      options.replayFromFirstRequest = fromFirstRequest;
      StationInput input(s, {}, options);
      input.start();
      CPPUNIT_ASSERT_EQUAL(!fromFirstRequest, input.started());
      // Ranks starting for longer than the buffer holds.
      const double bufferSeconds = double(input.buffer(0).capacity()) / s.subbandWidth();
      std::this_thread::sleep_for(std::chrono::duration<double>(bufferSeconds + 0.1));
      const double asked = wallClock();
      auto b = getBlock(input, 0, 0, 0, 4);
      CPPUNIT_ASSERT(input.started());
      if (fromFirstRequest) {
        CPPUNIT_ASSERT_DOUBLES_EQUAL(asked - kStart, input.clockShift(), 0.05);
        CPPUNIT_ASSERT_EQUAL(0, b->header.flaggedByIonproc);
        checkBlock(*b, s.blockStartSample(0), [&](int, int64_t n) { return n >= S - 1024; });
      } else {
        CPPUNIT_ASSERT_EQUAL(1, b->header.flaggedByIonproc);
      }
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StationInputTest);

}  // namespace rtcp::ion
