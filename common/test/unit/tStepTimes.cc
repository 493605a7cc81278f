// Time per step: laps add up per step, calls are counted, copies are snapshots, threads
// may share one instance, and the report states every step in order.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <thread>
#include <vector>

#include "rtcp/StepTimes.h"

using namespace rtcp;
using namespace std::chrono_literals;

class StepTimesTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StepTimesTest);
  CPPUNIT_TEST(testLaps);
  CPPUNIT_TEST(testThreadsShareOne);
  CPPUNIT_TEST(testReport);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testLaps() {
    StepTimes times({"a", "b"});
    for (int i = 0; i < 3; ++i) {
      auto t = StepTimes::Clock::now();
      std::this_thread::sleep_for(2ms);
      t = times.lap(0, t);
      std::this_thread::sleep_for(10ms);
      times.lap(1, t);
    }
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), times.calls(0));
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), times.calls(1));
    CPPUNIT_ASSERT(times.seconds(0) >= 0.006 && times.seconds(0) < times.seconds(1));
    CPPUNIT_ASSERT(times.seconds(1) >= 0.030 && times.seconds(1) < 5);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(times.seconds(0) + times.seconds(1), times.totalSeconds(), 1e-12);
    const StepTimes snapshot = times;
    times.add(0, 1s);
    CPPUNIT_ASSERT_EQUAL(uint64_t(3), snapshot.calls(0));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(snapshot.seconds(0) + 1.0, times.seconds(0), 1e-9);
    StepTimes assigned;
    assigned = times;
    CPPUNIT_ASSERT_EQUAL(std::string("b"), assigned.name(1));
    CPPUNIT_ASSERT_EQUAL(uint64_t(4), assigned.calls(0));
  }

  void testThreadsShareOne() {
    StepTimes times({"work"});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < 1000; ++i) times.add(0, 1ms);
      });
    for (auto& t : threads) t.join();
    CPPUNIT_ASSERT_EQUAL(uint64_t(4000), times.calls(0));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(4.0, times.seconds(0), 1e-9);
  }

  void testReport() {
    StepTimes times({"filter bank", "correlator"});
    times.add(0, 1500ms);
    times.add(0, 500ms);
    CPPUNIT_ASSERT_EQUAL(
        std::string("filter bank 2.000 s (2 x 1000.000 ms), correlator 0.000 s (0 x 0.000 ms)"),
        times.report());
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StepTimesTest);
