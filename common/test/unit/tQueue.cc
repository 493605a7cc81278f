// Tests of the blocking Queue and the buffer Pool.
#include <cppunit/extensions/HelperMacros.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include "rtcp/Queue.h"

using namespace rtcp;
using namespace std::chrono_literals;

class QueueTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(QueueTest);
  CPPUNIT_TEST(testOrder);
  CPPUNIT_TEST(testCloseDrains);
  CPPUNIT_TEST(testCloseWakesConsumer);
  CPPUNIT_TEST(testCapacityBlocksProducer);
  CPPUNIT_TEST(testTryPush);
  CPPUNIT_TEST(testPopForTimesOut);
  CPPUNIT_TEST(testStatistics);
  CPPUNIT_TEST(testPoolMovesBuffers);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testOrder() {
    Queue<int> queue;
    for (int i = 0; i < 100; ++i) CPPUNIT_ASSERT(queue.push(i));
    CPPUNIT_ASSERT_EQUAL(size_t(100), queue.size());
    for (int i = 0; i < 100; ++i) CPPUNIT_ASSERT_EQUAL(i, *queue.pop());
  }

  void testCloseDrains() {
    Queue<int> queue;
    queue.push(1);
    queue.push(2);
    queue.close();
    CPPUNIT_ASSERT(queue.closed());
    CPPUNIT_ASSERT(!queue.push(3));
    CPPUNIT_ASSERT_EQUAL(1, *queue.pop());
    CPPUNIT_ASSERT_EQUAL(2, *queue.pop());
    CPPUNIT_ASSERT(!queue.pop());
    CPPUNIT_ASSERT(!queue.pop());
  }

  void testCloseWakesConsumer() {
    Queue<int> queue;
    auto consumer = std::async(std::launch::async, [&] { return queue.pop().has_value(); });
    CPPUNIT_ASSERT(consumer.wait_for(100ms) == std::future_status::timeout);
    queue.close();
    CPPUNIT_ASSERT(consumer.wait_for(5s) == std::future_status::ready);
    CPPUNIT_ASSERT(!consumer.get());
  }

  void testCapacityBlocksProducer() {
    Queue<int> queue("bounded", 2);
    CPPUNIT_ASSERT(queue.push(1));
    CPPUNIT_ASSERT(queue.push(2));
    std::atomic<bool> pushed{false};
    std::thread producer([&] {
      queue.push(3);
      pushed = true;
    });
    std::this_thread::sleep_for(100ms);
    CPPUNIT_ASSERT(!pushed);  // blocked while full
    CPPUNIT_ASSERT_EQUAL(size_t(2), queue.size());
    CPPUNIT_ASSERT_EQUAL(1, *queue.pop());
    producer.join();  // room made: the push completes
    CPPUNIT_ASSERT(pushed);
    CPPUNIT_ASSERT_EQUAL(2, *queue.pop());
    CPPUNIT_ASSERT_EQUAL(3, *queue.pop());

    // Closing a full queue releases a blocked producer, which is told it failed.
    queue.push(4);
    queue.push(5);
    auto blocked = std::async(std::launch::async, [&] { return queue.push(6); });
    CPPUNIT_ASSERT(blocked.wait_for(100ms) == std::future_status::timeout);
    queue.close();
    CPPUNIT_ASSERT(!blocked.get());
  }

  void testTryPush() {
    Queue<int> queue("bounded", 1);
    CPPUNIT_ASSERT(queue.tryPush(1));
    CPPUNIT_ASSERT(!queue.tryPush(2));  // full
    CPPUNIT_ASSERT_EQUAL(1, *queue.pop());
    CPPUNIT_ASSERT(queue.tryPush(3));
    queue.close();
    CPPUNIT_ASSERT(!queue.tryPush(4));  // closed
    CPPUNIT_ASSERT_EQUAL(3, *queue.pop());
  }

  void testPopForTimesOut() {
    Queue<int> queue;
    const auto start = std::chrono::steady_clock::now();
    CPPUNIT_ASSERT(!queue.popFor(50ms));
    CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start >= 50ms);
    queue.push(7);
    CPPUNIT_ASSERT_EQUAL(7, *queue.popFor(50ms));
  }

  void testStatistics() {
    Queue<int> queue("stats");
    CPPUNIT_ASSERT_EQUAL(std::string("stats"), queue.name());
    queue.popFor(1ms);  // found empty
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), queue.emptyPops());
    queue.push(1);
    std::this_thread::sleep_for(20ms);
    queue.pop();
    CPPUNIT_ASSERT(queue.meanWaitSeconds() >= 0.02);
    CPPUNIT_ASSERT(queue.meanWaitSeconds() < 5);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), queue.pops());
    // The report line states what was counted: 1 item, its wait (>= 20 ms), 1 empty pop.
    const std::string report = queue.report();
    CPPUNIT_ASSERT(report.starts_with("stats: 1 items, mean wait "));
    CPPUNIT_ASSERT(report.ends_with(" ms, found empty 1 times"));
    const double waitMs = std::stod(report.substr(report.find("wait ") + 5));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1e3 * queue.meanWaitSeconds(), waitMs, 1e-3);
  }

  void testPoolMovesBuffers() {
    Pool<std::vector<float>> pool("blocks");
    std::vector<const float*> addresses;
    for (int i = 0; i < 3; ++i) {
      auto buffer = std::make_unique<std::vector<float>>(1000);
      addresses.push_back(buffer->data());
      pool.add(std::move(buffer));
    }
    // Producer and consumer cycle 50 buffers through the three preallocated ones.
    std::thread producer([&] {
      for (int i = 0; i < 50; ++i) {
        auto buffer = *pool.free.pop();
        (*buffer)[0] = float(i);
        pool.filled.push(std::move(buffer));
      }
      pool.filled.close();
    });
    int expected = 0;
    while (auto buffer = pool.filled.pop()) {
      CPPUNIT_ASSERT_EQUAL(float(expected++), (**buffer)[0]);
      CPPUNIT_ASSERT(std::find(addresses.begin(), addresses.end(), (*buffer)->data()) !=
                     addresses.end());
      pool.free.push(std::move(*buffer));
    }
    producer.join();
    CPPUNIT_ASSERT_EQUAL(50, expected);
    CPPUNIT_ASSERT_EQUAL(size_t(3), pool.free.size());
    pool.close();
    CPPUNIT_ASSERT(pool.free.closed());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(QueueTest);
