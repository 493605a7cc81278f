// MeasurementSetTemplate: MSs made as copies of the first with the subband's own tables
// rewritten hold exactly what MSs created from scratch hold: every table (main table and
// every subtable, LOFAR's included), its columns and keywords, and every cell.
#include <casacore/tables/Tables/Table.h>
#include <casacore/tables/Tables/TableRecord.h>
#include <casacore/tables/Tables/TableRow.h>
#include <cppunit/extensions/HelperMacros.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "MeasurementSetCreator.h"
#include "MeasurementSetTemplate.h"
#include "OutputLayout.h"
#include "StorageTestUtil.h"
#include "rtcp/Parset.h"

namespace rtcp::storage::test {
namespace {

/// A table and its subtables as text: columns with their descriptions, keywords, every
/// row's cells; the directory the MS sits in replaced by DIR.
void dumpTable(const casacore::Table& table, const std::string& name, std::ostream& out) {
  out << "table " << name << ": " << table.nrow() << " rows\n";
  table.tableDesc().show(out);
  out << "keywords: " << table.keywordSet() << "\n";
  casacore::ROTableRow row(table);
  for (casacore::rownr_t r = 0; r < table.nrow(); ++r) out << "row " << r << ": " << row.get(r);
  const casacore::TableRecord& keywords = table.keywordSet();
  for (casacore::uInt f = 0; f < keywords.nfields(); ++f)
    if (keywords.type(f) == casacore::TpTable)
      dumpTable(keywords.asTable(f), name + "/" + std::string(keywords.name(f)), out);
}

std::string dumpMeasurementSet(const std::string& path) {
  std::ostringstream out;
  dumpTable(casacore::Table(path), std::filesystem::path(path).filename().string(), out);
  const std::string directory = std::filesystem::path(path).parent_path().string();
  return std::regex_replace(out.str(), std::regex(directory), "DIR");
}

}  // namespace

class MeasurementSetTemplateTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(MeasurementSetTemplateTest);
  CPPUNIT_TEST(testCopiesHoldWhatCreationWrites);
  CPPUNIT_TEST(testTemplateKey);
  CPPUNIT_TEST(testExistingLeftAlone);
  CPPUNIT_TEST_SUITE_END();

 public:
  void setUp() override {
    dir_ = std::make_unique<TempDir>();
    TestObservation observation;
    observation.subbands = "[300, 301, 317]";
    observation.location = "localhost:" + dir_->path();
    observation.extra = "Observation.Beam[0].target = 'Cyg A'\n";
    settings_ = ObservationSettings::fromParset(Parset::fromString(makeParset(observation)));
    const auto antennaFields = describeAntennaFields(settings_);
    for (int s = 0; s < settings_.nrSubbands(); ++s)
      descriptions_.push_back(describeMeasurementSet(settings_, s, antennaFields));
  }
  void tearDown() override { dir_.reset(); }

  std::vector<std::string> paths(const std::string& subdirectory) const {
    std::vector<std::string> result;
    for (const SubbandSettings& sb : settings_.subbands)
      result.push_back(dir_->path() + "/" + subdirectory + "/" +
                       ObservationSettings::defaultFilename(4242, sb.beam, sb.index));
    return result;
  }

  void testCopiesHoldWhatCreationWrites() {
    const std::vector<std::string> copies = paths("copies"), created = paths("created");
    int reported = 0;
    CPPUNIT_ASSERT_EQUAL(
        3, createMeasurementSets(descriptions_, copies, [&](int made) { reported = made; }));
    CPPUNIT_ASSERT_EQUAL(3, reported);
    std::filesystem::create_directories(dir_->path() + "/created");
    for (size_t i = 0; i < created.size(); ++i)
      createMeasurementSet(created[i], descriptions_[i], false);
    for (size_t i = 0; i < created.size(); ++i) {
      const std::string expected = dumpMeasurementSet(created[i]);
      CPPUNIT_ASSERT(expected.find("SB-" + std::to_string(i)) != std::string::npos);
      CPPUNIT_ASSERT_EQUAL(expected, dumpMeasurementSet(copies[i]));
    }
  }

  void testTemplateKey() {
    // Subbands differ only in what a copy rewrites.
    CPPUNIT_ASSERT(!(descriptions_[0] == descriptions_[1]));
    CPPUNIT_ASSERT(templateKey(descriptions_[0]) == templateKey(descriptions_[2]));
    // Anything else makes another template.
    MeasurementSetDescription other = descriptions_[1];
    other.stations.pop_back();
    CPPUNIT_ASSERT(!(templateKey(descriptions_[0]) == templateKey(other)));
    other = descriptions_[1];
    other.channelWidth *= 2;
    CPPUNIT_ASSERT(!(templateKey(descriptions_[0]) == templateKey(other)));
    other = descriptions_[1];
    other.tileBeam.directionType = "AZELGEO";  // FIELD's column description differs
    CPPUNIT_ASSERT(!(templateKey(descriptions_[0]) == templateKey(other)));
  }

  void testExistingLeftAlone() {
    const std::vector<std::string> copies = paths("copies");
    CPPUNIT_ASSERT_EQUAL(1, createMeasurementSets({descriptions_[1]}, {copies[1]}));
    const std::string before = dumpMeasurementSet(copies[1]);
    CPPUNIT_ASSERT_EQUAL(2, createMeasurementSets(descriptions_, copies));  // 0 and 2 only
    CPPUNIT_ASSERT_EQUAL(before, dumpMeasurementSet(copies[1]));
    CPPUNIT_ASSERT_EQUAL(0, createMeasurementSets(descriptions_, copies));
  }

 private:
  std::unique_ptr<TempDir> dir_;
  ObservationSettings settings_;
  std::vector<MeasurementSetDescription> descriptions_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(MeasurementSetTemplateTest);

}  // namespace rtcp::storage::test
