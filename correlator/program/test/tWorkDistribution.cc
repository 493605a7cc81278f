// WorkDistribution: every (block, subband) has exactly one rank, an integration stays on
// one rank, a rank's share of a block is one range of subbands, and the ranks' shares
// differ by at most one subband; a beam-formed observation keeps each subband on one rank.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>

#include "WorkDistribution.h"

namespace rtcp::correlator::test {

class WorkDistributionTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(WorkDistributionTest);
  CPPUNIT_TEST(testEverySubbandOnce);
  CPPUNIT_TEST(testIntegrationStaysOnOneRank);
  CPPUNIT_TEST(testStationsDealtRoundRobin);
  CPPUNIT_TEST(testMoreRanksThanSubbands);
  CPPUNIT_TEST(testBeamFormedSubbandsStay);
  CPPUNIT_TEST(testRejectsEmptySizes);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEverySubbandOnce() {
    const WorkDistribution d(3, 5, 7, 2);
    for (int64_t block = 0; block < 10; ++block) {
      std::vector<int> owners(7, 0);
      size_t largest = 0, smallest = 100;
      for (int r = 0; r < 3; ++r) {
        const std::vector<int> mine = d.subbandsOf(r, block);
        largest = std::max(largest, mine.size());
        smallest = std::min(smallest, mine.size());
        CPPUNIT_ASSERT(std::is_sorted(mine.begin(), mine.end()));
        // One contiguous range: what a rank lends of every station from ionproc.
        const WorkDistribution::SubbandRange range = d.subbandRange(r, block);
        CPPUNIT_ASSERT_EQUAL(size_t(range.count), mine.size());
        for (size_t i = 0; i < mine.size(); ++i)
          CPPUNIT_ASSERT_EQUAL(range.first + int(i), mine[i]);
        for (int sb : mine) {
          ++owners[size_t(sb)];
          CPPUNIT_ASSERT_EQUAL(r, d.processingRank(block, sb));
        }
      }
      for (int n : owners) CPPUNIT_ASSERT_EQUAL(1, n);
      CPPUNIT_ASSERT(largest - smallest <= 1);
      CPPUNIT_ASSERT(int(largest) <= d.maxSubbandsPerRank());
    }
  }

  void testIntegrationStaysOnOneRank() {
    const WorkDistribution d(2, 4, 3, 4);
    for (int sb = 0; sb < 3; ++sb)
      for (int64_t integration = 0; integration < 5; ++integration)
        for (int k = 1; k < 4; ++k)
          CPPUNIT_ASSERT_EQUAL(d.processingRank(integration * 4, sb),
                               d.processingRank(integration * 4 + k, sb));
    // ... and the next integration moves on, so that an odd subband count balances.
    CPPUNIT_ASSERT(d.processingRank(0, 0) != d.processingRank(4, 0));
  }

  void testStationsDealtRoundRobin() {
    const WorkDistribution d(3, 7, 1, 1);
    CPPUNIT_ASSERT(std::vector<int>({0, 3, 6}) == d.stationsOf(0));
    CPPUNIT_ASSERT(std::vector<int>({2, 5}) == d.stationsOf(2));
    CPPUNIT_ASSERT_EQUAL(1, d.inputRank(4));
    const WorkDistribution many(8, 2, 1, 1);
    CPPUNIT_ASSERT(many.stationsOf(5).empty());
  }

  void testMoreRanksThanSubbands() {
    const WorkDistribution d(4, 2, 3, 1);
    for (int64_t block = 0; block < 8; ++block) {
      int owned = 0;
      for (int r = 0; r < 4; ++r) owned += d.subbandRange(r, block).count;
      CPPUNIT_ASSERT_EQUAL(3, owned);
    }
  }

  /// The beam former carries each subband's dedispersion and filter histories from block to
  /// block: with beam-formed output a subband's every block goes to the same rank, still
  /// one contiguous range per rank; correlation alone rotates.
  void testBeamFormedSubbandsStay() {
    ObservationSettings settings;
    settings.stations.resize(4);
    settings.subbands.resize(7);
    settings.blocksPerIntegration = 2;
    CPPUNIT_ASSERT(WorkDistribution::forObservation(3, settings).rotation() ==
                   WorkDistribution::Rotation::kEveryIntegration);
    settings.beamFormed.incoherentEnabled = true;
    const WorkDistribution d = WorkDistribution::forObservation(3, settings);
    CPPUNIT_ASSERT(d.rotation() == WorkDistribution::Rotation::kNone);
    for (int sb = 0; sb < 7; ++sb)
      for (int64_t block = 1; block < 12; ++block)
        CPPUNIT_ASSERT_EQUAL(d.processingRank(0, sb), d.processingRank(block, sb));
    for (int64_t block = 0; block < 12; ++block) {
      int owned = 0;
      for (int r = 0; r < 3; ++r) {
        const WorkDistribution::SubbandRange range = d.subbandRange(r, block);
        for (int i = 0; i < range.count; ++i)
          CPPUNIT_ASSERT_EQUAL(r, d.processingRank(block, range.first + i));
        owned += range.count;
      }
      CPPUNIT_ASSERT_EQUAL(7, owned);
    }
  }

  void testRejectsEmptySizes() {
    CPPUNIT_ASSERT_THROW(WorkDistribution(0, 1, 1, 1), std::invalid_argument);
    CPPUNIT_ASSERT_THROW(WorkDistribution(1, 1, 0, 1), std::invalid_argument);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(WorkDistributionTest);

}  // namespace rtcp::correlator::test
