// InputRecorder: recordings written behind the input hold every packet appended, in order;
// what the bound or a missing buffer leaves out is counted, never waited for; StationInput
// records exactly the valid packets it received.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <fstream>
#include <future>
#include <iterator>

#include "InputRecorder.h"
#include "InputTestUtil.h"
#include "StationDump.h"
#include "StationInput.h"
#include "rtcp/Stream.h"

namespace rtcp::ion::test {
namespace {

std::vector<uint8_t> fileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<uint8_t> concatenated(const Packets& packets) {
  std::vector<uint8_t> bytes;
  for (const auto& p : packets) bytes.insert(bytes.end(), p.begin(), p.end());
  return bytes;
}

}  // namespace

class InputRecorderTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(InputRecorderTest);
  CPPUNIT_TEST(testRecordingsHoldEveryPacketInOrder);
  CPPUNIT_TEST(testBoundCountsWhatIsLeftOut);
  CPPUNIT_TEST(testNoFreeBufferIsCountedNotWaitedFor);
  CPPUNIT_TEST(testExistingRecordingIsRefused);
  CPPUNIT_TEST(testStationInputRecordsWhatItReceived);
  CPPUNIT_TEST(testDumpRebuildsThePacketsOfTheWindow);
  CPPUNIT_TEST(testDumpHoldsTheBeamFormersLeadIn);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRecordingsHoldEveryPacketInOrder() {
    TempDir dir;
    // 3-beamlet packets (400 bytes) into chunks of 4 KiB: a chunk ends every 10 packets;
    // the buffers hold all of them (the writer may fall behind without a packet dropped).
    const Packets a = packets(1, 3, 0, 4000), b = packets(2, 5, 0, 1000);
    RecorderOptions options{dir.file("rec"), UINT64_MAX, 4 << 20, 4 << 10, false};
    InputRecorder recorder(options, {"CS001LBA-0.rsp", "CS002LBA-0.rsp"});
    for (size_t i = 0; i < a.size(); ++i) {
      recorder.append(0, a[i]);
      if (i < b.size()) recorder.append(1, b[i]);
    }
    recorder.finish();
    CPPUNIT_ASSERT(concatenated(a) == fileBytes(dir.file("rec/CS001LBA-0.rsp")));
    CPPUNIT_ASSERT(concatenated(b) == fileBytes(dir.file("rec/CS002LBA-0.rsp")));
    CPPUNIT_ASSERT_EQUAL(uint64_t(a.size()), recorder.counts(0).packets);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), recorder.counts(0).notRecorded());
    CPPUNIT_ASSERT_EQUAL(uint64_t(concatenated(b).size()), recorder.counts(1).bytes);
  }

  void testBoundCountsWhatIsLeftOut() {
    TempDir dir;
    const Packets a = packets(1, 3, 0, 100);
    const size_t size = a[0].size();  // 400 bytes
    // Room for 12.5 packets: a chunk of 4 KiB (10 packets), then one of the 904 bytes left.
    RecorderOptions options{dir.file("rec"), uint64_t(12.5 * double(size)), 1 << 20, 4 << 10,
                            false};
    InputRecorder recorder(options, {"CS001LBA-0.rsp"});
    for (const auto& p : a) recorder.append(0, p);
    recorder.finish();
    const RecordingCounts c = recorder.counts(0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(12), c.packets);
    CPPUNIT_ASSERT_EQUAL(uint64_t(88), c.overBound);
    CPPUNIT_ASSERT_EQUAL(uint64_t(100), c.packets + c.notRecorded());
    const std::vector<uint8_t> bytes = fileBytes(dir.file("rec/CS001LBA-0.rsp"));
    CPPUNIT_ASSERT_EQUAL(12 * size, bytes.size());  // whole packets only
    CPPUNIT_ASSERT(std::equal(bytes.begin(), bytes.end(), concatenated(a).begin()));
  }

  void testNoFreeBufferIsCountedNotWaitedFor() {
    TempDir dir;
    // One chunk: stream 0 holds it while it fills; stream 1 finds none.
    RecorderOptions options{dir.file("rec"), UINT64_MAX, 4 << 10, 4 << 10, false};
    InputRecorder recorder(options, {"CS001LBA-0.rsp", "CS002LBA-0.rsp"});
    const Packets a = packets(1, 3, 0, 3), b = packets(2, 3, 0, 50);
    for (const auto& p : a) recorder.append(0, p);
    // Nothing frees stream 0's chunk meanwhile: appends that waited for one would never end.
    auto appended = std::async(std::launch::async, [&] {
      for (const auto& p : b) recorder.append(1, p);
    });
    CPPUNIT_ASSERT(appended.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
    recorder.finish();
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), recorder.counts(0).packets);
    CPPUNIT_ASSERT_EQUAL(uint64_t(50), recorder.counts(1).noBuffer);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), recorder.counts(1).packets);
  }

  void testExistingRecordingIsRefused() {
    TempDir dir;
    std::filesystem::create_directories(dir.file("rec"));
    writeRecording(dir.file("rec/CS001LBA-0.rsp"), packets(1, 3, 0, 2));
    RecorderOptions options{dir.file("rec"), UINT64_MAX, 1 << 20, 1 << 20, false};
    try {
      InputRecorder recorder(options, {"CS001LBA-0.rsp"});
      CPPUNIT_FAIL("an existing recording was opened for writing");
    } catch (const StreamError& e) {
      CPPUNIT_ASSERT(std::string(e.what()).find("CS001LBA-0.rsp") != std::string::npos);
      CPPUNIT_ASSERT(std::string(e.what()).find("never overwritten") != std::string::npos);
    }
    CPPUNIT_ASSERT_EQUAL(2 * packets(1, 3, 0, 1)[0].size(),
                         fileBytes(dir.file("rec/CS001LBA-0.rsp")).size());
  }

  /// A replay read through StationInput with a recording of its input: the recording is
  /// the replayed file, packet for packet, less the packet of another station (rejected).
  void testStationInputRecordsWhatItReceived() {
    TempDir dir;
    ObservationSettings s = makeSettings(1, 4, kStart, false, 64);
    s.secondsOfBuffer = 1;  // holds the whole recording: the replay never waits for room
    const int64_t S = s.startSample();
    Packets sent = streamPackets(1, 4, S - 1024, S + 32 * 1024);
    Packets withForeign = sent;
    withForeign.insert(withForeign.begin() + 100, makePacket(7, 16, 4, S, 0));  // station 7
    writeRecording(dir.file("in.rsp"), withForeign);
    s.stations[0].inputs = {"file:" + dir.file("in.rsp")};
    StationInputOptions options;
    options.record = RecorderOptions{dir.file("rec"), UINT64_MAX, 8 << 20, 1 << 20, false};
    {
      StationInput input(s, {}, options);
      input.start();
      CPPUNIT_ASSERT(eventually([&] { return input.buffer(0).ended(0); }));
      input.stop();
      const StationStatistics st = input.statistics().at(0);
      CPPUNIT_ASSERT_EQUAL(uint64_t(sent.size()), st.packetsRecorded);
      CPPUNIT_ASSERT_EQUAL(uint64_t(0), st.packetsNotRecorded);
      CPPUNIT_ASSERT_EQUAL(dir.file("rec/CS001-0.rsp"), input.recordings().at(0).path);
    }
    CPPUNIT_ASSERT(concatenated(sent) == fileBytes(dir.file("rec/CS001-0.rsp")));
  }

  /// A dump of blocks 4..7 (blocks of 1024 samples) out of a replayed recording: the
  /// packets rebuilt from the buffer are the recording's, byte for byte, from the packet
  /// holding the first block's filter history and reach (240 + 16 samples before it) to the
  /// one holding the reach after the last block.
  void testDumpRebuildsThePacketsOfTheWindow() { checkDumpOfBlocks4To7(false); }

  /// The same with incoherent Stokes of 16 channels: their final filter bank's history
  /// (240 samples) lies in block 3, which the dump holds too (its lead-in, for the replay's
  /// beam former), with block 3's own filter history and reach.
  void testDumpHoldsTheBeamFormersLeadIn() { checkDumpOfBlocks4To7(true); }

 private:
  static void checkDumpOfBlocks4To7(bool beamFormed) {
    TempDir dir;
    ObservationSettings s = makeSettings(1, 4, kStart, false, 64);
    s.secondsOfBuffer = 1;
    s.beamFormed.incoherentEnabled = beamFormed;
    s.beamFormed.incoherent.nrChannels = 16;
    const int64_t S = s.startSample();
    const Packets sent = streamPackets(1, 4, S - 1024, S + 32 * 1024);
    writeRecording(dir.file("in.rsp"), sent);
    s.stations[0].inputs = {"file:" + dir.file("in.rsp")};
    StationInput input(s);
    input.start();
    CPPUNIT_ASSERT(eventually([&] { return input.buffer(0).ended(0); }));
    const SampleClock clock(200);
    DumpRequest request;
    request.from = clock.unixTime(S + 4096 + 100);
    request.to = clock.unixTime(S + 8192 - 100);
    request.directory = dir.file("dump");
    const DumpResult result = dumpStations(input, request);
    input.stop();
    const int64_t leadIn = beamFormed ? 1 : 0;
    CPPUNIT_ASSERT_EQUAL(int64_t(4), result.firstBlock);
    CPPUNIT_ASSERT_EQUAL(int64_t(4), result.nrBlocks);
    CPPUNIT_ASSERT_EQUAL(leadIn, result.leadInBlocks);
    CPPUNIT_ASSERT_EQUAL(S + 4096 - 1024 * leadIn - 240 - 16, result.firstSample);
    CPPUNIT_ASSERT_EQUAL(S + 8192 + 16, result.endSample);
    CPPUNIT_ASSERT(result.complete());
    CPPUNIT_ASSERT(result.gaps.empty());
    Packets expected;
    for (size_t i = 0; i < sent.size(); ++i) {
      const int64_t first = S - 1024 + 16 * int64_t(i);
      if (first + 16 > result.firstSample && first < result.endSample) expected.push_back(sent[i]);
    }
    CPPUNIT_ASSERT_EQUAL(size_t(1), result.recordings.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(expected.size()), result.recordings[0].packets);
    CPPUNIT_ASSERT(concatenated(expected) == fileBytes(dir.file("dump/CS001-0.rsp")));
  }

  static Packets packets(int station, int beamlets, int64_t from, int n) {
    Packets result;
    for (int i = 0; i < n; ++i)
      result.push_back(makePacket(station, 16, beamlets, from + 16 * i, 0));
    return result;
  }
  static Packets streamPackets(int station, int beamlets, int64_t from, int64_t to) {
    Packets result;
    for (int64_t n = from; n < to; n += 16)
      result.push_back(makePacket(station, 16, beamlets, n, 0));
    return result;
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(InputRecorderTest);

}  // namespace rtcp::ion::test
