// BlockValidator: every header fault has its own reason, and the payload length is
// trusted (skippable) only when it is exactly this observation's.
#include <cppunit/extensions/HelperMacros.h>

#include "BlockValidator.h"
#include "OutputLayout.h"
#include "StorageTestUtil.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {

class BlockValidatorTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(BlockValidatorTest);
  CPPUNIT_TEST(testGoodHeader);
  CPPUNIT_TEST(testRejects);
  CPPUNIT_TEST(testSuperstationShape);
  CPPUNIT_TEST_SUITE_END();

 public:
  static ObservationSettings settings(const std::string& extra = "") {
    TestObservation observation;
    observation.location = "localhost:/nonexistent";
    observation.extra = extra;
    return ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
  }
  static CorrelatedHeader good() {
    CorrelatedHeader h = CorrelatedHeader::read(makeBlock(4, 8, 1, 5).serialise(4242).data());
    return h;
  }

  void testGoodHeader() {
    const BlockValidator validator(settings(), {{0, 0}, {1, 1}});
    CPPUNIT_ASSERT_EQUAL(int64_t(6), validator.nrIntegrations());
    const HeaderCheck check = validator.check(good());
    CPPUNIT_ASSERT(check.reason == BlockReject::kNone);
    CPPUNIT_ASSERT_EQUAL(1, check.output);
  }

  void testRejects() {
    const BlockValidator validator(settings(),
                                   {{0, 0}});  // index 1 (subband 301) is stored elsewhere
    auto expect = [&](BlockReject reason, bool skippable, auto modify) {
      CorrelatedHeader h = good();
      h.subband = 0;
      modify(h);
      const HeaderCheck check = validator.check(h);
      CPPUNIT_ASSERT_EQUAL(std::string(toString(reason)), std::string(toString(check.reason)));
      CPPUNIT_ASSERT_EQUAL(skippable, check.payloadSkippable);
      CPPUNIT_ASSERT(!check.detail.empty());
    };
    expect(BlockReject::kMagic, false, [](CorrelatedHeader& h) { h.magic = 0x12345678; });
    expect(BlockReject::kVersion, false, [](CorrelatedHeader& h) { h.version = 2; });
    expect(BlockReject::kHeaderSize, false, [](CorrelatedHeader& h) { h.headerSize = 128; });
    expect(BlockReject::kObservationId, true, [](CorrelatedHeader& h) { h.observationId = 1; });
    expect(BlockReject::kSubband, true, [](CorrelatedHeader& h) { h.subband = 1; });
    expect(BlockReject::kSubband, true, [](CorrelatedHeader& h) { h.subband = 17; });
    expect(BlockReject::kIntegration, true, [](CorrelatedHeader& h) { h.integration = 6; });
    expect(BlockReject::kIntegration, true, [](CorrelatedHeader& h) { h.integration = ~0ull; });
    // A shape that differs but whose length is still this observation's: skippable.
    expect(BlockReject::kShape, true, [](CorrelatedHeader& h) { h.nrChannels = 4; });
    // Impossible sizes are never trusted, whatever they claim.
    expect(BlockReject::kShape, false, [](CorrelatedHeader& h) {
      h.nrStations = 100000;
      h.payloadSize = h.expectedPayloadSize();
    });
    expect(BlockReject::kPayloadSize, false,
           [](CorrelatedHeader& h) { h.payloadSize = 1ull << 62; });
    expect(BlockReject::kPayloadSize, false, [](CorrelatedHeader& h) { h.payloadSize -= 4; });
  }

  void testSuperstationShape() {
    const ObservationSettings s = settings("OLAP.tiedArrayStationNames = [CS002, CS003]\n");
    CPPUNIT_ASSERT_EQUAL(3, nrOutputStations(s));
    const std::vector<OutputStation> stations = outputStations(s);
    CPPUNIT_ASSERT_EQUAL(std::string("CS001LBA"), stations[0].name);
    CPPUNIT_ASSERT_EQUAL(std::string("CS002LBA+CS003LBA"), stations[1].name);
    CPPUNIT_ASSERT_EQUAL(std::string("RS106LBA"), stations[2].name);
    // The correlator's order: the superstation takes the first listed member's place.
    const std::vector<OutputStation> swapped =
        outputStations(settings("OLAP.tiedArrayStationNames = [CS003, CS001]\n"));
    CPPUNIT_ASSERT_EQUAL(size_t(3), swapped.size());
    CPPUNIT_ASSERT_EQUAL(std::string("CS002LBA"), swapped[0].name);
    CPPUNIT_ASSERT_EQUAL(std::string("CS003LBA+CS001LBA"), swapped[1].name);
    const auto& p1 = s.stations[0].position;
    const auto& p3 = s.stations[2].position;
    for (int k = 0; k < 3; ++k)
      CPPUNIT_ASSERT_DOUBLES_EQUAL((p1[k] + p3[k]) / 2, swapped[1].position[k], 1e-6);
    CPPUNIT_ASSERT_EQUAL(4, nrOutputStations(settings("OLAP.tiedArrayStationNames = [CS003]\n")));
    const BlockValidator validator(s, {{0, 0}});
    CorrelatedHeader h = CorrelatedHeader::read(makeBlock(3, 8, 0, 0).serialise(4242).data());
    CPPUNIT_ASSERT(validator.check(h).reason == BlockReject::kNone);
    h = good();
    h.subband = 0;
    CPPUNIT_ASSERT(validator.check(h).reason == BlockReject::kShape);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(BlockValidatorTest);

}  // namespace rtcp::storage::test
