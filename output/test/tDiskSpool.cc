// DiskSpool: first in first out across the file, bounded, emptied when caught up, removed
// at the end.
#include <cppunit/extensions/HelperMacros.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "DiskSpool.h"

namespace rtcp::ion::test {

namespace {

std::vector<uint8_t> item(uint8_t value, size_t size) { return std::vector<uint8_t>(size, value); }

std::string spoolPath() {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/rtcp-spool-test-" +
         std::to_string(::getpid()) + ".spool";
}

}  // namespace

class DiskSpoolTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DiskSpoolTest);
  CPPUNIT_TEST(testFirstInFirstOut);
  CPPUNIT_TEST(testBoundAndEmptying);
  CPPUNIT_TEST(testNoCapacityNoFile);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testFirstInFirstOut() {
    const std::string path = spoolPath();
    {
      DiskSpool spool(path, 1 << 20);
      for (uint8_t i = 0; i < 10; ++i) CPPUNIT_ASSERT(spool.push(item(i, 100 + i)));
      CPPUNIT_ASSERT_EQUAL(size_t(10), spool.size());
      CPPUNIT_ASSERT(std::filesystem::exists(path));
      for (uint8_t i = 0; i < 5; ++i) CPPUNIT_ASSERT(*spool.pop() == item(i, 100 + i));
      CPPUNIT_ASSERT(spool.push(item(42, 7)));  // behind the five left
      for (uint8_t i = 5; i < 10; ++i) CPPUNIT_ASSERT(*spool.pop() == item(i, 100 + i));
      CPPUNIT_ASSERT(*spool.pop() == item(42, 7));
      CPPUNIT_ASSERT(spool.empty() && !spool.pop());
    }
    CPPUNIT_ASSERT(!std::filesystem::exists(path));
  }

  /// The file never exceeds the capacity; once the reader caught up it starts again.
  void testBoundAndEmptying() {
    const std::string path = spoolPath();
    DiskSpool spool(path, 3 * (8 + 1000));  // three items of 1000 bytes and their lengths
    for (uint8_t i = 0; i < 3; ++i) CPPUNIT_ASSERT(spool.push(item(i, 1000)));
    CPPUNIT_ASSERT(!spool.push(item(3, 1000)));  // full
    CPPUNIT_ASSERT(*spool.pop() == item(0, 1000));
    CPPUNIT_ASSERT(!spool.push(item(3, 1000)));  // the bound is on the file, not yet emptied
    CPPUNIT_ASSERT_EQUAL(uint64_t(3 * 1008), spool.highWaterBytes());
    CPPUNIT_ASSERT(*spool.pop() == item(1, 1000));
    CPPUNIT_ASSERT(*spool.pop() == item(2, 1000));
    CPPUNIT_ASSERT_EQUAL(uintmax_t(0), std::filesystem::file_size(path));  // caught up: emptied
    for (uint8_t i = 4; i < 7; ++i) CPPUNIT_ASSERT(spool.push(item(i, 1000)));
    CPPUNIT_ASSERT_EQUAL(size_t(3), spool.clear());
    CPPUNIT_ASSERT(spool.empty() && spool.bytes() == 0);
  }

  void testNoCapacityNoFile() {
    const std::string path = spoolPath();
    DiskSpool spool(path, 0);
    CPPUNIT_ASSERT(!spool.push(item(1, 10)));
    CPPUNIT_ASSERT(!std::filesystem::exists(path));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(DiskSpoolTest);

}  // namespace rtcp::ion::test
