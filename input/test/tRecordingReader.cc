// RecordingReader: records of every size come out whole and in order, with their file
// offsets, however the chunks cut them; the end of the file and a cut last record.
#include <cppunit/extensions/HelperMacros.h>
#include <fcntl.h>
#include <unistd.h>

#include "InputTestUtil.h"
#include "RecordingReader.h"

namespace rtcp::ion {
namespace {

using namespace test;

class RecordingReaderTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(RecordingReaderTest);
  CPPUNIT_TEST(testRecordsAcrossChunks);
  CPPUNIT_TEST(testCutLastRecord);
  CPPUNIT_TEST_SUITE_END();

  /// Packets of 4, 8 and 16 bits with 1..61 beamlets: sizes from 48 to 7824 bytes.
  static std::vector<std::vector<uint8_t>> mixedPackets() {
    std::vector<std::vector<uint8_t>> packets;
    for (int i = 0; i < 120; ++i)
      packets.push_back(makePacket(1, 4 << (i % 3), 1 + (i * 7) % 61, 16 * i, 0));
    return packets;
  }

  /// Reads records as ionproc does (header, size, the whole record); their bytes and offsets.
  static std::vector<std::pair<uint64_t, std::vector<uint8_t>>> readRecords(const std::string& path,
                                                                            size_t chunkBytes,
                                                                            size_t& leftOver) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    CPPUNIT_ASSERT(fd >= 0);
    RecordingReader reader(fd, path, chunkBytes);
    std::vector<std::pair<uint64_t, std::vector<uint8_t>>> records;
    for (;;) {
      const std::span<const uint8_t> bytes = reader.unread();
      if (bytes.size() < kRspHeaderSize) {
        if (reader.fill()) continue;
        break;
      }
      const RspHeader h = RspHeader::read(bytes.data());
      const size_t size = rspPacketSize(h.bitsPerSample(), h.nrBeamlets, h.nrBlocks);
      if (size > bytes.size()) {
        if (reader.fill()) continue;
        break;
      }
      records.push_back({reader.position(), {bytes.begin(), bytes.begin() + long(size)}});
      reader.consume(size);
    }
    leftOver = reader.unread().size();
    ::close(fd);
    return records;
  }

  void testRecordsAcrossChunks() {
    const TempDir dir;
    const auto packets = mixedPackets();
    writeRecording(dir.file("r.rsp"), packets);
    for (size_t chunk : {size_t(1000), size_t(4096), size_t(7824), RecordingReader::kChunkBytes}) {
      size_t leftOver = 1;
      const auto records = readRecords(dir.file("r.rsp"), chunk, leftOver);
      CPPUNIT_ASSERT_EQUAL(packets.size(), records.size());
      CPPUNIT_ASSERT_EQUAL(size_t(0), leftOver);
      uint64_t offset = 0;
      for (size_t i = 0; i < packets.size(); ++i) {
        CPPUNIT_ASSERT_EQUAL(offset, records[i].first);
        CPPUNIT_ASSERT_MESSAGE(
            "record " + std::to_string(i) + ", chunks of " + std::to_string(chunk),
            packets[i] == records[i].second);
        offset += packets[i].size();
      }
    }
  }

  void testCutLastRecord() {
    const TempDir dir;
    auto packets = mixedPackets();
    packets.back().resize(packets.back().size() - 5);
    writeRecording(dir.file("cut.rsp"), packets);
    size_t leftOver = 0;
    const auto records = readRecords(dir.file("cut.rsp"), 1000, leftOver);
    CPPUNIT_ASSERT_EQUAL(packets.size() - 1, records.size());
    CPPUNIT_ASSERT_EQUAL(packets.back().size(), leftOver);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RecordingReaderTest);

}  // namespace
}  // namespace rtcp::ion
