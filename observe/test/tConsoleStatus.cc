// The console's document (ObservationConsole.h): packets lost by the wall clock, a station
// that stopped shows a loss of 1 over the last second, the ranks' real-time factor and time
// per step, the summary embedded at the end, valid JSON throughout (read back by Python);
// the ranks' status text and lines (RankStatus.h).
#include <cppunit/extensions/HelperMacros.h>

#include <cstdlib>
#include <fstream>

#include "HydraLaunch.h"
#include "ObservationConsole.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/BeamFormedBlock.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::test {

using storage::test::TempDir;

namespace {

/// The value of a Python expression over the document (`d`), as Python prints it.
std::string evaluate(const std::string& json, const std::string& expression,
                     const std::string& directory) {
  std::ofstream(directory + "/doc.json") << json;
  const std::string out = directory + "/value.txt";
  const std::string command =
      "/usr/bin/python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); "
      "print(" +
      expression + ")' " + directory + "/doc.json > " + out + " 2>&1";
  const int status = std::system(command.c_str());
  std::string value = readFile(out);
  if (status != 0) throw std::runtime_error("not JSON, or " + expression + ": " + value);
  while (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

ion::IonStatus::Station station(const std::string& name, uint64_t packets) {
  ion::IonStatus::Station s;
  s.name = name;
  s.packetsReceived = s.packetsAccepted = packets;
  s.samplesServed = 1000;
  return s;
}

}  // namespace

class ConsoleStatusTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ConsoleStatusTest);
  CPPUNIT_TEST(testStoppedStationShowsLoss);
  CPPUNIT_TEST(testRanksAndSummary);
  CPPUNIT_TEST(testBeamFormedOnThePage);
  CPPUNIT_TEST(testRankStatusText);
  CPPUNIT_TEST(testLinesFromOtherHosts);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testStoppedStationShowsLoss() {
    TempDir dir;
    SmallObservation o;
    o.stations = {"CS001", "CS002"};
    o.outputDir = dir.path();
    o.seconds = 10;
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    ConsoleStatus console(s, dir.path(), {dir.path() + "/a.MS"});
    const double rate = s.subbandWidth() / 16;  // packets a second of the one stream
    const double t0 = s.startTime + s.maxNetworkDelay;
    ion::IonStatus status;
    status.nrBlocks = s.nrBlocks();
    status.blockDuration = s.blockDuration();
    status.wallTime = t0 + 4;
    status.stations = {station("CS001LBA", uint64_t(4 * rate)),
                       station("CS002LBA", uint64_t(3 * rate))};
    console.noteIonStatus(status);
    status.wallTime = t0 + 5;  // CS002 sends nothing more
    status.stations = {station("CS001LBA", uint64_t(5 * rate)),
                       station("CS002LBA", uint64_t(3 * rate))};
    status.stations[1].samplesFlagged = 500;
    console.noteIonStatus(status);
    const std::string json = console.json(t0 + 5.2);
    CPPUNIT_ASSERT_EQUAL(std::string("0"),
                         evaluate(json, "d[\"stations\"][0][\"packetsLost\"]", dir.path()));
    CPPUNIT_ASSERT_EQUAL(std::to_string(uint64_t(5 * rate) - uint64_t(3 * rate)),
                         evaluate(json, "d[\"stations\"][1][\"packetsLost\"]", dir.path()));
    CPPUNIT_ASSERT_EQUAL(
        std::string("[0.0, 1.0]"),
        evaluate(json, "[round(float(s[\"recentLossFraction\"]), 3) for s in d[\"stations\"]]",
                 dir.path()));
    CPPUNIT_ASSERT_EQUAL(std::string("0.5"),
                         evaluate(json, "d[\"stations\"][1][\"flaggedFraction\"]", dir.path()));
    CPPUNIT_ASSERT_EQUAL(
        std::string("[0, 0.5]"),
        evaluate(
            json,
            "[d[\"flaggedHistory\"][\"stations\"][n][-1] for n in (\"CS001LBA\", \"CS002LBA\")]",
            dir.path()));
    CPPUNIT_ASSERT_EQUAL(
        std::string("['starting', None, None]"),
        evaluate(json, "[d[\"observation\"][\"phase\"], d[\"summary\"], d[\"quickLook\"]]",
                 dir.path()));
  }

  void testRanksAndSummary() {
    TempDir dir;
    SmallObservation o;
    o.outputDir = dir.path();
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(makeParset(o)));
    ConsoleStatus console(s, dir.path(), {});
    correlator::RankStatus rank;
    rank.rank = 1;
    rank.host = "cn1";
    rank.blocks = 8;
    rank.blockDuration = 0.5;
    rank.processingSeconds = 2;
    rank.steps = {"filter bank", "correlate"};
    rank.stepSeconds = {1.5, 0.5};
    rank.stepCalls = {3, 2};
    console.noteRankStatuses({rank});
    // A beam-formed observation: each TAB's power, the mean over the ranks at the newest
    // block, over time.
    correlator::RankStatus other = rank;
    other.rank = 2;
    rank.tabs = other.tabs = {"SAP0 TAB0", "SAP0 TAB1"};
    rank.tabPower = {2, 10};
    other.tabPower = {4, 20};
    rank.tabBlock = other.tabBlock = 4;
    console.noteRankStatuses({rank, other});
    console.noteRankStatuses({rank, other});  // the same block: no new point
    rank.tabBlock = 5;
    rank.tabPower = {6, 30};
    console.noteRankStatuses({rank, other});
    console.noteQuickLook("{\"subband\": 1, \"baselines\": []}");
    for (int i = 0; i < 250; ++i)
      console.addEvent(1000 + i, "WARN", "ionproc", "a \"quoted\" </script>");
    ObservationSummary summary;
    summary.ok = true;
    summary.realTimeFactor = 1.25;
    summary.stations.push_back({});
    summary.stations.back().name = "CS001LBA";
    console.setSummary(summary);
    const std::string json = console.json(2000);
    CPPUNIT_ASSERT_EQUAL(
        std::string("[2, 0.25, 'cn1']"),
        evaluate(
            json,
            "[d[\"ranks\"][0][k] for k in (\"realTimeFactor\", \"secondsPerBlock\", \"host\")]",
            dir.path()));
    CPPUNIT_ASSERT_EQUAL(
        std::string("0.5"),
        evaluate(json, "d[\"ranks\"][0][\"steps\"][0][\"meanSeconds\"]", dir.path()));
    CPPUNIT_ASSERT_EQUAL(
        std::string("[200, 1050]"),
        evaluate(json, "[len(d[\"events\"]), int(d[\"events\"][0][\"time\"])]", dir.path()));
    std::ofstream(dir.path() + "/summary.json") << summary.toJson();
    CPPUNIT_ASSERT_EQUAL(
        std::string("[True, 'ended', 1]"),
        evaluate(
            json,
            "[d[\"summary\"] == json.load(open(\"" + dir.path() +
                "/summary.json\")), d[\"observation\"][\"phase\"], d[\"quickLook\"][\"subband\"]]",
            dir.path()));
    const std::string page = console::pageWithDocument(console::observationPage(), json);
    CPPUNIT_ASSERT(page.find("</script>\"") == std::string::npos);  // escaped: <\/script>
    CPPUNIT_ASSERT(page.find("<\\/script>") != std::string::npos);
  }

  /// A beam-formed observation's counters: ionproc's blocks spooled, sent again and not
  /// kept to resend, and per file the blocks its storage-sink wrote and the subband-blocks
  /// lost, in /status.json and on the page as Chromium renders it.
  void testBeamFormedOnThePage() {
    TempDir dir;
    const ObservationSettings s =
        ObservationSettings::fromParset(Parset::fromString(storage::test::beamFormedParset(78)));
    const std::string h5 = "L78_SAP000_B000_S0_P000_bf.h5";
    ConsoleStatus console(s, dir.path(), {}, {dir.path() + "/" + h5, dir.path() + "/other.h5"});
    ion::IonStatus ion;
    ion.nrBlocks = s.nrBlocks();
    ion.blockDuration = s.blockDuration();
    ion.wallTime = s.startTime + 1;
    ion.beamFormedQueued = 8;
    ion.beamFormedSent = 6;
    ion.beamFormedSpooled = 3;
    ion.beamFormedResent = 2;
    ion.beamFormedUnprotected = 1;
    console.noteIonStatus(ion);
    storage::StorageStatus storage;
    storage.beamFormedFiles = 1;
    storage.beamFormedBlocksExpected = 4;
    storage.beamFormedBlocksWritten = 3;
    storage.beamFormedSubbandBlocksLost = 1;
    storage.beamFormedFileNames = {h5};
    storage.beamFormedFileBlocks = {3};
    storage.beamFormedFileSubbandBlocksLost = {1};
    console.noteStorageStatus(storage);
    const std::string json = console.json(s.startTime + 1.2);
    CPPUNIT_ASSERT_EQUAL(
        std::string("[3, 2, 1]"),
        evaluate(json,
                 "[d[\"ionproc\"][\"beamFormed\" + k] for k in (\"Spooled\", \"Resent\", "
                 "\"Unprotected\")]",
                 dir.path()));
    CPPUNIT_ASSERT_EQUAL(
        std::string("[{'name': '" + h5 + "', 'blocks': 3, 'subbandBlocksLost': 1}]"),
        evaluate(json, "d[\"storage\"][\"beamFormedFilesWritten\"]", dir.path()));

    std::ofstream(dir.path() + "/console.html")
        << console::pageWithDocument(console::observationPage(), json);
    const std::string command =
        "chromium --headless --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage "
        "--user-data-dir=" +
        dir.path() + "/profile --virtual-time-budget=500 --dump-dom file://" + dir.path() +
        "/console.html > " + dir.path() + "/dom.html 2> " + dir.path() + "/chromium.log";
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/chromium.log"), 0,
                                 std::system(command.c_str()));
    const std::string dom = readFile(dir.path() + "/dom.html");
    for (const std::string& shown :
         {std::string(
              "<th class=\"name\">beam-formed blocks: spooled</th><td class=\"warn\">3</td>"),
          std::string(
              "<th class=\"name\">beam-formed blocks: resent</th><td class=\"warn\">2</td>"),
          std::string("<th class=\"name\">beam-formed blocks: not kept to resend</th><td "
                      "class=\"warn\">1</td>"),
          "<th class=\"name\">" + h5 + "</th><td class=\"bad\">3 / 4 blocks, 1 lost</td>",
          std::string("<th class=\"name\">other.h5</th><td></td>")})
      CPPUNIT_ASSERT_MESSAGE(shown + " not in the page", dom.find(shown) != std::string::npos);
  }

  void testRankStatusText() {
    correlator::RankStatus rank;
    rank.rank = 3;
    rank.host = "node one";
    rank.wallTime = 1764300000.25;
    rank.blocks = 12;
    rank.nrBlocks = 40;
    rank.processingSeconds = 1.5;
    rank.blockDuration = 0.25;
    rank.steps = {"input conversion", "delay, bandpass"};
    rank.stepSeconds = {0.25, 1.0};
    rank.stepCalls = {24, 24};
    CPPUNIT_ASSERT(correlator::RankStatus::parse(rank.format()) == rank);
    // What a rank reports of a TAB's block: the mean power of the samples with valid input.
    BeamFormedData stokes(StokesKind::kI, 2, 2), voltages(StokesKind::kXXYY, 1, 1);
    for (int i = 0; i < 4; ++i) stokes.samples[size_t(i)] = float(i + 1);
    stokes.validFraction[0] = stokes.validFraction[1] = stokes.validFraction[2] = 1;  // not [3]
    CPPUNIT_ASSERT_DOUBLES_EQUAL(2.0, meanPower(stokes), 1e-12);
    for (int k = 0; k < 4; ++k) voltages.sample(k, 0, 0) = float(k);
    voltages.validFraction[0] = 0.5;
    CPPUNIT_ASSERT_DOUBLES_EQUAL(14.0, meanPower(voltages), 1e-12);              // 0 + 1 + 4 + 9
    CPPUNIT_ASSERT_EQUAL(0.0, meanPower(BeamFormedData(StokesKind::kI, 1, 1)));  // none valid
    rank.tabs = {"SAP0 TAB0", "SAP1 TAB3"};
    rank.tabPower = {1.5, 2.5e-3};
    rank.tabBlock = 11;
    CPPUNIT_ASSERT(correlator::RankStatus::parse(rank.format()) == rank);
    const std::string line = rank.formatLine();
    CPPUNIT_ASSERT(line.find('\n') == std::string::npos);
    CPPUNIT_ASSERT(correlator::RankStatus::parseLine(line) == rank);
    CPPUNIT_ASSERT(!correlator::RankStatus::parseLine("rtcp-status time=1"));
    CPPUNIT_ASSERT_EQUAL(2.0, rank.realTimeFactor());
    CPPUNIT_ASSERT_EQUAL(std::string("/d/correlator-rank3.status"),
                         correlator::rankStatusPath("/d/correlator-rank%r.status", 3));
    CPPUNIT_ASSERT_THROW(correlator::RankStatus::parse("steps=a,b\nstepSeconds=1\nstepCalls=1,2\n"),
                         std::runtime_error);
  }

  /// Ranks and ionproc on other hosts print their status and quick look as lines, which
  /// mpiexec forwards into the part's output file (HydraLaunch.h).
  void testLinesFromOtherHosts() {
    TempDir dir;
    correlator::RankStatus rank0, rank1;
    rank0.host = "cn1";
    rank0.blocks = 3;
    rank1.rank = 1;
    rank1.host = "cn2";
    rank1.blocks = 4;
    const std::string path = dir.path() + "/correlator.out";
    std::ofstream(path) << "rtcp-part-started\nrtcp-part-started\n"
                        << rank0.formatLine() << "\n"
                        << rank1.formatLine() << "\n"
                        << "rtcp-quicklook {\"subband\": 0}\n";
    PartOutput output(path, 2);
    output.update();
    CPPUNIT_ASSERT(output.started());
    CPPUNIT_ASSERT_EQUAL(size_t(2), output.rankStatuses().size());
    CPPUNIT_ASSERT(output.rankStatuses().at(1) == rank1);
    CPPUNIT_ASSERT_EQUAL(std::string("cn1"), output.rankStatuses().at(0).host);
    CPPUNIT_ASSERT_EQUAL(std::string("{\"subband\": 0}"), output.quickLook());
    rank1.blocks = 5;  // a newer line replaces the older
    std::ofstream(path, std::ios::app) << rank1.formatLine() << "\n";
    output.update();
    CPPUNIT_ASSERT_EQUAL(int64_t(5), output.rankStatuses().at(1).blocks);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ConsoleStatusTest);

}  // namespace rtcp::observe::test
