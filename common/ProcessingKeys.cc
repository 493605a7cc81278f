// ObservationSettings: the correlator's processing keys of both generations
// (SettingsReaders.h). COBALT's Cobalt.* keys win, as in COBALT; a BG/P key (OLAP.*,
// Observation.channelsPerSubband) that says something else is a warning naming both.
#include <cmath>
#include <optional>
#include <sstream>

#include "SettingsReaders.h"
#include "rtcp/CobaltBlockSize.h"
#include "rtcp/Logger.h"

namespace rtcp::settings {
namespace {

const std::vector<std::string> kChannelKeys{"Cobalt.Correlator.nrChannelsPerSubband",
                                            "Observation.channelsPerSubband",
                                            "OLAP.Correlator.nrChannelsPerSubband"};
const std::string kBlockSize = "Cobalt.blockSize";                    // samples
const std::string kBgpBlockSpectra = "OLAP.CNProc.integrationSteps";  // spectra
const std::vector<std::string> kBlocksKeys{"Cobalt.Correlator.nrBlocksPerIntegration",
                                           "OLAP.IONProc.integrationSteps",
                                           "OLAP.Correlator.nrBlocksPerIntegration"};
const std::string kSubblocks = "Cobalt.Correlator.nrIntegrationsPerBlock";
const std::vector<std::string> kTimeKeys{"Cobalt.Correlator.integrationTime",
                                         "OLAP.Correlator.integrationTime"};
constexpr int64_t kCobaltDefaultBlockSize = 196608;  // COBALT's default Cobalt.blockSize

bool eitherBool(const Parset& p, Problems& problems, const std::string& name, bool fallback) {
  const auto given = firstOf<bool>(
      p, problems, {"Cobalt." + name, "OLAP." + name},
      [&](const std::string& key) { return p.getBool(key); },
      [](bool a, bool b) { return a == b; });
  return given ? given->value : fallback;
}

int readChannels(const Parset& p, Problems& problems) {
  const auto channels = firstInt(p, problems, kChannelKeys, 1, 65536);
  if (!channels) return 64;
  if ((channels->value & (channels->value - 1)) != 0)
    p.fail(channels->key, std::to_string(channels->value) + " is not a power of two");
  return int(channels->value);
}

/// Block size in samples from Cobalt.blockSize or OLAP.CNProc.integrationSteps (spectra).
std::optional<Given<int64_t>> readBlockSize(const Parset& p, Problems& problems, int channels) {
  std::optional<Given<int64_t>> cobalt, bgp;
  if (p.isDefined(kBlockSize))
    cobalt = Given<int64_t>{intInRange(p, kBlockSize, 0, 1, 2'000'000'000), kBlockSize};
  if (p.isDefined(kBgpBlockSpectra))
    bgp = Given<int64_t>{int64_t(intInRange(p, kBgpBlockSpectra, 0, 1, 100'000'000)) * channels,
                         kBgpBlockSpectra};
  if (cobalt && bgp && cobalt->value != bgp->value)
    problems.warn(kBgpBlockSpectra, "says " + p.getString(kBgpBlockSpectra) + " spectra of " +
                                        std::to_string(channels) + " channels (" +
                                        std::to_string(bgp->value) + " samples), but " +
                                        kBlockSize + " says " + std::to_string(cobalt->value) +
                                        " samples: using " + kBlockSize + " (COBALT's keys win)");
  return cobalt ? cobalt : bgp;
}

std::string seconds(double value) {
  std::ostringstream text;
  text.precision(6);
  text << value << " s";
  return text.str();
}

/// The block size and integration as COBALT (or LOFAR's scheduler, from an integration
/// time alone) makes them.
void readIntegration(const Parset& p, Problems& problems, ObservationSettings& s) {
  const int channels = s.channelsPerSubband;
  const double fs = s.subbandWidth();
  auto blockSize = readBlockSize(p, problems, channels);
  auto blocks = firstInt(p, problems, kBlocksKeys, 1, 1'000'000);
  auto subblocks = firstInt(p, problems, {kSubblocks}, 1, 1'000'000);
  const auto time = firstOf<double>(
      p, problems, kTimeKeys, [&](const std::string& key) { return p.getDouble(key); },
      [](double a, double b) { return std::abs(a - b) <= 1e-4 * std::abs(a); });
  if (time && !(time->value > 0)) p.fail(time->key, "the integration time must be positive");

  if (!blockSize && time) {  // as LOFAR's scheduler derives the block keys
    const CobaltBlockSize derived = cobaltBlockSize(time->value, channels, s.clockMHz);
    blockSize = Given<int64_t>{derived.blockSize, time->key};
    if (!blocks) blocks = Given<int64_t>{derived.nrBlocksPerIntegration, time->key};
    if (!subblocks) subblocks = Given<int64_t>{derived.nrIntegrationsPerBlock, time->key};
  } else if (blockSize && time && !blocks && !subblocks) {
    const double block = double(blockSize->value) / fs;
    if (time->value >= block / 2)
      blocks = Given<int64_t>{std::max<int64_t>(1, std::llround(time->value / block)), time->key};
    else
      subblocks = Given<int64_t>{std::llround(block / time->value), time->key};
  }
  const int64_t samples = blockSize ? blockSize->value : kCobaltDefaultBlockSize;
  const int64_t nrBlocks = blocks ? blocks->value : 1;
  const int64_t nrSubblocks = subblocks ? subblocks->value : 1;
  if (nrBlocks > 1 && nrSubblocks > 1)
    p.fail(kSubblocks, "integrations span several blocks (" + blocks->key + " = " +
                           std::to_string(nrBlocks) + ") and several per block (" +
                           std::to_string(nrSubblocks) + "): COBALT allows only one of both");
  const std::string sizeKey = blockSize ? blockSize->key : kBlockSize;
  if (samples % (channels * nrSubblocks) != 0)
    p.fail(sizeKey, "a block of " + std::to_string(samples) + " samples is not a whole number of " +
                        std::to_string(nrSubblocks) + " integration(s) of " +
                        std::to_string(channels) + "-channel spectra");
  // Integrations shorter than a block: rtcp's blocks are those integrations.
  s.spectraPerBlock = int(samples / channels / nrSubblocks);
  s.blocksPerIntegration = int(nrBlocks);
  if (time && std::abs(s.integrationDuration() - time->value) > 1e-4 * time->value)
    problems.warn(time->key, "asks for " + seconds(time->value) + "; whole blocks of " +
                                 std::to_string(samples) + " samples give integrations of " +
                                 seconds(s.integrationDuration()) + " (as COBALT rounds it)");
}

}  // namespace

void readProcessing(const Parset& p, Problems& problems, ObservationSettings& s) {
  const bool channelsOk = problems.guard([&] { s.channelsPerSubband = readChannels(p, problems); });
  if (channelsOk) problems.guard([&] { readIntegration(p, problems, s); });
  problems.guard([&] { s.delayCompensation = eitherBool(p, problems, "delayCompensation", true); });
  problems.guard([&] { s.correctBandPass = eitherBool(p, problems, "correctBandPass", true); });
  problems.guard([&] { s.correctClocks = eitherBool(p, problems, "correctClocks", true); });
  problems.guard([&] { s.realTime = eitherBool(p, problems, "realTime", true); });
  problems.guard([&] {
    s.secondsOfBuffer = p.getDouble("OLAP.nrSecondsOfBuffer", 2.5);
    if (!(s.secondsOfBuffer > 0)) p.fail("OLAP.nrSecondsOfBuffer", "must be positive");
    // Every station's buffer is allocated at start-up: 1e9 s once died in std::bad_alloc.
    if (s.secondsOfBuffer > kMaxSecondsOfBuffer)
      p.fail("OLAP.nrSecondsOfBuffer",
             formatNumber(s.secondsOfBuffer) + " s is more than the " +
                 formatNumber(kMaxSecondsOfBuffer) +
                 " s rtcp allows (each station's buffer is held in memory, and the host's memory "
                 "is checked too; LOFAR uses 2.5 s)");
  });
  problems.guard([&] {
    s.maxNetworkDelay = p.getDouble("OLAP.maxNetworkDelay", 0.25);
    if (!(s.maxNetworkDelay >= 0)) p.fail("OLAP.maxNetworkDelay", "must not be negative");
    // The buffers grow to hold what arrives while a block waits (as with the 1e9 s buffer).
    if (s.maxNetworkDelay > kMaxNetworkDelay)
      p.fail("OLAP.maxNetworkDelay", formatNumber(s.maxNetworkDelay) + " s is more than the " +
                                         formatNumber(kMaxNetworkDelay) +
                                         " s rtcp allows (LOFAR uses 0.25 s)");
  });
}

}  // namespace rtcp::settings
