// Which dates casacore's measures tables cover, and what rtcp tells the operator when they
// do not (the tables themselves: observe_parset_errors_test, with tables of its own).
#include <cppunit/extensions/HelperMacros.h>

#include "rtcp/MeasuresData.h"
#include "rtcp/SampleTime.h"

namespace rtcp::test {
namespace {

double unixOfMjd(double mjd) { return mjdSecondsToUnix(mjd * 86400.0); }

MeasuresCoverage coverage() {
  MeasuresCoverage c;
  c.measured = {"IERSeop97", "/data/geodetic/IERSeop97", 37665, 61000, "2025/12/01/00:00"};
  c.predicted = {"IERSpredict", "/data/geodetic/IERSpredict", 60900, 61100, "2025/12/01/00:00"};
  c.leapSeconds = {"TAI_UTC", "/data/geodetic/TAI_UTC", 37300, 61200, "2026/01/01/00:00"};
  return c;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class MeasuresDataTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(MeasuresDataTest);
  CPPUNIT_TEST(testCovered);
  CPPUNIT_TEST(testEarthOrientationMissing);
  CPPUNIT_TEST(testLeapSecondsStale);
  CPPUNIT_TEST(testNoTablesAtAll);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testCovered() {
    const MeasuresCoverage c = coverage();
    CPPUNIT_ASSERT(c.coversEarthOrientation(60000.2, 60000.9));
    CPPUNIT_ASSERT(c.coversEarthOrientation(60990, 61050));  // measured, then predicted
    CPPUNIT_ASSERT_EQUAL(std::string(), measuresProblem(c, unixOfMjd(61050.5), unixOfMjd(61050.6)));
  }

  void testEarthOrientationMissing() {
    const MeasuresCoverage c = coverage();
    CPPUNIT_ASSERT(!c.coversEarthOrientation(61099.5, 61100.2));  // the last row is not used
    const std::string text = measuresProblem(c, unixOfMjd(61150.5), unixOfMjd(61150.6));
    CPPUNIT_ASSERT(contains(text, "do not cover the observation"));
    CPPUNIT_ASSERT(contains(
        text, "Earth orientation: IERSeop97 (/data/geodetic/IERSeop97): 1962-01-01 to 2025-11-21"));
    CPPUNIT_ASSERT(contains(text, "UT1-UTC and polar motion as 0"));
    CPPUNIT_ASSERT(!contains(text, "Leap seconds"));
    CPPUNIT_ASSERT(contains(text, "measures.directory"));
  }

  void testLeapSecondsStale() {
    const MeasuresCoverage c = coverage();
    const std::string text =
        measuresProblem(c, unixOfMjd(61050), unixOfMjd(61250));  // ends past TAI_UTC
    CPPUNIT_ASSERT(contains(text, "Leap seconds: TAI_UTC (/data/geodetic/TAI_UTC)"));
    CPPUNIT_ASSERT(contains(text, "dated 2026/01/01/00:00, valid 180 days"));
    CPPUNIT_ASSERT(contains(text, "Earth orientation"));  // the end lies beyond IERSpredict too
  }

  void testNoTablesAtAll() {
    MeasuresCoverage c;
    c.measured.name = "IERSeop97";
    c.predicted.name = "IERSpredict";
    c.leapSeconds.name = "TAI_UTC";
    CPPUNIT_ASSERT(!c.coversEarthOrientation(60000, 60000));
    CPPUNIT_ASSERT(!c.coversLeapSeconds(60000));
    const std::string text = measuresProblem(c, unixOfMjd(60000), unixOfMjd(60000.1));
    CPPUNIT_ASSERT(contains(text, "no IERS tables (IERSeop97, IERSpredict) found"));
    CPPUNIT_ASSERT(contains(text, "TAI_UTC not found"));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(MeasuresDataTest);

}  // namespace rtcp::test
