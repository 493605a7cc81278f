// Tests of the geometric delay model (DESIGN §2.3) against independent geometry.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <cstring>

#include "rtcp/CasacoreMeasures.h"
#include "rtcp/DelayModel.h"
#include "rtcp/DirectionConverter.h"
#include "rtcp/SampleTime.h"

namespace rtcp {
namespace {

using Vec = std::array<double, 3>;

const Vec kReference{3826577.066, 461022.948, 5064892.786};  // LOFAR core
const Direction kCasA{6.123487681, 1.026515139};             // circumpolar at LOFAR
const double kTime = 1795377600.0;                           // 2026-11-22 20:00:00 UTC
constexpr double kSiderealDay = 86164.0905;

Vec add(Vec a, Vec b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
double dot(Vec a, Vec b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// East, north and up at a position. casacore's AZEL frame is relative to the geocentric
/// vertical (the radial direction), not the geodetic one, so that is the "up" here.
struct LocalFrame {
  Vec east, north, up;
  explicit LocalFrame(const Vec& p) {
    const double lon = std::atan2(p[1], p[0]);
    const double lat = std::atan2(p[2], std::hypot(p[0], p[1]));
    east = {-std::sin(lon), std::cos(lon), 0};
    north = {-std::sin(lat) * std::cos(lon), -std::sin(lat) * std::sin(lon), std::cos(lat)};
    up = {std::cos(lat) * std::cos(lon), std::cos(lat) * std::sin(lon), std::sin(lat)};
  }
  Vec toItrf(double e, double n, double u) const {
    return {e * east[0] + n * north[0] + u * up[0], e * east[1] + n * north[1] + u * up[1],
            e * east[2] + n * north[2] + u * up[2]};
  }
};

/// The source direction from azimuth and elevation at the reference position (casacore AZEL).
Vec directionFromAzEl(const Direction& source, double unixTime) {
  casacore::MeasFrame frame(
      toEpoch(unixTime),
      casacore::MPosition(casacore::MVPosition(kReference[0], kReference[1], kReference[2]),
                          casacore::MPosition::ITRF));
  const casacore::MDirection j2000(casacore::MVDirection(source.ra, source.dec),
                                   casacore::MDirection::J2000);
  const casacore::MDirection azel = casacore::MDirection::Convert(
      j2000, casacore::MDirection::Ref(casacore::MDirection::AZEL, frame))();
  const casacore::Vector<casacore::Double> angles = azel.getAngle("rad").getValue();
  const double az = angles[0], el = angles[1];
  return LocalFrame(kReference)
      .toItrf(std::sin(az) * std::cos(el), std::cos(az) * std::cos(el), std::sin(el));
}

}  // namespace
}  // namespace rtcp

using namespace rtcp;

class DelayModelTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(DelayModelTest);
  CPPUNIT_TEST(testStationAtReference);
  CPPUNIT_TEST(testSwapNegates);
  CPPUNIT_TEST(testNorthPole);
  CPPUNIT_TEST(testAgainstAzEl);
  CPPUNIT_TEST(testSiderealDay);
  CPPUNIT_TEST(testDelaysAreAFunctionOfTimeAlone);
  CPPUNIT_TEST(testClockCorrectionAndSettings);
  CPPUNIT_TEST(testSunMovesOnTheSky);
  CPPUNIT_TEST(testAzElGeoZenith);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testStationAtReference() {
    DelayModel model(kReference, {kReference}, {0.0});
    CPPUNIT_ASSERT_EQUAL(0.0, model.delays(kCasA, kTime)[0]);
  }

  void testSwapNegates() {
    const Vec station = add(kReference, {-800.0, 350.0, 420.0});
    DelayModel forward(kReference, {station}, {0.0});
    DelayModel backward(station, {kReference}, {0.0});
    double largest = 0;
    for (double t = kTime; t < kTime + 86400; t += 3 * 3600.0) {
      const double a = forward.delays(kCasA, t)[0], b = backward.delays(kCasA, t)[0];
      largest = std::max(largest, std::abs(a));
      CPPUNIT_ASSERT_DOUBLES_EQUAL(-a, b, 1e-12);
    }
    CPPUNIT_ASSERT(largest > 1e-6);
  }

  void testNorthPole() {
    const Direction pole{0.0, M_PI / 2};
    const Vec offset{300.0, -200.0, 1000.0};
    DelayModel model(kReference, {add(kReference, offset)}, {0.0});
    for (double t : {kTime, kTime + 12345.0}) {
      const Vec s = model.itrfDirection(pole, t);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, dot(s, s), 1e-12);
      const double angle = std::acos(std::min(1.0, s[2]));
      CPPUNIT_ASSERT(angle < 0.5 * M_PI / 180);
      CPPUNIT_ASSERT(angle > 0.05 * M_PI / 180);  // 27 years of precession moved it
      const double length = std::sqrt(dot(offset, offset));
      CPPUNIT_ASSERT_DOUBLES_EQUAL(offset[2] / kSpeedOfLight, model.delays(pole, t)[0],
                                   length * std::sin(0.5 * M_PI / 180) / kSpeedOfLight);
    }
  }

  void testAgainstAzEl() {
    // A station 1 km from the reference, in several directions of the local frame.
    const LocalFrame local(kReference);
    const Vec offsets[] = {local.toItrf(1000, 0, 0), local.toItrf(0, 1000, 0),
                           local.toItrf(0, 0, 1000), local.toItrf(600, -640, 480)};
    std::vector<Vec> stations;
    for (const Vec& o : offsets) stations.push_back(add(kReference, o));
    DelayModel model(kReference, stations, {0, 0, 0, 0});
    for (const Direction& source :
         {kCasA, Direction{5.2336866848, 0.7109425145}, Direction{1.0, 0.2}}) {
      for (double t = kTime; t < kTime + 86400; t += 5 * 3600.0) {
        const Vec s = directionFromAzEl(source, t);
        const std::vector<double> delays = model.delays(source, t);
        for (size_t i = 0; i < stations.size(); ++i)
          CPPUNIT_ASSERT_DOUBLES_EQUAL(dot(offsets[i], s) / kSpeedOfLight, delays[i], 1e-10);
      }
    }
  }

  void testSiderealDay() {
    // A 1 km and a 60 km baseline.
    const Vec offsets[] = {{700, 300, -600}, {50000, 30000, -20000}};
    DelayModel model(kReference, {add(kReference, offsets[0]), add(kReference, offsets[1])},
                     {0, 0});
    for (double t : {kTime, kTime + 5000.0, kTime + 40000.0}) {
      const std::vector<double> now = model.delays(kCasA, t);
      const std::vector<double> later = model.delays(kCasA, t + kSiderealDay);
      const std::vector<double> quarter = model.delays(kCasA, t + kSiderealDay / 4);
      CPPUNIT_ASSERT(std::abs(now[0] - quarter[0]) > 1e-6);  // the Earth turned
      CPPUNIT_ASSERT_DOUBLES_EQUAL(now[0], later[0], 1e-9);
      // Precession, nutation and aberration move the source by some 1e-6 rad a day.
      for (int i = 0; i < 2; ++i) {
        const double length = std::sqrt(dot(offsets[i], offsets[i]));
        CPPUNIT_ASSERT_DOUBLES_EQUAL(now[i], later[i], 1e-5 * length / kSpeedOfLight);
      }
    }
  }

  /// A model's delays do not depend on what it was asked before (casacore extrapolates from
  /// the epoch its engines were first asked: DirectionConverter.h), bit for bit: one asked
  /// from the start of an observation and one asked from a later block (a replayed dump)
  /// agree, also across an anchor of the engines and for a moving body (SUN).
  void testDelaysAreAFunctionOfTimeAlone() {
    const Vec offset{50000, 30000, -20000};
    const double start = std::floor(kTime / kEpochAnchorSeconds) * kEpochAnchorSeconds;
    for (const Direction& d : {kCasA, Direction{0, 0, "SUN"}}) {
      DelayModel live(kReference, {add(kReference, offset)}, {0});
      DelayModel replay(kReference, {add(kReference, offset)}, {0});
      for (double t = start + 1; t < start + kEpochAnchorSeconds + 200; t += 37) live.delays(d, t);
      for (double t :
           {start + 300.5, start + kEpochAnchorSeconds - 0.25, start + kEpochAnchorSeconds + 100}) {
        const double a = replay.delays(d, t)[0], b = live.delays(d, t)[0];
        CPPUNIT_ASSERT_MESSAGE(
            d.type + " at +" + std::to_string(t - start) + ": " + std::to_string(a - b),
            std::memcmp(&a, &b, sizeof a) == 0);
      }
    }
  }

  void testClockCorrectionAndSettings() {
    ObservationSettings settings;
    settings.referencePhaseCenter = kReference;
    StationSettings a, b;
    a.position = kReference;
    a.clockCorrection = 1e-6;
    b.position = add(kReference, {100, 200, 300});
    b.clockCorrection = -2e-6;
    b.delay = {1e-7, 3e-7};  // with clock correction: their mean joins the delay
    settings.stations = {a, b};
    DelayModel fromSettings(settings);
    DelayModel plain(kReference, {a.position, b.position}, {0, 0});
    CPPUNIT_ASSERT_EQUAL(2, fromSettings.nrStations());
    const std::vector<double> with = fromSettings.delays(kCasA, kTime),
                              without = plain.delays(kCasA, kTime);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1e-6, with[0], 1e-15);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(without[1] - 2e-6 + 2e-7, with[1], 1e-15);
    settings.correctClocks = false;  // then none of them
    CPPUNIT_ASSERT_DOUBLES_EQUAL(without[1], DelayModel(settings).delays(kCasA, kTime)[1], 1e-15);
    CPPUNIT_ASSERT_THROW(DelayModel(kReference, {a.position}, {0.0, 1.0}), std::invalid_argument);
  }

  void testSunMovesOnTheSky() {
    const Direction sun{0, 0, "SUN"};
    DirectionConverter converter(kReference);
    // At the June solstice of 2026 (06-21 08:24 UTC) the Sun stands at RA 6 h, Dec +23.44 deg;
    // at the March equinox (03-20 14:46 UTC) at RA 0, Dec 0 (J2000, to the precession since).
    const Direction june = converter.j2000(sun, parseUtc("2026-06-21 08:24:00"));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(M_PI / 2, june.ra, 0.5 * M_PI / 180);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(23.44 * M_PI / 180, june.dec, 0.05 * M_PI / 180);
    const Direction march = converter.j2000(sun, parseUtc("2026-03-20 14:46:00"));
    CPPUNIT_ASSERT(std::min(march.ra, 2 * M_PI - march.ra) < 0.5 * M_PI / 180);
    CPPUNIT_ASSERT_DOUBLES_EQUAL(0, march.dec, 0.2 * M_PI / 180);
    // Delays toward the Sun are the delays toward where it stands then, in J2000.
    const Vec station = add(kReference, {-3000, 2000, 1500});
    DelayModel model(kReference, {station}, {});
    for (const double t : {parseUtc("2026-06-21 12:00:00"), parseUtc("2026-06-21 12:10:00")}) {
      const double toSun = model.delays(sun, t)[0];
      const double toFixed = model.delays(converter.j2000(sun, t), t)[0];
      // To a few arcseconds (casacore applies aberration on the two ways differently):
      // 0.2 ns on these 4 km, 0.01 radian at 80 MHz.
      CPPUNIT_ASSERT_DOUBLES_EQUAL(toFixed, toSun, 5e-10);
    }
    // ... and differ from a fixed direction's: the Sun moves about 1 degree a day.
    const Direction noon = converter.j2000(sun, parseUtc("2026-06-21 12:00:00"));
    const Direction nextDay = converter.j2000(sun, parseUtc("2026-06-22 12:00:00"));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, (nextDay.ra - noon.ra) * std::cos(noon.dec) * 180 / M_PI,
                                 0.2);
  }

  void testAzElGeoZenith() {
    // AZELGEO elevation 90 degrees: straight up along the geodetic normal, at any time.
    DirectionConverter converter(kReference);
    const double lat = 52.9148 * M_PI / 180, lon = std::atan2(kReference[1], kReference[0]);
    const Vec normal{std::cos(lat) * std::cos(lon), std::cos(lat) * std::sin(lon), std::sin(lat)};
    for (const double t : {kTime, kTime + 3 * 3600}) {
      const Vec up = converter.itrf({0, M_PI / 2, "AZELGEO"}, t);
      CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0, dot(up, normal), 1e-6);
    }
    CPPUNIT_ASSERT_THROW(DirectionConverter::checkType("NOWHERE"), std::invalid_argument);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(DelayModelTest);
