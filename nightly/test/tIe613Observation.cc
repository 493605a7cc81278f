// parsets/ie613.parset through the real observe: the IE613 capture (one station, 488
// subbands, 102-197 MHz) gives an MS of autocorrelations per subband whose power follows
// the station's bandpass: low below 110 and above 190 MHz (the HBA 110-190 filter), and
// across subbands in proportion to the power of the raw samples of the capture; and
// within each subband, with the station bandpass correction (the parset's
// OLAP.correctBandPass = T, from LOFAR's station filter), the 16 channels are flat.
#include <cppunit/extensions/HelperMacros.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <regex>

#include "MsReader.h"
#include "ObserveTestUtil.h"
#include "TestData.h"
#include "rtcp/ObservationSettings.h"

namespace rtcp::nightly::test {
namespace {

/// Mean power |x|^2 (X + Y) of each beamlet over the trimmed capture: [subband index].
std::vector<double> rawPower() {
  std::vector<double> power;
  for (int port = 0; port < 4; ++port) {
    const std::string bytes = readFile(rtcp::test::testDataDir() + "/ie613-capture/udp_1613" +
                                       std::to_string(port) + ".rsp");
    const size_t packet = 16 + 122 * 16 * 4;
    std::vector<double> sum(122, 0.0);
    for (size_t offset = 0; offset + packet <= bytes.size(); offset += packet)
      for (size_t i = 0; i < 122 * 16 * 4; ++i) {
        const double v = static_cast<int8_t>(bytes[offset + 16 + i]);
        sum[i / 64] += v * v;
      }
    for (double s : sum) power.push_back(s / double(bytes.size() / packet * 16));
  }
  return power;
}

double median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

class Ie613ObservationTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(Ie613ObservationTest);
  CPPUNIT_TEST(testBandpass);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testBandpass() {
    const std::string shipped = rtcp::test::sourceDir() + "/parsets/ie613.parset";
    const ObservationSettings s = ObservationSettings::fromFile(shipped);  // paths relative to it
    CPPUNIT_ASSERT(s.unknownKeys.empty());
    CPPUNIT_ASSERT_EQUAL(1, s.nrStations());
    CPPUNIT_ASSERT_EQUAL(488, s.nrSubbands());
    for (const std::string& input : s.stations[0].inputs)
      CPPUNIT_ASSERT(std::filesystem::exists(input.substr(5)));

    // The shipped parset with its output in a temporary directory and the recordings named
    // absolutely (observe resolves relative paths against its working directory).
    TempDir dir;
    std::string text = readFile(shipped);
    text = std::regex_replace(text, std::regex("localhost:ie613-output/L613"),
                              "localhost:" + dir.path + "/ms");
    text = std::regex_replace(text, std::regex("file:\\.\\./"),
                              "file:" + rtcp::test::sourceDir() + "/");
    std::ofstream(dir.path + "/ie613.parset") << text;
    // storage-sink takes longer than 5 s to create 488 MSs before it listens: observe
    // must wait for it rather than call the replay stalled (the integrations would be lost).
    const int code = run(std::string(RTCP_OBSERVE_EXECUTABLE) + " " + dir.path +
                         "/ie613.parset --dir " + dir.path + "/obs --keep-going-seconds 5 > " +
                         dir.path + "/observe.out 2> " + dir.path + "/observe.err");
    CPPUNIT_ASSERT_EQUAL_MESSAGE(readFile(dir.path + "/observe.err"), 0, code);

    const std::vector<double> raw = rawPower();
    std::vector<double> inBand, below, above, logRatio;
    // [channel][subband]: dB relative to the subband's mean over channels 1..C-1
    std::vector<std::vector<double>> channelLevels(size_t(s.channelsPerSubband));
    for (const SubbandSettings& sb : s.subbands) {
      const auto ms = storage::test::readMeasurementSet(
          dir.path + "/ms/" + ObservationSettings::defaultFilename(613, sb.beam, sb.index));
      CPPUNIT_ASSERT_EQUAL(size_t(s.nrBlocks()), ms.nrRows);  // one autocorrelation per integration
      double sum = 0;
      size_t n = 0;
      for (size_t cell = 0; cell < ms.data.size(); cell += 4)  // [row][channel][pol]
        if (!ms.flag[cell] && !ms.flag[cell + 3]) {
          sum += ms.data[cell].real() + ms.data[cell + 3].real();
          ++n;
        }
      CPPUNIT_ASSERT_MESSAGE("subband " + std::to_string(sb.number) + " all flagged", n > 0);
      collectChannelLevels(ms, channelLevels);
      const double power = sum / double(n), mhz = sb.frequency / 1e6;
      CPPUNIT_ASSERT_MESSAGE(
          "subband " + std::to_string(sb.number) + ": power " + std::to_string(power), power > 0);
      if (mhz < 110) below.push_back(power);
      if (mhz > 190) above.push_back(power);
      if (mhz > 120 && mhz < 180) inBand.push_back(power);
      logRatio.push_back(std::log10(power / raw.at(size_t(sb.index))));
    }
    // The HBA filter: in band at least 3 dB above both sides (the raw samples show 3.9 dB
    // below 110 MHz and 5.5 dB above 190 MHz).
    CPPUNIT_ASSERT(10 * std::log10(median(inBand) / median(below)) > 3.0);
    CPPUNIT_ASSERT(10 * std::log10(median(inBand) / median(above)) > 3.0);
    // The channelised power follows the raw power subband by subband: their ratio is the
    // same everywhere to within 1 dB for 90 % of the subbands.
    const double typical = median(logRatio);
    const auto close = std::count_if(logRatio.begin(), logRatio.end(),
                                     [&](double r) { return std::abs(r - typical) < 0.1; });
    CPPUNIT_ASSERT(close >= long(0.9 * double(logRatio.size())));

    // Bandpass-corrected channels 1..15 (channel 0 holds the subband edges and is flagged):
    // the median over subbands of each channel's level within 0.3 dB of their mean.
    std::vector<double> medians;
    for (int c = 1; c < s.channelsPerSubband; ++c)
      medians.push_back(median(channelLevels[size_t(c)]));
    const double mean =
        std::accumulate(medians.begin(), medians.end(), 0.0) / double(medians.size());
    std::string levels;
    for (double m : medians) levels += " " + std::to_string(m - mean).substr(0, 6);
    for (double m : medians)
      CPPUNIT_ASSERT_MESSAGE("channel levels (dB):" + levels, std::abs(m - mean) < 0.3);
  }

 private:
  /// Each channel's power (XX + YY over unflagged rows) in dB relative to the subband's
  /// mean over channels 1..C-1, appended to levels[channel].
  static void collectChannelLevels(const storage::test::MsContents& ms,
                                   std::vector<std::vector<double>>& levels) {
    const size_t channels = size_t(ms.nrChannels);
    std::vector<double> power(channels, 0.0);
    std::vector<size_t> count(channels, 0);
    for (size_t row = 0; row < ms.nrRows; ++row)
      for (size_t c = 0; c < channels; ++c) {
        const size_t cell = (row * channels + c) * 4;
        if (ms.flag[cell] || ms.flag[cell + 3]) continue;
        power[c] += ms.data[cell].real() + ms.data[cell + 3].real();
        ++count[c];
      }
    double mean = 0;
    for (size_t c = 1; c < channels; ++c) {
      if (count[c] == 0) return;  // a subband with a channel all flagged says nothing
      power[c] /= double(count[c]);
      mean += power[c] / double(channels - 1);
    }
    for (size_t c = 1; c < channels; ++c) levels[c].push_back(10 * std::log10(power[c] / mean));
  }
};

CPPUNIT_TEST_SUITE_REGISTRATION(Ie613ObservationTest);

}  // namespace rtcp::nightly::test
