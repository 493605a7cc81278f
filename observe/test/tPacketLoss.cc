// Packet loss end to end: station-sim records 3 stations with packets dropped at random
// (listed in dropped-packets.txt), observe replays the recordings (file: inputs,
// OLAP.realTime = F: nothing else is lost), and every MS weight equals the fraction of the
// integration's spectra in which both stations' filter windows saw only samples that
// arrived (LofarStMan's scale: WEIGHT_SPECTRUM <= 1, WEIGHT = SIGMA = 1).
//
// Expected weights, exactly: block b of station s holds samples blockStart(b) - 15 C ..
// blockStart(b) + S C (15 C samples of filter history); spectrum k reads [k C, k C + 16 C)
// of them (correlator/SpectrumFlagger.h). A sample is missing when its packet was dropped
// or lies outside the recording (before the start: the first block's history). A
// baseline's weight is the number of spectra valid at both its stations over the spectra
// per integration. Delay
// compensation is off so that no station's stream is shifted by a coarse delay: the
// spectra of both stations then read the same sample numbers.
#include <cppunit/extensions/HelperMacros.h>

#include <bit>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/RspPacket.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::test {

using storage::test::MsContents;
using storage::test::readMeasurementSet;
using storage::test::TempDir;

class PacketLossTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(PacketLossTest);
  CPPUNIT_TEST(testWeightsCountExactlyTheLostSamples);
  CPPUNIT_TEST(testPacketsBeforeTheStartDoNotHideLosses);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testWeightsCountExactlyTheLostSamples() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4713;
    o.stations = {"CS001", "CS002", "RS106"};
    o.seconds = 3;
    o.realTime = false;
    o.delayCompensation = false;
    o.outputDir = dir.path() + "/out";
    o.extra = "Sim.packetLossProbability = 0.0005\n";
    const std::string recordings = dir.path() + "/recordings";
    const std::string recordParset = writeParset(dir.path() + "/record.parset", o);
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({executable("station-sim/station-sim"), recordParset, "--record", recordings},
                      dir.path() + "/record.log"));
    o.inputs.clear();
    for (const std::string& station : o.stations)
      o.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");
    const std::string replayParset = writeParset(dir.path() + "/replay.parset", o);
    const std::string obs = dir.path() + "/obs";
    const int code =
        runProgram(observeCommand({replayParset, "--dir", obs}), dir.path() + "/observe.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/observe.log"), 0, code);

    const ObservationSettings settings = ObservationSettings::fromFile(obs + "/observation.parset");
    const auto lost = droppedPackets(recordings + "/dropped-packets.txt", settings);
    size_t nrLost = 0;
    for (const auto& [station, packets] : lost) nrLost += packets.size();
    CPPUNIT_ASSERT_MESSAGE("station-sim dropped no packet: the test would prove nothing",
                           nrLost > 0);
    // The summary counts the lost packets, station by station.
    const std::string stations = summaryValue(obs, "stations");
    for (const std::string& name : o.stations) {
      const std::string station = name + "LBA";  // the antenna field
      const size_t entry = stations.find("\"name\": \"" + station + "\"");
      CPPUNIT_ASSERT_MESSAGE(stations, entry != std::string::npos);
      const auto it = lost.find(station);
      const std::string count =
          "\"packetsLost\": " + std::to_string(it == lost.end() ? 0 : it->second.size()) + ",";
      CPPUNIT_ASSERT_MESSAGE(
          count + " in " + stations,
          stations.substr(entry, stations.find('}', entry) - entry).find(count) !=
              std::string::npos);
    }
    size_t flaggedSpectra = 0;
    for (const SubbandSettings& sb : settings.subbands) {
      const MsContents ms =
          readMeasurementSet(settings.correlatedOutput.directories[0] + "/" +
                             settings.correlatedOutput.filenames[size_t(sb.index)]);
      flaggedSpectra += checkWeights(ms, settings, lost);
    }
    CPPUNIT_ASSERT(flaggedSpectra > 0);
  }

  /// Stations recorded from 2 s before the observation's start (packets dropped at
  /// random) and replayed: the packets before the start are counted apart and do not make
  /// up for those lost inside start..stop.
  void testPacketsBeforeTheStartDoNotHideLosses() {
    TempDir dir;
    SmallObservation o;
    o.obsId = 4714;
    o.stations = {"CS001", "CS002"};
    o.seconds = 5;
    o.realTime = false;
    o.outputDir = dir.path() + "/out";
    o.extra = "Sim.packetLossProbability = 0.001\n";
    const std::string recordings = dir.path() + "/recordings";
    CPPUNIT_ASSERT_EQUAL(
        0, runProgram({executable("station-sim/station-sim"),
                       writeParset(dir.path() + "/record.parset", o), "--record", recordings},
                      dir.path() + "/record.log"));
    const double recordingStart = parseUtc(o.start);
    o.start = formatUtc(recordingStart + 2);
    o.seconds = 3;
    for (const std::string& station : o.stations)
      o.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");
    const std::string obs = dir.path() + "/obs";
    const int code =
        runProgram(observeCommand({writeParset(dir.path() + "/replay.parset", o), "--dir", obs}),
                   dir.path() + "/observe.log");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path() + "/observe.log"), 0, code);

    // The recording's packets start at its first sample, 16 apart; those overlapping
    // start..stop are the window's. observe expects ceil((stop - start) / 16) of them.
    const ObservationSettings settings = ObservationSettings::fromFile(obs + "/observation.parset");
    const SampleClock clock(settings.clockMHz);
    const int64_t first = clock.firstSampleAtOrAfter(recordingStart);
    const int64_t start = clock.firstSampleAtOrAfter(settings.startTime);
    const int64_t stop = clock.firstSampleAtOrAfter(settings.stopTime);
    auto inWindow = [&](int64_t sample) { return sample + 16 > start && sample < stop; };
    int64_t overlapping = 0;
    for (int64_t sample = first; sample < stop; sample += kRspSamplesPerPacket)
      overlapping += inWindow(sample);
    const int64_t expected = (stop - start + 15) / 16;
    const Lost dropped = droppedPackets(recordings + "/dropped-packets.txt", settings);
    const std::string stations = summaryValue(obs, "stations");
    int64_t totalLost = 0;
    for (const std::string& name : o.stations) {
      const std::string station = name + "LBA";
      int64_t lostInside = 0;
      if (const auto it = dropped.find(station); it != dropped.end())
        for (const int64_t sample : it->second) lostInside += inWindow(sample);
      const int64_t lost = std::max<int64_t>(0, expected - (overlapping - lostInside));
      totalLost += lost;
      const size_t entry = stations.find("\"name\": \"" + station + "\"");
      CPPUNIT_ASSERT_MESSAGE(stations, entry != std::string::npos);
      const std::string summary = stations.substr(entry, stations.find('}', entry) - entry);
      std::cerr << station << ": " << lostInside << " packets dropped inside the window; "
                << summary << "\n";
      CPPUNIT_ASSERT_MESSAGE(summary, summary.find("\"packetsLost\": " + std::to_string(lost) +
                                                   ",") != std::string::npos);
      CPPUNIT_ASSERT_MESSAGE(summary,
                             summary.find("\"packetsBeforeWindow\": 0,") == std::string::npos);
    }
    CPPUNIT_ASSERT_MESSAGE("no packet lost inside the window: the test would prove nothing",
                           totalLost > 0);
  }

 private:
  using Lost =
      std::map<std::string, std::set<int64_t>>;  ///< station -> first sample of each dropped packet

  static Lost droppedPackets(const std::string& path, const ObservationSettings& settings) {
    std::ifstream file(path);
    CPPUNIT_ASSERT_MESSAGE(path, file.good());
    const SampleClock clock(settings.clockMHz);
    Lost lost;
    for (std::string line; std::getline(file, line);) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream fields(line);
      std::string station;
      int port = 0;
      RspStamp stamp;
      fields >> station >> port >> stamp.timestamp >> stamp.sequence;
      CPPUNIT_ASSERT_MESSAGE(line, !fields.fail());
      lost[station].insert(clock.sampleNumber(stamp));  // one port carries every subband here
    }
    return lost;
  }

  /// valid[spectrum] of one station and block.
  static std::vector<bool> validSpectra(const ObservationSettings& s, const std::set<int64_t>& lost,
                                        int64_t block) {
    const SampleClock clock(s.clockMHz);
    const int64_t first = clock.firstSampleAtOrAfter(s.startTime);
    const int64_t end = first + (clock.firstSampleAtOrAfter(s.stopTime) - first + 15) / 16 * 16;
    const int C = s.channelsPerSubband;
    const int64_t blockFirst = s.blockStartSample(block) - 15 * C;
    auto arrived = [&](int64_t sample) {
      if (sample < first || sample >= end) return false;
      const int64_t packet = first + (sample - first) / kRspSamplesPerPacket * kRspSamplesPerPacket;
      return lost.count(packet) == 0;
    };
    std::vector<bool> valid(size_t(s.spectraPerBlock), true);
    for (int k = 0; k < s.spectraPerBlock; ++k)
      for (int64_t t = int64_t(k) * C; t < int64_t(k + 16) * C && valid[size_t(k)]; ++t)
        valid[size_t(k)] = arrived(blockFirst + t);
    return valid;
  }

  /// Checks every weight of the MS; returns the number of (baseline, integration)
  /// weights below the full block.
  static size_t checkWeights(const MsContents& ms, const ObservationSettings& s, const Lost& lost) {
    const int nrStations = s.nrStations();
    const size_t nrBaselines = size_t(nrStations * (nrStations + 1) / 2);
    CPPUNIT_ASSERT_EQUAL(size_t(s.nrIntegrations()) * nrBaselines, ms.nrRows);
    std::map<std::pair<int64_t, int>, std::vector<bool>> masks;  // (block, station)
    for (int64_t b = 0; b < s.nrBlocks(); ++b)
      for (int st = 0; st < nrStations; ++st) {
        const auto it = lost.find(s.stations[size_t(st)].name);
        masks[{b, st}] = validSpectra(s, it == lost.end() ? std::set<int64_t>{} : it->second, b);
      }
    size_t partial = 0;
    for (size_t row = 0; row < ms.nrRows; ++row) {
      const int64_t block = int64_t(row / nrBaselines);
      const auto& m1 = masks[{block, ms.antenna1[row]}];
      const auto& m2 = masks[{block, ms.antenna2[row]}];
      uint32_t expected = 0;
      for (size_t k = 0; k < m1.size(); ++k) expected += m1[k] && m2[k];
      partial += expected < uint32_t(s.spectraPerBlock);
      // One block per integration: the fraction of the block's spectra, as storage-sink
      // computes it.
      const float weight =
          float(expected) / float(int64_t(s.spectraPerBlock) * s.blocksPerIntegration);
      CPPUNIT_ASSERT(weight <= 1.0f);
      CPPUNIT_ASSERT_EQUAL(1.0f, ms.weight[row * 4]);
      CPPUNIT_ASSERT_EQUAL(1.0f, ms.sigma[row * 4]);
      for (int ch = 1; ch < ms.nrChannels; ++ch)
        for (int pol = 0; pol < 4; ++pol) {
          const size_t i = (row * size_t(ms.nrChannels) + size_t(ch)) * 4 + size_t(pol);
          std::ostringstream where;
          where << "row " << row << " (block " << block << ", stations " << ms.antenna1[row] << "-"
                << ms.antenna2[row] << ") channel " << ch << " pol " << pol;
          CPPUNIT_ASSERT_EQUAL_MESSAGE(where.str(), weight, ms.weightSpectrum[i]);
          CPPUNIT_ASSERT_EQUAL_MESSAGE(where.str(), expected == 0, ms.flag[i] != 0);
        }
    }
    return partial;
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(PacketLossTest);

}  // namespace rtcp::observe::test
