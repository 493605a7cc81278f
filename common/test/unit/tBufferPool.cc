// Tests of BufferPool: reuse by exact size, the idle bound, returns after the pool is gone.
#include <cppunit/extensions/HelperMacros.h>

#include "rtcp/BufferPool.h"

using namespace rtcp;

class BufferPoolTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BufferPoolTest);
  CPPUNIT_TEST(testReusesReturnedBuffer);
  CPPUNIT_TEST(testSizesKeptApart);
  CPPUNIT_TEST(testIdleBoundMakesRoomForNewShape);
  CPPUNIT_TEST(testReturnAfterPoolIsGone);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testReusesReturnedBuffer() {
    BufferPool pool;
    auto first = pool.take(100000);
    CPPUNIT_ASSERT_EQUAL(size_t(100000), first->size());
    first->data()[0] = 42;
    const uint8_t* memory = first->data();
    first.reset();
    CPPUNIT_ASSERT_EQUAL(size_t(100000), pool.statistics().idleBytes);
    auto second = pool.take(100000);
    CPPUNIT_ASSERT(second->data() == memory);
    CPPUNIT_ASSERT_EQUAL(uint8_t(42), second->data()[0]);  // not cleared: the taker fills
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), pool.statistics().taken);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), pool.statistics().reused);
    CPPUNIT_ASSERT_EQUAL(size_t(0), pool.statistics().idleBytes);
  }

  void testSizesKeptApart() {
    BufferPool pool;
    pool.take(4096).reset();
    auto other = pool.take(8192);
    CPPUNIT_ASSERT_EQUAL(size_t(8192), other->size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(0), pool.statistics().reused);
  }

  void testIdleBoundMakesRoomForNewShape() {
    BufferPool pool(10000);
    auto a = pool.take(6000);
    auto b = pool.take(6000);
    a.reset();
    b.reset();  // 12000 > 10000: freed
    CPPUNIT_ASSERT_EQUAL(size_t(6000), pool.statistics().idleBytes);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), pool.statistics().discarded);
    pool.take(7000).reset();  // a new shape pushes out the old one
    CPPUNIT_ASSERT_EQUAL(size_t(7000), pool.statistics().idleBytes);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), pool.statistics().discarded);
    CPPUNIT_ASSERT_EQUAL(size_t(7000), pool.take(7000)->size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), pool.statistics().reused);
  }

  void testReturnAfterPoolIsGone() {
    std::shared_ptr<AlignedBuffer<uint8_t>> outlives;
    {
      BufferPool pool;
      outlives = pool.take(5000);
      outlives->data()[4999] = 7;
    }
    // Still the taker's after the pool went (ASan checks the reads and the late free).
    CPPUNIT_ASSERT_EQUAL(size_t(5000), outlives->size());
    CPPUNIT_ASSERT_EQUAL(uint8_t(7), outlives->data()[4999]);
    outlives.reset();
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BufferPoolTest);
