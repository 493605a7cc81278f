// The block -> integration mapping shared by the correlator and the output path.
#include <cppunit/extensions/HelperMacros.h>

#include <stdexcept>

#include "rtcp/Integrations.h"

using namespace rtcp;

class IntegrationsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(IntegrationsTest);
  CPPUNIT_TEST(testMapping);
  CPPUNIT_TEST(testProcessedBlocks);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testMapping() {
    const Integrations three(3);
    for (int64_t block = 0; block < 100; ++block) {
      const int64_t integration = three.of(block);
      CPPUNIT_ASSERT_EQUAL(block, three.firstBlock(integration) + three.slotOf(block));
      CPPUNIT_ASSERT(three.slotOf(block) >= 0 && three.slotOf(block) < 3);
    }
    CPPUNIT_ASSERT_EQUAL(int64_t(0), three.of(2));
    CPPUNIT_ASSERT_EQUAL(int64_t(1), three.of(3));
    CPPUNIT_ASSERT_EQUAL(int64_t(12), three.firstBlock(4));
    CPPUNIT_ASSERT_EQUAL(int64_t(7), Integrations(1).of(7));
    CPPUNIT_ASSERT_THROW(Integrations(0), std::invalid_argument);
  }

  void testProcessedBlocks() {
    ObservationSettings s;
    s.startTime = 1.8e9;
    s.stopTime = s.startTime + 10;
    s.blocksPerIntegration = 3;
    // Only whole integrations: the tail of fewer than 3 blocks is not processed.
    CPPUNIT_ASSERT_EQUAL(s.nrBlocks() / 3 * 3, nrProcessedBlocks(s));
    CPPUNIT_ASSERT(s.nrBlocks() - nrProcessedBlocks(s) < 3);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(IntegrationsTest);
