// Replays: a recording replayed by observe as fast as the chain goes (OLAP.realTime = F)
// and at the wall-clock pace (T) gives the same visibilities as a live observation fed by
// `station-sim --replay --restamp` over UDP.
//
// Why the comparison can be exact: all three runs correlate the same recorded samples.
// Restamping moves the live run's time by an even number of seconds (so the sample
// numbering within each second is kept), which would change the geometric delays and
// with them the samples' coarse shifts and phase rotations; delay compensation is
// therefore off (OLAP.delayCompensation = F), and the source is at the phase centre, so
// that nothing in the chain depends on the absolute time. Only TIME and UVW may differ.
#include <cppunit/extensions/HelperMacros.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

class ReplayTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(ReplayTest);
  CPPUNIT_TEST(testReplaysEqualLiveRun);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testReplaysEqualLiveRun() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4714;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 3;
    o.delayCompensation = false;
    o.outputDir = dir.path() + "/record-out";
    const std::string recordings = dir.path() + "/recordings";
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({executable("station-sim/station-sim"),
                       writeParset(dir.path() + "/record.parset", o), "--record", recordings},
                      dir.path() + "/record.log"));
    SmallObservation replay = o;
    for (const std::string& station : o.stations)
      replay.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");

    replay.realTime = false;
    replay.outputDir = dir.path() + "/fast";
    const std::vector<MsContents> fast = observe(dir.path(), "fast", replay, {});
    replay.realTime = true;
    replay.outputDir = dir.path() + "/paced";
    const std::vector<MsContents> paced = observe(dir.path(), "paced", replay, {});
    const std::vector<MsContents> live = observeLive(dir.path(), o, replay);

    for (size_t sb = 0; sb < fast.size(); ++sb) {
      compare("real time F vs T", fast[sb], paced[sb]);
      compare("replay F vs live", fast[sb], live[sb]);
    }
  }

 private:
  static std::vector<MsContents> readOutputs(const std::string& obs) {
    const ObservationSettings s = ObservationSettings::fromFile(obs + "/observation.parset");
    std::vector<MsContents> result;
    for (size_t i = 0; i < s.correlatedOutput.filenames.size(); ++i)
      result.push_back(readMeasurementSet(s.correlatedOutput.directories[i] + "/" +
                                          s.correlatedOutput.filenames[i]));
    return result;
  }

  static std::vector<MsContents> observe(const std::string& dir, const std::string& name,
                                         const SmallObservation& o,
                                         const std::vector<std::string>& options) {
    const std::string obs = dir + "/" + name + "-obs";
    std::vector<std::string> arguments{writeParset(dir + "/" + name + ".parset", o), "--dir", obs};
    arguments.insert(arguments.end(), options.begin(), options.end());
    const int code = runProgram(observeCommand(arguments), dir + "/" + name + ".log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir + "/" + name + ".log"), 0, code);
    return readOutputs(obs);
  }

  /// observe --now on udp inputs fed by station-sim --replay --restamp, started in the
  /// two seconds before the shifted start so that both shift by the same even seconds.
  static std::vector<MsContents> observeLive(const std::string& dir, SmallObservation live,
                                             const SmallObservation& replay) {
    std::string destinations;
    live.inputs.clear();
    for (size_t i = 0; i < live.stations.size(); ++i) {
      live.inputs.push_back("udp:127.0.0.1:" + std::to_string(freeUdpPort()));
      destinations += (i ? "," : "") + live.inputs.back();
    }
    live.outputDir = dir + "/live";
    const std::string obs = dir + "/live-obs";
    const pid_t observer =
        startProgram(observeCommand({writeParset(dir + "/live.parset", live), "--now",
                                     "--no-station-sim", "--dir", obs, "--margin", "6"}),
                     dir + "/live.log");
    while (!std::filesystem::exists(obs + "/observation.parset"))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // written completely
    const double start = ObservationSettings::fromFile(obs + "/observation.parset").startTime;
    std::this_thread::sleep_for(std::chrono::duration<double>(start - 1 - wallClock()));
    const int replayed = runProgram(
        {executable("station-sim/station-sim"), writeParset(dir + "/replay-live.parset", replay),
         "--replay", "--replay-to", destinations, "--restamp"},
        dir + "/replay-live.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir + "/replay-live.log"), 0, replayed);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir + "/live.log"), 0, waitProgram(observer));
    return readOutputs(obs);
  }

  static void compare(const std::string& what, const MsContents& a, const MsContents& b) {
    CPPUNIT_ASSERT_EQUAL_MESSAGE(what, a.nrRows, b.nrRows);
    CPPUNIT_ASSERT_EQUAL_MESSAGE(what, a.data.size(), b.data.size());
    size_t differences = 0, first = 0;
    for (size_t i = 0; i < a.data.size(); ++i)
      if (a.data[i] != b.data[i] || a.weightSpectrum[i] != b.weightSpectrum[i] ||
          a.flag[i] != b.flag[i])
        if (differences++ == 0) first = i;
    std::ostringstream message;
    if (differences)
      message << what << ": " << differences << " of " << a.data.size()
              << " values differ, first at " << first << ": " << a.data[first] << " weight "
              << a.weightSpectrum[first] << " vs " << b.data[first] << " weight "
              << b.weightSpectrum[first];
    CPPUNIT_ASSERT_MESSAGE(message.str(), differences == 0);
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(ReplayTest);

}  // namespace rtcp::observe::test
