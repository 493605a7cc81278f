// InputRecorder on a disk that fills while it records (a tmpfs of 1 MiB, SmallFileSystem):
// every packet is either in the recording or counted as not written (writeFailed), the
// recording holds whole packets only (a failed write is cut off again; the block of a
// direct-I/O tail is reserved before the disk fills, so the last bytes still find room),
// and the packets it holds are the ones appended, in order.
#include <cppunit/extensions/HelperMacros.h>

#include <fstream>
#include <iterator>

#include "InputRecorder.h"
#include "InputTestUtil.h"
#include "SmallFileSystem.h"

namespace rtcp::ion::test {

class RecorderFullDiskTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(RecorderFullDiskTest);
  CPPUNIT_TEST(testFullDiskKeepsWholePacketsAndCountsTheRest);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testFullDiskKeepsWholePacketsAndCountsTheRest() {
    TempDir dir;
    rtcp::test::SmallFileSystem disk(dir.file("disk"), 1 << 20);
    // 400-byte packets (3 beamlets at 16 bits), 1.6 MB in all; chunks of 64 KiB, buffers
    // for all of them (nothing dropped for want of a chunk); no bound: the disk stops it.
    Packets sent;
    for (int i = 0; i < 4000; ++i) sent.push_back(makePacket(1, 16, 3, int64_t(i) * 16, 0));
    const size_t size = sent[0].size();
    RecorderOptions options{disk.path() + "/rec", UINT64_MAX, 4 << 20, 64 << 10, false};
    InputRecorder recorder(options, {"CS001LBA-0.rsp"});
    for (const auto& p : sent) recorder.append(0, p);
    recorder.finish();
    const RecordingCounts c = recorder.counts(0);
    std::ifstream in(c.path, std::ios::binary);
    const std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in),
                                     std::istreambuf_iterator<char>()};
    std::cerr << "full disk: " << c.packets << " packets recorded (" << bytes.size() << " bytes), "
              << c.writeFailed << " not written\n";
    CPPUNIT_ASSERT(c.packets > 0 && c.writeFailed > 0);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), c.noBuffer + c.overBound);
    CPPUNIT_ASSERT_EQUAL(uint64_t(sent.size()), c.packets + c.writeFailed);
    CPPUNIT_ASSERT_EQUAL(c.packets * size, uint64_t(bytes.size()));
    CPPUNIT_ASSERT_EQUAL(c.bytes, uint64_t(bytes.size()));
    size_t next = 0;  // each record one of the packets appended, in their order
    for (size_t offset = 0; offset < bytes.size(); offset += size) {
      while (next < sent.size() && !std::equal(sent[next].begin(), sent[next].end(),
                                               bytes.begin() + std::ptrdiff_t(offset)))
        ++next;
      CPPUNIT_ASSERT_MESSAGE("record at byte " + std::to_string(offset), next < sent.size());
      ++next;
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(RecorderFullDiskTest);

}  // namespace rtcp::ion::test
