// Online RFI flagging through the real executables: station-sim records 5 stations with
// interference (Sim.rfi.*: a tone at CS002 in channel 12, a 4 ms broadband burst every
// second at every station, RS106 silent, RS306 noise only), observe replays the recordings
// twice (file: inputs, OLAP.realTime = F) — with OLAP.CNProc.onlineFlagging = T and the
// pre- and post-correlation keys on, and with flagging off — and the MSs say: the tone's
// channel at CS002 is flagged (FLAG, WEIGHT_SPECTRUM 0) with flagging and stands out of its
// neighbours without; the bursts take their share off every station's weights, and each
// station's autocorrelation WEIGHT_SPECTRUM holds, to the sample, what arrived less what the
// ranks' logs count as flagged before correlation (CS001, CS002, RS205); the silent
// station is flagged whole and the correlator's log names it; the noise-only station is
// flagged whole after correlation and ionproc's log names it; the summary gives every
// station's figures per stage; AOFlagger ran in ionproc. And against AOFlagger offline: the
// `aoflagger` command (LOFAR's strategy) on a copy of the MS written without flagging;
// agreement of the two on the cross-correlations measured and bounded (output/README.md).
// And the view across subbands (input/SubbandLevelFlagger.h): a subband that interference
// fills at one station (a tone 21 dB above the subband's power at CS002 in subband 303 of
// 300..307) is flagged whole at that station only, in ionproc's input, and the weights of
// every other row, channel and subband are those of the run without flagging, to the bit.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

namespace {

constexpr int kToneChannel = 12;

SmallObservation observation(const TempDir& dir) {
  SmallObservation o;
  o.obsId = 4731;
  o.stations = {"CS001", "CS002", "RS106", "RS205", "RS306"};
  o.subbands = "[300]";
  o.seconds = 4;
  o.steps = 2048;  // blocks and integrations of 0.17 s: 23 of them, for AOFlagger's windows
  o.realTime = false;
  o.outputDir = dir.path() + "/out";
  // Subband 300 at 58.59375 MHz; 16 channels of 12207.03125 Hz, channel c at (c - 8) of them.
  const double tone = 300 * 195312.5 + (kToneChannel - 8) * 12207.03125;
  o.extra = "Sim.rfi.tone.frequency = " + std::to_string(tone) +
            "\nSim.rfi.tone.amplitude = 0.5\nSim.rfi.tone.stations = [CS002LBA]\n"
            "Sim.rfi.burst.period = 1.0\nSim.rfi.burst.duration = 0.004\n"
            "Sim.rfi.burst.power = 4\nSim.rfi.silentStations = [RS106LBA]\n"
            "Sim.rfi.noiseOnlyStations = [RS306LBA]\n";
  return o;
}

/// Replays the recordings with `flagging` keys; returns the observation directory.
std::string replay(const TempDir& dir, SmallObservation o, const std::string& name,
                   const std::string& flagging) {
  o.inputs.clear();
  for (const std::string& station : o.stations)
    o.inputs.push_back("file:" + dir.path() + "/recordings/" + station + "LBA.rsp");
  o.outputDir = dir.path() + "/" + name + "-out";
  o.extra += flagging;
  const std::string parset = writeParset(dir.path() + "/" + name + ".parset", o);
  const std::string obs = dir.path() + "/" + name;
  observeSuccessfully(parset, obs, {}, dir.path() + "/" + name + ".log");
  return obs;
}

std::string msPath(const std::string& outputDir) {
  for (const auto& entry : std::filesystem::directory_iterator(outputDir))
    if (entry.path().extension() == ".MS") return entry.path().string();
  CPPUNIT_FAIL("no MS in " + outputDir);
  return {};
}

MsContents theMs(const std::string& outputDir) { return readMeasurementSet(msPath(outputDir)); }

/// Cells (cross-correlation row, channel, XX) flagged by both, one alone, neither; rows of
/// the stations `left` out; channels 2..C-2 (`edges` false) or the subband's edge channels 1 and
/// C-1 (true), where the neighbours' aliases add the source with their own delay phase.
struct Agreement {
  uint64_t both = 0, onlineOnly = 0, offlineOnly = 0, neither = 0;
  double cells() const { return double(both + onlineOnly + offlineOnly + neither); }
  double percent(uint64_t n) const { return 100.0 * double(n) / cells(); }
  /// Of what AOFlagger flagged offline, the fraction the online flaggers flagged too.
  double ofOffline() const {
    return both + offlineOnly ? double(both) / double(both + offlineOnly) : 1.0;
  }
};

Agreement agreement(const MsContents& online, const MsContents& offline, std::set<int> left,
                    bool edges) {
  CPPUNIT_ASSERT_EQUAL(online.nrRows, offline.nrRows);
  Agreement a;
  for (size_t r = 0; r < online.nrRows; ++r) {
    if (online.antenna1[r] == online.antenna2[r]) continue;
    if (left.count(online.antenna1[r]) || left.count(online.antenna2[r])) continue;
    for (int c = 1; c < online.nrChannels; ++c) {
      if ((c == 1 || c == online.nrChannels - 1) != edges) continue;
      const size_t i = (r * size_t(online.nrChannels) + size_t(c)) * 4;
      const bool on = online.flag[i], off = offline.flag[i];
      (on ? (off ? a.both : a.onlineOnly) : (off ? a.offlineOnly : a.neither))++;
    }
  }
  return a;
}

/// Mean over the rows of baseline (a1, a2) of channel c's WEIGHT_SPECTRUM (pol 0), its
/// flagged fraction, and the mean amplitude of its XX.
struct Cell {
  double weight = 0, flagged = 0, amplitude = 0;
};
Cell cell(const MsContents& ms, int a1, int a2, int c) {
  Cell result;
  int rows = 0;
  for (size_t r = 0; r < ms.nrRows; ++r) {
    if (ms.antenna1[r] != a1 || ms.antenna2[r] != a2) continue;
    const size_t i = (r * size_t(ms.nrChannels) + size_t(c)) * 4;
    result.weight += ms.weightSpectrum[i];
    result.flagged += ms.flag[i];
    result.amplitude += std::abs(ms.data[i]);
    ++rows;
  }
  CPPUNIT_ASSERT(rows > 0);
  result.weight /= rows;
  result.flagged /= rows;
  result.amplitude /= rows;
  return result;
}

/// Channels 1..15 of baseline (s, s)'s WEIGHT_SPECTRUM (pol 0) over every row, in valid
/// samples (weight × the spectra of an integration: exact, the weights being k / 2048).
double autocorrelationSamples(const MsContents& ms, int s, int spectra) {
  double sum = 0;
  for (size_t r = 0; r < ms.nrRows; ++r)
    if (ms.antenna1[r] == s && ms.antenna2[r] == s)
      for (int c = 1; c < ms.nrChannels; ++c)
        sum += double(ms.weightSpectrum[(r * size_t(ms.nrChannels) + size_t(c)) * 4]) * spectra;
  return sum;
}

/// Station `name`'s samples flagged before correlation and that arrived, summed over the
/// ranks' final lines ("pre-correlation flagging: ...: CS001LBA 0.41 % (F of A), ...").
std::pair<uint64_t, uint64_t> preCorrelationCounts(const std::string& logs,
                                                   const std::string& name) {
  const std::string lead = "pre-correlation flagging: flagged of the samples that arrived:";
  uint64_t flagged = 0, arrived = 0;
  for (size_t line = logs.find(lead); line != std::string::npos; line = logs.find(lead, line + 1)) {
    const size_t at = logs.find(" " + name + " ", line);
    CPPUNIT_ASSERT_MESSAGE(name, at != std::string::npos && at < logs.find('\n', line));
    unsigned long long f = 0, a = 0;
    CPPUNIT_ASSERT_EQUAL(2,
                         std::sscanf(logs.c_str() + logs.find('(', at), "(%llu of %llu)", &f, &a));
    flagged += f;
    arrived += a;
  }
  return {flagged, arrived};
}

std::string logsOf(const std::string& obs) {
  std::string all;
  for (const auto& entry : std::filesystem::directory_iterator(obs))
    if (entry.path().extension() == ".log") all += readFile(entry.path().string());
  return all;
}

/// The MSs of an output directory, in subband order (their names carry the index).
std::vector<MsContents> allMs(const std::string& outputDir) {
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(outputDir))
    if (entry.path().extension() == ".MS") paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<MsContents> result;
  for (const std::string& path : paths) result.push_back(readMeasurementSet(path));
  return result;
}

/// The number `key` of `station` in summary.json's "stations" array (its text).
double stationField(const std::string& stations, const std::string& station,
                    const std::string& key) {
  const size_t at = stations.find("\"name\": \"" + station + "\"");
  CPPUNIT_ASSERT_MESSAGE(stations, at != std::string::npos);
  const size_t value = stations.find("\"" + key + "\": ", at);
  CPPUNIT_ASSERT_MESSAGE(stations, value != std::string::npos);
  return std::stod(stations.substr(value + key.size() + 4));
}

}  // namespace

class FlaggingTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(FlaggingTest);
  CPPUNIT_TEST(testInterferenceFlaggedOnlineAndNotWithout);
  CPPUNIT_TEST(testSubbandFilledAtOneStationFlaggedWhole);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testSubbandFilledAtOneStationFlaggedWhole() {
    constexpr int kBright = 3;  // subband 303, index 3 of 300..307
    TempDir dir;
    SmallObservation o;
    o.obsId = 4732;
    o.stations = {"CS001", "CS002", "RS205"};
    o.subbands = "[300..307]";
    o.seconds = 2;
    o.steps = 2048;
    o.realTime = false;
    o.outputDir = dir.path() + "/out";
    // At the subband's centre, amplitude 20: 400 against the subband's power of 2.9 per
    // polarisation (noise 1 and the source's 2, times the filter's 0.958): 21 dB.
    o.extra = "Sim.rfi.tone.frequency = " + std::to_string((300 + kBright) * 195312.5) +
              "\nSim.rfi.tone.amplitude = 20\nSim.rfi.tone.stations = [CS002LBA]\n";
    const std::string recordParset = writeParset(dir.path() + "/record.parset", o);
    CPPUNIT_ASSERT_EQUAL(0, runProgram({executable("station-sim/station-sim"), recordParset,
                                        "--record", dir.path() + "/recordings"},
                                       dir.path() + "/record.log"));
    const std::string on = replay(dir, o, "on",
                                  "OLAP.CNProc.onlineFlagging = T\n"
                                  "Rtcp.Flagging.subbandLevel.enabled = T\n");
    const std::string off = replay(dir, o, "off", "");
    const std::vector<MsContents> flagged = allMs(dir.path() + "/on-out");
    const std::vector<MsContents> plain = allMs(dir.path() + "/off-out");
    CPPUNIT_ASSERT_EQUAL(size_t(8), flagged.size());
    CPPUNIT_ASSERT_EQUAL(size_t(8), plain.size());
    // CS002 (antenna 1) in subband 303: every row with it flagged, weight 0 (it arrived:
    // without flagging its weights are whole); everything else as without flagging.
    uint64_t zeroed = 0, kept = 0;
    for (size_t sb = 0; sb < flagged.size(); ++sb) {
      const MsContents &with = flagged[sb], &without = plain[sb];
      CPPUNIT_ASSERT_EQUAL(without.nrRows, with.nrRows);
      for (size_t r = 0; r < with.nrRows; ++r) {
        const bool bright = sb == kBright && (with.antenna1[r] == 1 || with.antenna2[r] == 1);
        for (int c = 1; c < with.nrChannels; ++c)
          for (int p = 0; p < 4; ++p) {
            const size_t i = (r * size_t(with.nrChannels) + size_t(c)) * 4 + size_t(p);
            const std::string where = "subband " + std::to_string(300 + sb) + ", row " +
                                      std::to_string(r) + ", channel " + std::to_string(c);
            if (bright) {
              CPPUNIT_ASSERT_MESSAGE(where, without.weightSpectrum[i] > 0.9f);
              CPPUNIT_ASSERT_EQUAL_MESSAGE(where, 0.0f, with.weightSpectrum[i]);
              CPPUNIT_ASSERT_MESSAGE(where, with.flag[i]);
              ++zeroed;
            } else {
              CPPUNIT_ASSERT_EQUAL_MESSAGE(where, without.weightSpectrum[i],
                                           with.weightSpectrum[i]);
              CPPUNIT_ASSERT_EQUAL_MESSAGE(where, without.flag[i], with.flag[i]);
              ++kept;
            }
          }
      }
    }
    std::cout << "\nview across subbands: " << zeroed << " weights zeroed (CS002 in subband 303), "
              << kept << " as without flagging\n";
    CPPUNIT_ASSERT(zeroed > 0);
    // The summary counts it per station: CS002's every block of one subband in 8.
    const std::string stations = summaryValue(on, "stations");
    std::cout << "summary's stations: " << stations << "\n";
    auto field = [&](const std::string& station, const std::string& key) {
      return stationField(stations, station, key);
    };
    const size_t blocks = flagged[kBright].nrRows / 6;  // 6 baselines, one block each
    CPPUNIT_ASSERT_EQUAL(double(blocks), field("CS002LBA", "subbandLevelFlaggedBlocks"));
    CPPUNIT_ASSERT_DOUBLES_EQUAL(1.0 / 8, field("CS002LBA", "subbandLevelFlagged"), 0.002);
    for (const char* name : {"CS001LBA", "RS205LBA"}) {
      CPPUNIT_ASSERT_EQUAL(0.0, field(name, "subbandLevelFlaggedBlocks"));
      CPPUNIT_ASSERT_EQUAL(0.0, field(name, "subbandLevelFlagged"));
    }
    const std::string offStations = summaryValue(off, "stations");
    const std::string key = "\"subbandLevelFlaggedBlocks\": ";
    for (size_t at = offStations.find(key); at != std::string::npos;
         at = offStations.find(key, at + 1))
      CPPUNIT_ASSERT_EQUAL_MESSAGE(offStations, '0', offStations[at + key.size()]);
    const std::string parset = readFile(on + "/observation.parset");
    CPPUNIT_ASSERT(parset.find("Rtcp.Flagging.subbandLevel.enabled = T") != std::string::npos);
  }

  void testInterferenceFlaggedOnlineAndNotWithout() {
    TempDir dir;
    const SmallObservation o = observation(dir);
    const std::string recordParset = writeParset(dir.path() + "/record.parset", o);
    CPPUNIT_ASSERT_EQUAL(0, runProgram({executable("station-sim/station-sim"), recordParset,
                                        "--record", dir.path() + "/recordings"},
                                       dir.path() + "/record.log"));
    const std::string on =
        replay(dir, o, "on",
               "OLAP.CNProc.onlineFlagging = T\nOLAP.CNProc.onlinePreCorrelationFlagging = T\n"
               "OLAP.CNProc.onlinePostCorrelationFlagging = T\n"
               "Rtcp.Flagging.postCorrelation.window = 12\n"
               "Rtcp.Flagging.postCorrelation.overlap = 3\n");
    const std::string off = replay(dir, o, "off", "");
    const MsContents flagged = theMs(dir.path() + "/on-out");
    const MsContents plain = theMs(dir.path() + "/off-out");
    // Antennas in station-list order: CS001 0, CS002 1, RS106 2, RS205 3, RS306 4.

    // Without flagging the tone is in the data: CS002's channel 12 stands out, unflagged.
    const Cell toneOff = cell(plain, 1, 1, kToneChannel);
    const Cell besideOff = cell(plain, 1, 1, kToneChannel - 2);
    std::cout << "\nflagging off: CS002 channel 12 " << toneOff.amplitude << ", channel 10 "
              << besideOff.amplitude << ", weight " << toneOff.weight << "\n";
    CPPUNIT_ASSERT(toneOff.amplitude > 1.8 * besideOff.amplitude);
    CPPUNIT_ASSERT(toneOff.flagged == 0 && toneOff.weight > 0.99);

    // With it: flagged (FLAG, weight 0) at CS002, on its autocorrelation and baselines.
    for (int other : {0, 1, 3}) {
      const Cell tone = cell(flagged, std::min(1, other), std::max(1, other), kToneChannel);
      CPPUNIT_ASSERT_MESSAGE(std::to_string(tone.flagged), tone.flagged >= 0.95);
      CPPUNIT_ASSERT(tone.weight <= 0.05);
    }
    // The bursts (4 ms a second, 0.4 % of the samples) take their share off the weights of
    // the clean channels; they were flagged, the rest was not.
    for (int station : {0, 3})
      for (int c = 1; c < 16; ++c) {
        const double weight = cell(flagged, station, station, c).weight;
        const double without = cell(plain, station, station, c).weight;
        CPPUNIT_ASSERT_MESSAGE(std::to_string(weight), weight < without - 0.003);
        CPPUNIT_ASSERT_MESSAGE(std::to_string(weight), weight > without - 0.02);
      }
    // The weights drop by exactly what was flagged before correlation: each station's
    // autocorrelation holds, to the sample, what arrived (without flagging) less what the
    // ranks' logs count as flagged (RS106 and RS306, flagged whole after correlation too,
    // apart).
    const std::string onLogs = logsOf(on);
    for (int station : {0, 1, 3}) {
      const std::string name = o.stations[size_t(station)] + "LBA";
      const auto [flaggedSamples, arrived] = preCorrelationCounts(onLogs, name);
      const double with = autocorrelationSamples(flagged, station, o.steps);
      const double without = autocorrelationSamples(plain, station, o.steps);
      std::cout << name << ": " << flaggedSamples << " of " << arrived
                << " samples flagged before correlation; WEIGHT_SPECTRUM holds " << with << " of "
                << without << "\n";
      CPPUNIT_ASSERT(flaggedSamples > 0);
      CPPUNIT_ASSERT_EQUAL(double(arrived), without);
      CPPUNIT_ASSERT_EQUAL(double(arrived - flaggedSamples), with);
    }
    // RS106 sent zeros: flagged whole, and the correlator's log says so.
    for (int c = 1; c < 16; ++c) CPPUNIT_ASSERT_EQUAL(0.0, cell(flagged, 2, 2, c).weight);
    CPPUNIT_ASSERT(cell(plain, 2, 2, 5).weight > 0.99);  // zeros, but not flagged
    const std::string logs = logsOf(on);
    CPPUNIT_ASSERT_MESSAGE(
        logs, logs.find("broken stations, flagged whole: RS106LBA") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(logs,
                           logs.find("post-correlation flagging (AOFlagger") != std::string::npos);
    // RS306 sent noise alone: its autocorrelation looks right, its cross-correlations have no
    // sky; flagged whole after correlation and named.
    for (int c = 1; c < 16; ++c) {
      CPPUNIT_ASSERT(cell(flagged, 4, 4, c).weight <= 0.05);
      CPPUNIT_ASSERT(cell(flagged, 0, 4, c).weight <= 0.05);
      CPPUNIT_ASSERT(cell(plain, 4, 4, c).weight > 0.99);
    }
    const size_t incoherent = logs.find(
        "post-correlation broken stations (no sky in their "
        "cross-correlations), flagged whole: ");
    CPPUNIT_ASSERT_MESSAGE(logs, incoherent != std::string::npos);
    const std::string line = logs.substr(incoherent, logs.find('\n', incoherent) - incoherent);
    CPPUNIT_ASSERT_MESSAGE(line, line.find("RS306LBA in 23 of 23") != std::string::npos);
    // The summary says so too, with the fraction flagged per station and stage.
    const std::string stations = summaryValue(on, "stations");
    std::cout << "summary's stations: " << stations << "\n";
    auto field = [&](const std::string& station, const std::string& key) {
      return stationField(stations, station, key);
    };
    CPPUNIT_ASSERT(field("RS306LBA", "incoherentIntegrations") >= 20);  // of 23
    CPPUNIT_ASSERT_EQUAL(0.0, field("CS001LBA", "incoherentIntegrations"));
    CPPUNIT_ASSERT(field("CS002LBA", "preCorrelationFlagged") >
                   field("CS001LBA", "preCorrelationFlagged"));
    CPPUNIT_ASSERT(field("CS001LBA", "preCorrelationFlagged") > 0.003);  // the bursts
    // RS106: zeros flagged before correlation; where its bursts gave it power, after.
    CPPUNIT_ASSERT(field("RS106LBA", "brokenSubbandBlocks") >= 15);
    CPPUNIT_ASSERT(field("RS106LBA", "incoherentIntegrations") >= 1);
    const std::string summary = summaryValue(on, "flagging");
    std::cout << "summary's flagging: " << summary << "\n";
    CPPUNIT_ASSERT_MESSAGE(summary, summary.find("RS106LBA in ") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(summary,
                           summary.find("pre-correlation flagging: flagged of the "
                                        "samples that arrived: CS001LBA") != std::string::npos);
    CPPUNIT_ASSERT_MESSAGE(
        summary, summary.find("post-correlation flagging (AOFlagger") != std::string::npos);
    CPPUNIT_ASSERT_EQUAL(std::string("[]"), summaryValue(off, "flagging"));
    // The effective parset carries the flagging keys.
    const std::string parset = readFile(on + "/observation.parset");
    CPPUNIT_ASSERT(parset.find("OLAP.CNProc.onlinePreCorrelationFlagging = T") !=
                   std::string::npos);
    CPPUNIT_ASSERT(parset.find("Rtcp.Flagging.postCorrelation.window = 12") != std::string::npos);

    // AOFlagger offline (the aoflagger command, its LOFAR strategy) on a copy of the MS
    // written without flagging, against the online flags (FLAG: what the post-correlation
    // flagger flagged and what the pre-correlation flagger flagged for a whole integration),
    // on the cross-correlations without the silent station.
    const std::string offlineMs = dir.path() + "/offline.MS";
    std::filesystem::copy(msPath(dir.path() + "/off-out"), offlineMs,
                          std::filesystem::copy_options::recursive);
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({"/usr/bin/aoflagger", offlineMs}, dir.path() + "/aoflagger.log"));
    const MsContents offline = readMeasurementSet(offlineMs);
    for (bool edges : {false, true}) {
      const Agreement a = agreement(flagged, offline, {2, 4}, edges);
      std::cout << "online against AOFlagger offline, " << a.cells() << " cross-correlation cells ("
                << (edges ? "the edge channels 1 and 15" : "channels 2..14") << "): both "
                << a.percent(a.both) << " %, online only " << a.percent(a.onlineOnly)
                << " %, offline only " << a.percent(a.offlineOnly) << " %, neither "
                << a.percent(a.neither) << " %\n";
      if (edges) continue;
      // Everything AOFlagger finds offline the online flaggers found; they also find the
      // tone at CS002, which the cross-correlations hide (AOFlagger offline: a few cells).
      CPPUNIT_ASSERT(a.both > 0);
      CPPUNIT_ASSERT_MESSAGE(std::to_string(a.ofOffline()), a.ofOffline() >= 0.9);
      CPPUNIT_ASSERT(a.onlineOnly >= 40);  // CS002's channel 12 on 2 baselines × 23
      CPPUNIT_ASSERT(a.percent(a.onlineOnly) < 6);
    }
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(FlaggingTest);

}  // namespace rtcp::observe::test
