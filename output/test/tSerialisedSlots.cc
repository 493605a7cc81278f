// SerialisedSlots: slots do not overlap, come back warmest first, and run over into the
// heap (never fail) when all are taken or an item is larger than a slot.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "SerialisedSlots.h"

namespace rtcp::ion::test {

class SerialisedSlotsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SerialisedSlotsTest);
  CPPUNIT_TEST(testSlotsHoldTheirBytes);
  CPPUNIT_TEST(testGivenBackWarmestFirst);
  CPPUNIT_TEST(testRunsOverIntoTheHeap);
  CPPUNIT_TEST(testMovedBytesGiveBackOnce);
  CPPUNIT_TEST_SUITE_END();

 public:
  /// Every slot filled with its own value keeps it while the others are written.
  void testSlotsHoldTheirBytes() {
    SerialisedSlots slots(1000, 8);  // rounded to 1024
    CPPUNIT_ASSERT_EQUAL(size_t(1024), slots.slotBytes());
    std::vector<SerialisedBytes> taken;
    for (int i = 0; i < 8; ++i) {
      taken.push_back(slots.take(1000 - size_t(i)));
      CPPUNIT_ASSERT_EQUAL(1000 - size_t(i), taken.back().size());
      std::memset(taken.back().data(), i + 1, taken.back().size());
    }
    for (int i = 0; i < 8; ++i)
      CPPUNIT_ASSERT(std::all_of(taken[size_t(i)].data(),
                                 taken[size_t(i)].data() + taken[size_t(i)].size(),
                                 [&](uint8_t b) { return b == i + 1; }));
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), slots.overflowed());
  }

  /// A slot given back is the next one taken (it is resident and in cache); reuses count.
  void testGivenBackWarmestFirst() {
    SerialisedSlots slots(256, 4);
    SerialisedBytes a = slots.take(256);
    SerialisedBytes b = slots.take(256);
    const uint8_t* first = a.data();
    const uint8_t* second = b.data();
    CPPUNIT_ASSERT(first != second);
    a = SerialisedBytes();  // gives the first back
    b = SerialisedBytes();  // then the second
    CPPUNIT_ASSERT_EQUAL(second, static_cast<const uint8_t*>(slots.take(10).data()));
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), slots.reused());
  }

  /// All slots taken, or more bytes than a slot: heap bytes of their own, counted.
  void testRunsOverIntoTheHeap() {
    SerialisedSlots slots(128, 2);
    SerialisedBytes a = slots.take(128), b = slots.take(128);
    SerialisedBytes c = slots.take(128);
    SerialisedBytes large = slots.take(129);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), slots.overflowed());
    CPPUNIT_ASSERT_EQUAL(size_t(129), large.size());
    std::memset(c.data(), 7, c.size());
    std::memset(large.data(), 9, large.size());
    CPPUNIT_ASSERT(c.data() != a.data() && c.data() != b.data());
    CPPUNIT_ASSERT_EQUAL(uint8_t(7), c.data()[127]);
  }

  /// Moving hands the slot over: it comes back once, when its last owner ends.
  void testMovedBytesGiveBackOnce() {
    SerialisedSlots slots(64, 2);
    const uint8_t* slot = nullptr;
    {
      SerialisedBytes a = slots.take(64);
      slot = a.data();
      SerialisedBytes b(std::move(a));
      CPPUNIT_ASSERT(a.empty());
      SerialisedBytes c;
      c = std::move(b);
      CPPUNIT_ASSERT_EQUAL(slot, static_cast<const uint8_t*>(c.data()));
    }
    SerialisedBytes again = slots.take(64);
    SerialisedBytes fresh = slots.take(64);
    CPPUNIT_ASSERT_EQUAL(slot, static_cast<const uint8_t*>(again.data()));
    CPPUNIT_ASSERT(fresh.data() != slot);
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), slots.overflowed());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SerialisedSlotsTest);

}  // namespace rtcp::ion::test
