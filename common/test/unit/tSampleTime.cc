// Tests of SampleClock, epochs and UTC strings (DESIGN §2.1).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "rtcp/CasacoreMeasures.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace {

constexpr uint32_t kDayStart = 1656460800;      // 2022-06-29 00:00:00 UTC
constexpr uint32_t kCaptureStart = 1656466200;  // 2022-06-29 01:30:00 UTC, the IE613 capture

/// Exactly: is sample n at or after time (ts + micro / 1e6 - slackNs / 1e9)?
bool atOrAfter(int64_t n, int clockMHz, int64_t ts, int64_t micro, int64_t slackNs = 0) {
  __extension__ using Int128 = __int128;
  // n * 1024 / clockHz >= t  <=>  n * 1024 * 1000 >= t_ns * clockMHz
  return Int128(n) * 1024 * 1000 >= (Int128(ts) * 1000000000 + micro * 1000 - slackNs) * clockMHz;
}

}  // namespace

}  // namespace rtcp

using namespace rtcp;

class SampleTimeTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(SampleTimeTest);
  CPPUNIT_TEST(testEvenAndOddSeconds200);
  CPPUNIT_TEST(testEverySecond160);
  CPPUNIT_TEST(testStampRoundTripOverADay);
  CPPUNIT_TEST(testSecondBoundaries);
  CPPUNIT_TEST(testFirstSampleAtOrAfter);
  CPPUNIT_TEST(testEpochRoundTrip);
  CPPUNIT_TEST(testParseAndFormatUtc);
  CPPUNIT_TEST(testBadUtcStrings);
  CPPUNIT_TEST(testBadClock);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEvenAndOddSeconds200() {
    const SampleClock clock(200);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(195312.5, clock.sampleRate(), 0.0);
    CPPUNIT_ASSERT_EQUAL(int64_t(195313), clock.samplesInSecond(kCaptureStart));
    CPPUNIT_ASSERT_EQUAL(int64_t(195312), clock.samplesInSecond(kCaptureStart + 1));
    // Even second: starts exactly on a sample; odd second: half a sample later.
    CPPUNIT_ASSERT_EQUAL(int64_t(kCaptureStart) * 390625 / 2, clock.secondStart(kCaptureStart));
    CPPUNIT_ASSERT_EQUAL((int64_t(kCaptureStart + 1) * 390625 + 1) / 2,
                         clock.secondStart(kCaptureStart + 1));
    CPPUNIT_ASSERT_EQUAL(int64_t(0), clock.secondStart(0));
    CPPUNIT_ASSERT_EQUAL(int64_t(195313), clock.secondStart(1));
    CPPUNIT_ASSERT_EQUAL(int64_t(390625), clock.secondStart(2));
  }

  void testEverySecond160() {
    const SampleClock clock(160);
    for (uint32_t ts = kDayStart; ts < kDayStart + 1000; ++ts) {
      CPPUNIT_ASSERT_EQUAL(int64_t(156250), clock.samplesInSecond(ts));
      CPPUNIT_ASSERT_EQUAL(int64_t(ts) * 156250, clock.secondStart(ts));
    }
  }

  void testStampRoundTripOverADay() {
    for (int mhz : {200, 160}) {
      const SampleClock clock(mhz);
      const int64_t first = clock.secondStart(kDayStart);
      const int64_t last = clock.secondStart(kDayStart + 86400);
      std::mt19937_64 random(42);
      std::uniform_int_distribution<int64_t> pick(first, last - 1);
      for (int i = 0; i < 100000; ++i) {
        const int64_t n = pick(random);
        const RspStamp s = clock.stamp(n);
        CPPUNIT_ASSERT(s.timestamp >= kDayStart && s.timestamp < kDayStart + 86400);
        CPPUNIT_ASSERT(clock.secondStart(s.timestamp) <= n);
        CPPUNIT_ASSERT(n < clock.secondStart(s.timestamp + 1));
        CPPUNIT_ASSERT(int64_t(s.sequence) < clock.samplesInSecond(s.timestamp));
        CPPUNIT_ASSERT_EQUAL(n, clock.sampleNumber(s));
      }
    }
  }

  void testSecondBoundaries() {
    const SampleClock clock(200);
    for (uint32_t ts = kDayStart; ts < kDayStart + 86400; ++ts) {
      const int64_t start = clock.secondStart(ts);
      CPPUNIT_ASSERT(clock.stamp(start) == (RspStamp{ts, 0}));
      const RspStamp before = clock.stamp(start - 1);
      CPPUNIT_ASSERT_EQUAL(ts - 1, before.timestamp);
      CPPUNIT_ASSERT_EQUAL(uint32_t(clock.samplesInSecond(ts - 1) - 1), before.sequence);
      CPPUNIT_ASSERT_EQUAL(int64_t(ts % 2 == 0 ? 195313 : 195312), clock.samplesInSecond(ts));
    }
  }

  void testFirstSampleAtOrAfter() {
    for (int mhz : {200, 160}) {
      const SampleClock clock(mhz);
      // Whole seconds: the first sample at or after is the second's first sample.
      for (uint32_t ts = kCaptureStart; ts < kCaptureStart + 100; ++ts)
        CPPUNIT_ASSERT_EQUAL(clock.secondStart(ts), clock.firstSampleAtOrAfter(double(ts)));
      std::mt19937_64 random(7);
      std::uniform_int_distribution<int64_t> pickMicro(0, 999999);
      std::uniform_int_distribution<int64_t> pickSecond(kDayStart, kDayStart + 86399);
      for (int i = 0; i < 20000; ++i) {
        // Microsecond times, checked against exact integer arithmetic. A double holds
        // today's Unix time to 238 ns (so ts + micro * 1e-6 is off by up to 119 ns), and a
        // time up to one such ulp after a sample counts as that sample: 500 ns of slack,
        // a tenth of a sample.
        const int64_t ts = pickSecond(random), micro = pickMicro(random);
        const int64_t n = clock.firstSampleAtOrAfter(double(ts) + micro * 1e-6);
        CPPUNIT_ASSERT(atOrAfter(n, mhz, ts, micro, 500));
        CPPUNIT_ASSERT(!atOrAfter(n - 1, mhz, ts, micro));
        // A sample's own time maps back to it; half a sample later to the next one.
        const int64_t m = n + micro;
        CPPUNIT_ASSERT_EQUAL(m, clock.firstSampleAtOrAfter(clock.unixTime(m)));
        CPPUNIT_ASSERT_EQUAL(
            m + 1, clock.firstSampleAtOrAfter(clock.unixTime(m) + 0.5 / clock.sampleRate()));
        CPPUNIT_ASSERT_EQUAL(
            m, clock.firstSampleAtOrAfter(clock.unixTime(m) - 0.5 / clock.sampleRate()));
      }
    }
  }

  void testEpochRoundTrip() {
    const casacore::MEpoch epoch = toEpoch(kCaptureStart);
    CPPUNIT_ASSERT_EQUAL(int(casacore::MEpoch::UTC), int(epoch.getRefPtr()->getType()));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(59759.0625, epoch.getValue().get(), 1e-12);
    // TAI - UTC was 37 s in 2022: proves the epoch is UTC to casacore's conversions.
    const casacore::MEpoch tai = casacore::MEpoch::Convert(epoch, casacore::MEpoch::TAI)();
    CPPUNIT_ASSERT_DOUBLES_EQUAL(37.0, (tai.getValue().get() - 59759.0625) * 86400.0, 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(double(kCaptureStart), toUnixTime(tai), 1e-6);

    std::mt19937_64 random(3);
    std::uniform_real_distribution<double> pick(0.0, 2e9);
    for (int i = 0; i < 1000; ++i) {
      const double t = pick(random);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(t, toUnixTime(toEpoch(t)), 1e-6);
    }
    CPPUNIT_ASSERT_DOUBLES_EQUAL(59759.0625 * 86400.0, unixToMjdSeconds(kCaptureStart), 1e-6);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(double(kCaptureStart), mjdSecondsToUnix(59759.0625 * 86400.0),
                                 1e-6);
  }

  void testParseAndFormatUtc() {
    CPPUNIT_ASSERT_EQUAL(double(kCaptureStart), parseUtc("2022-06-29 01:30:00"));
    CPPUNIT_ASSERT_EQUAL(double(kCaptureStart), parseUtc("2022-06-29T01:30:00"));
    CPPUNIT_ASSERT_EQUAL(0.0, parseUtc("1970-01-01 00:00:00"));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(kCaptureStart + 0.25, parseUtc("2022-06-29 01:30:00.25"), 1e-9);
    CPPUNIT_ASSERT_EQUAL(double(1795377600), parseUtc("2026-11-22 20:00:00"));
    CPPUNIT_ASSERT_EQUAL(std::string("2022-06-29 01:30:00"), formatUtc(kCaptureStart));
    CPPUNIT_ASSERT_EQUAL(std::string("2022-06-29 01:30:00.25"), formatUtc(kCaptureStart + 0.25));
    CPPUNIT_ASSERT_EQUAL(std::string("2024-02-29 23:59:59"),
                         formatUtc(parseUtc("2024-02-29 23:59:59")));
    std::mt19937_64 random(5);
    std::uniform_int_distribution<int64_t> pick(0, 4000000000LL);
    for (int i = 0; i < 1000; ++i) {
      const double t = double(pick(random));
      CPPUNIT_ASSERT_EQUAL(t, parseUtc(formatUtc(t)));
    }
  }

  void testBadUtcStrings() {
    for (const char* bad :
         {"", "yesterday", "2022-06-29", "2022-06-29 1:30:00", "2022/06/29 01:30:00",
          "2022-13-01 00:00:00", "2022-02-30 00:00:00", "2022-06-29 24:00:00",
          "2022-06-29 01:30:00xyz", "2022-06-29 01:30:00.", "2022-06-29 01:30:00.5x"}) {
      try {
        parseUtc(bad);
        CPPUNIT_FAIL(std::string("accepted bad time '") + bad + "'");
      } catch (const std::invalid_argument& e) {
        // The message quotes the offending text.
        CPPUNIT_ASSERT(std::string(e.what()).find(std::string("'") + bad + "'") !=
                       std::string::npos);
      }
    }
  }

  void testBadClock() { CPPUNIT_ASSERT_THROW(SampleClock(100), std::invalid_argument); }
};

CPPUNIT_TEST_SUITE_REGISTRATION(SampleTimeTest);
