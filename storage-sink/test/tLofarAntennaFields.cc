// LOFAR_ANTENNA_FIELD's contents as storage-sink builds them: element positions against
// the shipped element table, orthonormal field axes, the elements each antenna set uses
// (LBA_OUTER, LBA_INNER, HBA_DUAL with HBA0/HBA1 fields, HBA_JOINED, ...), HBA tiles
// against LOFAR's own iHBADeltas files, superstations and stations the tables lack.
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <map>
#include <set>

#include "AntennaSets.h"
#include "LofarAntennaFields.h"
#include "rtcp/Csv.h"

namespace rtcp::storage::test {
namespace {

using Elements = std::map<std::pair<std::string, std::string>, std::vector<Vector3>>;

/// parsets/AntennaElements.csv read on its own: absolute ETRS positions per station, type.
const Elements& shippedElements() {
  static const Elements elements = [] {
    Elements out;
    readCsv(dataDirectory() + "/AntennaElements.csv", "STATION,FIELD,ELEMENT,X,Y,Z",
            [&](const CsvRow& row) {
              out[{row.cells[0], row.cells[1]}].push_back(
                  {row.number(3, "X"), row.number(4, "Y"), row.number(5, "Z")});
            });
    return out;
  }();
  return elements;
}

LofarAntennaFields describe(const std::vector<MsAntenna>& antennas, const std::string& antennaSet) {
  return describeLofarAntennaFields(antennas, antennaSet, AntennaFieldTable::shipped(),
                                    StationTable::shipped());
}

MsAntenna antenna(const std::string& station, const std::string& field) {
  const auto centre = StationTable::shipped().find(
      station, field == "HBA" && station.starts_with("CS") ? "HBA" : field);
  return {station + field, centre ? centre->position : Vector3{}, {{station, field}}};
}

/// The elements a row uses (either polarisation unflagged).
std::set<int> used(const LofarFieldRow& row) {
  std::set<int> out;
  for (size_t e = 0; e < row.elementFlags.size(); ++e)
    if (!row.elementFlags[e][0] || !row.elementFlags[e][1]) out.insert(int(e));
  return out;
}

std::set<int> range(int first, int last) {
  std::set<int> out;
  for (int e = first; e <= last; ++e) out.insert(e);
  return out;
}

double dot(const Vector3& a, const Vector3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// POSITION + ELEMENT_OFFSET equals the element table within 1 mm.
void checkPositions(const LofarFieldRow& row, const std::vector<Vector3>& expected,
                    const std::string& what) {
  CPPUNIT_ASSERT_EQUAL_MESSAGE(what, expected.size(), row.elementOffsets.size());
  for (size_t e = 0; e < expected.size(); ++e)
    for (int k = 0; k < 3; ++k)
      CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + " element " + std::to_string(e), expected[e][k],
                                           row.position[k] + row.elementOffsets[e][k], 1e-3);
}

/// Orthonormal, right-handed, r up.
void checkAxes(const LofarFieldRow& row, const std::string& what) {
  const auto& [p, q, r] = row.axes;
  for (const Vector3* axis : {&p, &q, &r})
    CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what, 1.0, dot(*axis, *axis), 1e-12);
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what, 0.0, dot(p, q), 1e-12);
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what, 0.0, dot(q, r), 1e-12);
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what, 0.0, dot(p, r), 1e-12);
  const Vector3 pxq{p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2],
                    p[0] * q[1] - p[1] * q[0]};
  CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(what + ": p x q = r (r up)", 1.0, dot(pxq, r), 1e-12);
  CPPUNIT_ASSERT_MESSAGE(what + ": r points away from the Earth", dot(r, row.position) > 0);
}

}  // namespace

class LofarAntennaFieldsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(LofarAntennaFieldsTest);
  CPPUNIT_TEST(testEveryStationMatchesTheElementTable);
  CPPUNIT_TEST(testLbaOuter);
  CPPUNIT_TEST(testLbaInner);
  CPPUNIT_TEST(testHbaDualFields);
  CPPUNIT_TEST(testHbaJoined);
  CPPUNIT_TEST(testHbaZeroAndOne);
  CPPUNIT_TEST(testTilesAsLofarsHbaDeltas);
  CPPUNIT_TEST(testOtherAntennaSets);
  CPPUNIT_TEST(testSuperstation);
  CPPUNIT_TEST(testStationsAndClocks);
  CPPUNIT_TEST(testStationTheTablesLack);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryStationMatchesTheElementTable() {
    size_t rows = 0;
    for (const auto& [key, expected] : shippedElements()) {
      const auto& [station, type] = key;
      const LofarAntennaFields fields =
          describe({antenna(station, type)}, type == "LBA" ? "LBA_OUTER" : "HBA_JOINED");
      CPPUNIT_ASSERT_MESSAGE(
          station + type + ": " + (fields.warnings.empty() ? "" : fields.warnings[0]),
          fields.warnings.empty());
      for (const LofarFieldRow& row : fields.fields) {
        checkPositions(row, expected, station + " " + row.name);
        checkAxes(row, station + " " + row.name);
        ++rows;
      }
    }
    CPPUNIT_ASSERT(rows > 100);  // 53 stations, two fields each, core HBA as two rows
  }

  void testLbaOuter() {
    const LofarAntennaFields f = describe(
        {antenna("CS001", "LBA"), antenna("RS106", "LBA"), antenna("DE601", "LBA")}, "LBA_OUTER");
    CPPUNIT_ASSERT_EQUAL(size_t(3), f.fields.size());
    CPPUNIT_ASSERT((used(f.fields[0]) == range(48, 95)));  // core: the outer half
    CPPUNIT_ASSERT((used(f.fields[1]) == range(48, 95)));  // remote too
    CPPUNIT_ASSERT((used(f.fields[2]) == range(0, 95)));   // international: every dipole
    // RCU r reads outer dipole 48 + r/2, polarisation r%2 (LOFAR's LBL inputs).
    CPPUNIT_ASSERT_EQUAL(0, f.fields[0].elementRcus[48][0]);
    CPPUNIT_ASSERT_EQUAL(1, f.fields[0].elementRcus[48][1]);
    CPPUNIT_ASSERT_EQUAL(95, f.fields[0].elementRcus[95][1]);
    CPPUNIT_ASSERT_EQUAL(-1, f.fields[0].elementRcus[0][0]);
    CPPUNIT_ASSERT_EQUAL(191, f.fields[2].elementRcus[95][1]);
    for (const LofarFieldRow& row : f.fields) {
      CPPUNIT_ASSERT_EQUAL(std::string("LBA"), row.name);
      CPPUNIT_ASSERT(!row.hasTiles);
    }
    // DISH_DIAMETER: LOFAR's rule, the used dipoles' spread plus a dipole.
    CPPUNIT_ASSERT(f.antennas[0].dishDiameter > 60 && f.antennas[0].dishDiameter < 100);
  }

  void testLbaInner() {
    const LofarAntennaFields f = describe(
        {antenna("CS002", "LBA"), antenna("RS205", "LBA"), antenna("UK608", "LBA")}, "LBA_INNER");
    CPPUNIT_ASSERT((used(f.fields[0]) == range(0, 45)));  // LOFAR's inner set: 46 dipoles
    CPPUNIT_ASSERT((used(f.fields[1]) == range(0, 45)));
    CPPUNIT_ASSERT((used(f.fields[2]) == range(0, 95)));
    CPPUNIT_ASSERT_EQUAL(90, f.fields[0].elementRcus[45][0]);
    CPPUNIT_ASSERT_EQUAL(91, f.fields[0].elementRcus[45][1]);
    // Inner dipoles lie within ~15 m of the centre, the outer ones beyond.
    double farthest = 0;
    for (int e : used(f.fields[0]))
      farthest = std::max(farthest, std::sqrt(dot(f.fields[0].elementOffsets[size_t(e)],
                                                  f.fields[0].elementOffsets[size_t(e)])));
    CPPUNIT_ASSERT(farthest < 20);
    CPPUNIT_ASSERT(f.antennas[0].dishDiameter < 45);
  }

  void testHbaDualFields() {
    // HBA_DUAL: the core stations' halves are antennas of their own (CS001HBA0, CS001HBA1).
    const LofarAntennaFields f = describe({antenna("CS001", "HBA0"), antenna("CS001", "HBA1"),
                                           antenna("RS106", "HBA"), antenna("DE601", "HBA")},
                                          "HBA_DUAL");
    CPPUNIT_ASSERT_EQUAL(size_t(4), f.fields.size());
    const std::vector<std::string> names{"HBA0", "HBA1", "HBA", "HBA"};
    for (size_t r = 0; r < 4; ++r) {
      CPPUNIT_ASSERT_EQUAL(names[r], f.fields[r].name);
      CPPUNIT_ASSERT_EQUAL(int(r), f.fields[r].antennaId);
      CPPUNIT_ASSERT(f.fields[r].hasTiles);
      CPPUNIT_ASSERT_EQUAL(size_t(16), f.fields[r].tileElementOffsets.size());
    }
    CPPUNIT_ASSERT((used(f.fields[0]) == range(0, 23)));   // HBA0: tiles 0-23 of 48
    CPPUNIT_ASSERT((used(f.fields[1]) == range(24, 47)));  // HBA1: tiles 24-47
    CPPUNIT_ASSERT_EQUAL(size_t(48), f.fields[0].elementOffsets.size());
    CPPUNIT_ASSERT((used(f.fields[2]) == range(0, 47)));
    CPPUNIT_ASSERT((used(f.fields[3]) == range(0, 95)));
    checkPositions(f.fields[0], shippedElements().at({"CS001", "HBA"}), "CS001 HBA0");
    checkPositions(f.fields[1], shippedElements().at({"CS001", "HBA"}), "CS001 HBA1");
    // Each half is centred on its own field centre: its used tiles lie around it.
    for (size_t r : {0, 1}) {
      Vector3 mean{};
      for (int e : used(f.fields[r]))
        for (int k = 0; k < 3; ++k) mean[k] += f.fields[r].elementOffsets[size_t(e)][k] / 24;
      CPPUNIT_ASSERT(std::sqrt(dot(mean, mean)) < 2);
    }
    CPPUNIT_ASSERT_EQUAL(48, f.fields[1].elementRcus[24][0]);  // RCU 48 reads tile 24's X
  }

  void testHbaJoined() {
    const LofarAntennaFields f =
        describe({antenna("CS002", "HBA"), antenna("RS106", "HBA")}, "HBA_JOINED");
    CPPUNIT_ASSERT_EQUAL(size_t(3), f.fields.size());  // a core station's HBA as its two halves
    CPPUNIT_ASSERT_EQUAL(std::string("HBA0"), f.fields[0].name);
    CPPUNIT_ASSERT_EQUAL(std::string("HBA1"), f.fields[1].name);
    CPPUNIT_ASSERT_EQUAL(0, f.fields[0].antennaId);
    CPPUNIT_ASSERT_EQUAL(0, f.fields[1].antennaId);
    CPPUNIT_ASSERT_EQUAL(1, f.fields[2].antennaId);
    CPPUNIT_ASSERT((used(f.fields[0]) == range(0, 23)));
    CPPUNIT_ASSERT((used(f.fields[1]) == range(24, 47)));
    CPPUNIT_ASSERT((used(f.fields[2]) == range(0, 47)));
    // CS002's halves have different tile rotations (52 and 0 degrees).
    CPPUNIT_ASSERT(std::abs(f.fields[0].tileElementOffsets[0][0] -
                            f.fields[1].tileElementOffsets[0][0]) > 0.1);
    // LOFAR's DISH_DIAMETER of a joined station: the distance between the halves plus their size.
    const Vector3 c0 = f.fields[0].position, c1 = f.fields[1].position;
    const double between = std::sqrt(dot({c0[0] - c1[0], c0[1] - c1[1], c0[2] - c1[2]},
                                         {c0[0] - c1[0], c0[1] - c1[1], c0[2] - c1[2]}));
    CPPUNIT_ASSERT(f.antennas[0].dishDiameter > between + 20 &&
                   f.antennas[0].dishDiameter < between + 40);
  }

  void testHbaZeroAndOne() {
    // A core station's HBA observed with one half: only that half's row.
    const LofarAntennaFields zero =
        describe({antenna("CS003", "HBA"), antenna("RS106", "HBA")}, "HBA_ZERO");
    CPPUNIT_ASSERT_EQUAL(size_t(2), zero.fields.size());
    CPPUNIT_ASSERT_EQUAL(std::string("HBA0"), zero.fields[0].name);
    CPPUNIT_ASSERT((used(zero.fields[0]) == range(0, 23)));
    CPPUNIT_ASSERT((used(zero.fields[1]) == range(0, 47)));  // remote: every tile
    const LofarAntennaFields one = describe({antenna("CS003", "HBA")}, "HBA_ONE_INNER");
    CPPUNIT_ASSERT_EQUAL(size_t(1), one.fields.size());
    CPPUNIT_ASSERT_EQUAL(std::string("HBA1"), one.fields[0].name);
    CPPUNIT_ASSERT((used(one.fields[0]) == range(24, 47)));
  }

  void testTilesAsLofarsHbaDeltas() {
    // LOFAR's MAC/Deployment/data/StaticMetaData/iHBADeltas/*-iHBADeltas.conf (2015), the
    // first rows of each: what LOFAR's writer puts in TILE_ELEMENT_OFFSET (to 1 mm).
    struct Reference {
      std::string station, field;
      std::vector<Vector3> deltas;  // elements 0..3 and 15
    };
    const std::vector<Reference> references{
        {"CS001",
         "HBA0",
         {{-1.847, -1.180, 1.493},
          {-1.581, 0.003, 1.186},
          {-1.315, 1.185, 0.880},
          {-1.049, 2.367, 0.573},
          {1.847, 1.180, -1.493}}},
        {"CS002",
         "HBA0",
         {{-2.123, 0.070, 1.587},
          {-1.435, 0.928, 0.993},
          {-0.747, 1.786, 0.399},
          {-0.059, 2.644, -0.195},
          {2.123, -0.070, -1.587}}},
        {"CS002",
         "HBA1",
         {{-1.261, -2.040, 1.131},
          {-1.410, -0.799, 1.131},
          {-1.560, 0.442, 1.131},
          {-1.709, 1.683, 1.131},
          {1.261, 2.040, -1.131}}},
        {"RS106",
         "HBA",
         {{-2.025, -0.662, 1.579},
          {-1.564, 0.412, 1.136},
          {-1.103, 1.487, 0.693},
          {-0.642, 2.561, 0.250},
          {2.025, 0.662, -1.579}}},
    };
    for (const Reference& ref : references) {
      const LofarAntennaFields f = describe({antenna(ref.station, ref.field)}, "HBA_DUAL");
      const std::vector<Vector3>& tile = f.fields.at(0).tileElementOffsets;
      const size_t index[] = {0, 1, 2, 3, 15};
      for (size_t i = 0; i < 5; ++i)
        for (int k = 0; k < 3; ++k)
          CPPUNIT_ASSERT_DOUBLES_EQUAL_MESSAGE(
              ref.station + " " + ref.field + " element " + std::to_string(index[i]),
              ref.deltas[i][k], tile[index[i]][k], 1.0e-3);
    }
  }

  void testOtherAntennaSets() {
    // LBA_SPARSE_EVEN on a core station: even inner dipoles 0..44, odd outer ones 49..95.
    const auto sparse = elementRcus("LBA_SPARSE_EVEN", StationType::Core, 96);
    CPPUNIT_ASSERT(sparse);
    std::set<int> expected;
    for (int e = 0; e <= 44; e += 2) expected.insert(e);
    for (int e = 49; e <= 95; e += 2) expected.insert(e);
    std::set<int> got;
    for (int e = 0; e < 96; ++e)
      if ((*sparse)[size_t(e)][0] >= 0) got.insert(e);
    CPPUNIT_ASSERT((got == expected));
    // HBA_DUAL_INNER: the 24 inner tiles of a remote station.
    const auto inner = elementRcus("HBA_DUAL_INNER", StationType::Remote, 48);
    std::set<int> tiles;
    for (int e = 0; e < 48; ++e)
      if ((*inner)[size_t(e)][0] >= 0) tiles.insert(e);
    std::set<int> innerTiles{5, 6, 41, 42};
    for (int t : {10, 11, 12, 13, 34, 35, 36, 37}) innerTiles.insert(t);
    for (int t = 17; t <= 22; ++t) innerTiles.insert(t);
    for (int t = 25; t <= 30; ++t) innerTiles.insert(t);
    CPPUNIT_ASSERT((tiles == innerTiles));
    CPPUNIT_ASSERT(!elementRcus("LBA_EVERYTHING", StationType::Core, 96));
    CPPUNIT_ASSERT_THROW(elementRcus("LBA_OUTER", StationType::Core, 48), std::invalid_argument);
  }

  void testSuperstation() {
    const MsAntenna a = antenna("CS001", "LBA"), b = antenna("CS002", "LBA");
    Vector3 centre{};
    for (int k = 0; k < 3; ++k) centre[k] = (a.position[k] + b.position[k]) / 2;
    const LofarAntennaFields f =
        describe({{"CS001+CS002", centre, {{"CS001", "LBA"}, {"CS002", "LBA"}}}}, "LBA_OUTER");
    CPPUNIT_ASSERT_EQUAL(size_t(1), f.fields.size());
    const LofarFieldRow& row = f.fields[0];
    CPPUNIT_ASSERT_EQUAL(std::string("LBA"), row.name);
    std::vector<Vector3> both = shippedElements().at({"CS001", "LBA"});
    const auto& second = shippedElements().at({"CS002", "LBA"});
    both.insert(both.end(), second.begin(), second.end());
    checkPositions(row, both, "CS001+CS002");
    CPPUNIT_ASSERT_EQUAL(size_t(96), used(row).size());
    CPPUNIT_ASSERT_EQUAL(size_t(1), f.stations.size());
    CPPUNIT_ASSERT_EQUAL(std::string("CS001+CS002"), f.stations[0].name);
  }

  void testStationsAndClocks() {
    const LofarAntennaFields f =
        describe({antenna("CS001", "HBA0"), antenna("CS001", "HBA1"), antenna("RS106", "HBA"),
                  antenna("CS002", "HBA0"), antenna("DE601", "HBA")},
                 "HBA_DUAL");
    const std::vector<std::string> names{"CS001", "RS106", "CS002", "DE601"};
    const std::vector<int> clocks{0, 1, 0, 2};  // one clock for the core, one per other station
    CPPUNIT_ASSERT_EQUAL(names.size(), f.stations.size());
    for (size_t i = 0; i < names.size(); ++i) {
      CPPUNIT_ASSERT_EQUAL(names[i], f.stations[i].name);
      CPPUNIT_ASSERT_EQUAL(clocks[i], f.stations[i].clockId);
    }
    const std::vector<int> ids{0, 0, 1, 2, 3};
    for (size_t a = 0; a < ids.size(); ++a) CPPUNIT_ASSERT_EQUAL(ids[a], f.antennas[a].stationId);
  }

  void testStationTheTablesLack() {
    const LofarAntennaFields f = describe({antenna("BG616", "LBA")}, "LBA_OUTER");
    CPPUNIT_ASSERT_EQUAL(size_t(1), f.fields.size());
    CPPUNIT_ASSERT(f.fields[0].elementOffsets.empty());
    CPPUNIT_ASSERT(!f.warnings.empty());
    CPPUNIT_ASSERT(f.warnings[0].find("BG616") != std::string::npos);
    checkAxes(f.fields[0], "BG616 (local east, north, up)");
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(LofarAntennaFieldsTest);

}  // namespace rtcp::storage::test
