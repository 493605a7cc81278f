// The trigger protocol (TriggerProtocol.h): requests and answers survive a round trip, and
// a malformed request is refused naming its line; the replay parset of a dump starts at the
// observation's block to the sample (ReplayParset.h).
#include <cppunit/extensions/HelperMacros.h>

#include <stdexcept>

#include "rtcp/ReplayParset.h"
#include "rtcp/SampleTime.h"
#include "rtcp/TriggerProtocol.h"

namespace rtcp::test {

class TriggerProtocolTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(TriggerProtocolTest);
  CPPUNIT_TEST(testRoundTrips);
  CPPUNIT_TEST(testMalformedRequestsAreRefused);
  CPPUNIT_TEST(testUtcOfSampleParsesBackToTheSample);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testRoundTrips() {
    TriggerRequest r;
    r.from = 1764312345.123456;
    r.to = 1764312347.5;
    r.stations = {"CS001LBA", "RS106LBA"};
    r.directory = "/data/dumps/a b";  // a blank in the path
    const TriggerRequest back = TriggerRequest::parse(r.format());
    CPPUNIT_ASSERT_EQUAL(r.from, back.from);
    CPPUNIT_ASSERT_EQUAL(r.to, back.to);
    CPPUNIT_ASSERT(r.stations == back.stations);
    CPPUNIT_ASSERT_EQUAL(r.directory, back.directory);

    TriggerAnswer a;
    a.status = "partial";
    a.firstBlock = 1;
    a.nrBlocks = 4;
    a.leadInBlocks = 2;
    a.firstSample = 195055;
    a.endSample = 976944;
    a.recordings = {{"CS001LBA", 0, 48811, 25773208, 2, "/data/dumps/a b/CS001LBA-0.rsp"}};
    a.gaps = {{"CS001LBA", 0, 195055, 507455, "gone from the buffer"}};
    const TriggerAnswer b = TriggerAnswer::parse(a.format());
    CPPUNIT_ASSERT_EQUAL(a.status, b.status);
    CPPUNIT_ASSERT_EQUAL(a.nrBlocks, b.nrBlocks);
    CPPUNIT_ASSERT_EQUAL(a.leadInBlocks, b.leadInBlocks);
    CPPUNIT_ASSERT_EQUAL(a.endSample, b.endSample);
    CPPUNIT_ASSERT_EQUAL(size_t(1), b.recordings.size());
    CPPUNIT_ASSERT_EQUAL(a.recordings[0].path, b.recordings[0].path);
    CPPUNIT_ASSERT_EQUAL(uint64_t(2), b.recordings[0].notRecorded);
    CPPUNIT_ASSERT_EQUAL(std::string("gone from the buffer"), b.gaps.at(0).why);

    TriggerAnswer refused;
    refused.error = "line one\nline two";
    CPPUNIT_ASSERT_EQUAL(std::string("line one line two"),
                         TriggerAnswer::parse(refused.format()).error);
  }

  void testMalformedRequestsAreRefused() {
    const std::string head = "rtcp-trigger-request 1\n";
    CPPUNIT_ASSERT(refusal("rtcp-trigger-request 2\nend\n").find("line 1") != std::string::npos);
    CPPUNIT_ASSERT(refusal(head + "from x\nto 2\ndirectory /d\nend\n").find("line 2 'from x'") !=
                   std::string::npos);
    CPPUNIT_ASSERT(refusal(head + "from 1\nto 2\ndirectory d\nend\n").find("absolute") !=
                   std::string::npos);
    CPPUNIT_ASSERT(refusal(head + "from 1\nto 2\nend\n").find("'directory'") != std::string::npos);
    CPPUNIT_ASSERT(
        refusal(head + "from 1\nto 2\nrm -rf /\ndirectory /d\nend\n").find("unknown item") !=
        std::string::npos);
    CPPUNIT_ASSERT(refusal(head + "from 1\nto 2\ndirectory /d\n").find("no 'end'") !=
                   std::string::npos);
  }

  /// dump.parset's start time: its first sample is the observation's block's, at both
  /// clocks, for sample numbers around today's.
  void testUtcOfSampleParsesBackToTheSample() {
    for (const int mhz : {200, 160}) {
      const SampleClock clock(mhz);
      for (int64_t sample = clock.secondStart(1764312345);
           sample < clock.secondStart(1764312345) + 5000; sample += 97)
        CPPUNIT_ASSERT_EQUAL(sample,
                             clock.firstSampleAtOrAfter(parseUtc(utcOfSample(mhz, sample))));
    }
  }

 private:
  static std::string refusal(const std::string& text) {
    try {
      TriggerRequest::parse(text);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "accepted";
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(TriggerProtocolTest);

}  // namespace rtcp::test
