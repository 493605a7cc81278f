// StagingArea: bounded memory with back-pressure, high/low watermarks and the timer.
#include <cppunit/extensions/HelperMacros.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "StagingArea.h"

namespace rtcp::storage::test {

using namespace std::chrono_literals;

class StagingAreaTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(StagingAreaTest);
  CPPUNIT_TEST(testWatermarks);
  CPPUNIT_TEST(testTimer);
  CPPUNIT_TEST(testWriteAll);
  CPPUNIT_TEST(testBackPressure);
  CPPUNIT_TEST(testCloseDrainsEverything);
  CPPUNIT_TEST(testWriterServesItsShareOfOutputs);
  CPPUNIT_TEST_SUITE_END();

 public:
  static StagingOptions options(double flushSeconds) {
    StagingOptions o;
    o.capacityBytes = 8 * 100;  // 8 blocks of 100 bytes
    o.highWatermark = 0.75;     // 6 blocks
    o.lowWatermark = 0.25;      // 2 blocks
    o.flushIntervalSeconds = flushSeconds;
    return o;
  }
  static void stageOne(StagingArea& staging, int output, uint64_t integration) {
    auto block = staging.acquire();
    block->header.integration = integration;
    staging.stage(output, std::move(block));
  }

  void testWatermarks() {
    StagingArea staging(1, 100, options(1000));
    CPPUNIT_ASSERT_EQUAL(size_t(800), staging.capacityBytes());
    auto batch = std::async(std::launch::async, [&] { return staging.nextBatch(0); });
    for (uint64_t i = 0; i < 5; ++i) stageOne(staging, 0, i);
    CPPUNIT_ASSERT(batch.wait_for(200ms) ==
                   std::future_status::timeout);  // below the high watermark
    stageOne(staging, 0, 5);
    CPPUNIT_ASSERT(batch.wait_for(5s) == std::future_status::ready);
    const auto blocks = batch.get();
    CPPUNIT_ASSERT_EQUAL(size_t(4), blocks.size());  // drained from 6 down to the low watermark, 2
    for (size_t i = 0; i < blocks.size(); ++i)
      CPPUNIT_ASSERT_EQUAL(uint64_t(i), blocks[i]->header.integration);
    CPPUNIT_ASSERT_EQUAL(size_t(600), staging.highWaterBytes());
  }

  void testTimer() {
    StagingArea staging(2, 100, options(0.05));
    stageOne(staging, 1, 7);
    const auto start = std::chrono::steady_clock::now();
    const auto blocks = staging.nextBatch(1);
    CPPUNIT_ASSERT_EQUAL(size_t(1), blocks.size());
    CPPUNIT_ASSERT_EQUAL(uint64_t(7), blocks[0]->header.integration);
    CPPUNIT_ASSERT(std::chrono::steady_clock::now() - start < 2s);
  }

  void testWriteAll() {
    StagingArea staging(2, 100, options(1000));
    auto batch = std::async(std::launch::async, [&] { return staging.nextBatch(1); });
    stageOne(staging, 1, 3);
    CPPUNIT_ASSERT(batch.wait_for(200ms) ==
                   std::future_status::timeout);  // below the high watermark
    staging.writeAll();
    CPPUNIT_ASSERT(batch.wait_for(5s) == std::future_status::ready);
    CPPUNIT_ASSERT_EQUAL(size_t(1), batch.get().size());
  }

  void testBackPressure() {
    StagingArea staging(1, 100, options(1000));
    std::vector<std::unique_ptr<StagedBlock>> held;
    for (int i = 0; i < 8; ++i) held.push_back(staging.acquire());
    std::atomic<bool> got{false};
    std::thread receiver([&] {
      auto block = staging.acquire();  // staging is full: must wait, not drop or allocate
      got = true;
      staging.release(std::move(block));
    });
    std::this_thread::sleep_for(100ms);
    CPPUNIT_ASSERT(!got);
    staging.release(std::move(held.back()));
    held.pop_back();
    receiver.join();
    CPPUNIT_ASSERT(got);
    CPPUNIT_ASSERT_EQUAL(uint64_t(1), staging.nrBlockedAcquires());
    CPPUNIT_ASSERT_EQUAL(size_t(800), staging.highWaterBytes());
    for (auto& block : held) staging.release(std::move(block));
  }

  void testCloseDrainsEverything() {
    StagingArea staging(1, 100, options(1000));
    stageOne(staging, 0, 1);
    stageOne(staging, 0, 2);
    staging.close();
    CPPUNIT_ASSERT_EQUAL(size_t(2), staging.nextBatch(0).size());
    CPPUNIT_ASSERT(staging.nextBatch(0).empty());
    CPPUNIT_ASSERT(!staging.acquire());
  }

  void testWriterServesItsShareOfOutputs() {
    // Five outputs, two writers: writer 0 has outputs 0, 2, 4; writer 1 has 1 and 3.
    StagingArea staging(5, 100, options(1000), 2);
    CPPUNIT_ASSERT_EQUAL(2, staging.nrWriters());
    for (int output = 0; output < 5; ++output) stageOne(staging, output, uint64_t(10 + output));
    stageOne(staging, 2, 20);
    staging.writeAll();
    auto first = staging.nextBatch(0);
    CPPUNIT_ASSERT_EQUAL(size_t(4), first.size());
    CPPUNIT_ASSERT_EQUAL(0, first[0]->output);
    CPPUNIT_ASSERT_EQUAL(2, first[1]->output);  // each output's blocks in the order staged
    CPPUNIT_ASSERT_EQUAL(uint64_t(12), first[1]->header.integration);
    CPPUNIT_ASSERT_EQUAL(uint64_t(20), first[2]->header.integration);
    CPPUNIT_ASSERT_EQUAL(4, first[3]->output);
    auto second = staging.nextBatch(1);
    CPPUNIT_ASSERT_EQUAL(size_t(2), second.size());
    CPPUNIT_ASSERT_EQUAL(1, second[0]->output);
    CPPUNIT_ASSERT_EQUAL(3, second[1]->output);
    CPPUNIT_ASSERT_EQUAL(size_t(0), staging.nrQueued());
    staging.close();
    CPPUNIT_ASSERT(staging.nextBatch(0).empty());
    for (auto& block : first) staging.release(std::move(block));
    for (auto& block : second) staging.release(std::move(block));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(StagingAreaTest);

}  // namespace rtcp::storage::test
