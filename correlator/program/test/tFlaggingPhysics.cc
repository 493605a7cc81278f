// Online flagging's physics through the real chain: station-sim records 4 stations (a
// source of flux 4 at the phase centre, receiver noise 1, 2 subbands of 16 channels, 4 s),
// each kind of interference of Sim.rfi.* in turn, and the correlator program flags and
// correlates them (OLAP.CNProc.onlineFlagging with the pre- and post-correlation keys on,
// and the bright source and the mixed interference again with the pre-correlation key
// alone; blocks and integrations of 0.17 s). Its integrations (correlator-local --dump,
// after flagging) are scored against what station-sim put where:
//  - every kind (a tone at one station, a tone at every station, broadband bursts, a
//    drifting narrow-band signal, a noise-only station, a tone-only station): ≥ 95 % of
//    the affected samples of the cross-correlations flagged, and with the pre-correlation
//    flagger alone (and the output path's search for stations without sky) too;
//  - clean samples (outside a guard of a channel beside narrow-band interference and of
//    two flagger cells, 32 spectra, around a burst) ≤ 1 % flagged, in every run, noise
//    alone and with the bright source;
//  - the subband's edge channels (1 and 15), counted apart (Score::edge): ≤ 1 % flagged by
//    the pre-correlation flagger in every run and by both flaggers on noise alone. With
//    the bright source AOFlagger may flag a share of them (reported; LOFAR's strategy 57 %,
//    rtcp's online strategy, on Stokes I amplitudes, 0.0003 %), and rightly: the
//    neighbouring subbands' aliases there (the station filter's -17 dB 0.05 subbands beyond
//    the edge) add the source with the delay phase of their own sky frequency, which the
//    bandpass correction (for noise) does not undo, so each edge channel's visibility lies
//    more than 5 σ (8-15 σ measured) off the inner channels' on every baseline, every
//    inner channel within 5 σ (asserted, pre-correlation flagging alone);
//  - the source's amplitude and phase on every baseline without a broken station equal
//    the interference-free run's within the noise;
//  - the weights: with pre-correlation flagging alone, each station's autocorrelation
//    holds, to the sample, what arrived less what the flagger flagged as the rank's log
//    counts it (countsDropByWhatWasFlagged).
#include <cppunit/extensions/HelperMacros.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include "DumpFile.h"
#include "Executables.h"
#include "ObserveTestUtil.h"
#include "StorageTestUtil.h"
#include "rtcp/Baselines.h"

namespace rtcp::correlator::test {

using observe::test::readFile;
using observe::test::runProgram;
using observe::test::SmallObservation;
using observe::test::writeParset;
using storage::test::TempDir;

namespace {

constexpr int kStations = 4, kChannels = 16, kSpectra = 2048;
constexpr double kFs = 195312.5, kChannelWidth = kFs / kChannels;
constexpr int kToneChannel = 12, kToneAllChannel = 5;
constexpr int kGuardSpectra = 32;

std::string rfiTone(int channel, const std::string& stations) {
  return "Sim.rfi.tone.frequency = " + std::to_string(300 * kFs + (channel - 8) * kChannelWidth) +
         "\nSim.rfi.tone.amplitude = 0.5\n" +
         (stations.empty() ? "" : "Sim.rfi.tone.stations = [" + stations + "]\n");
}

/// The drift in subband 301: from channel 2 to channel 14 over the 4 s period.
const double kDriftStart = 301 * kFs + (2 - 8) * kChannelWidth;
const double kDriftRate = 12 * kChannelWidth / 4;

/// Which of the interference a station has at a spectrum (its centre sample) and channel.
enum Kind { kTone, kToneAll, kBurst, kDrift, kNoiseOnly, kToneOnly, kNrKinds };
const char* kKindNames[] = {"tone at one station", "tone at every station", "broadband bursts",
                            "drifting signal",     "noise-only station",    "tone-only station"};

struct Interference {
  std::vector<bool> kinds = std::vector<bool>(kNrKinds, false);
  int toneStation = -1, brokenStation = -1;
  /// Bitmask of the kinds at station s, subband b (0: 300, 1: 301), sample t, channel c;
  /// guard: true where flags are allowed though nothing was put (beside interference).
  unsigned at(int s, int b, int64_t t, int c, bool& guard) const {
    unsigned mask = 0;
    guard = false;
    if (s == brokenStation) mask |= 1u << (kinds[kNoiseOnly] ? kNoiseOnly : kToneOnly);
    auto narrow = [&](Kind kind, int channel) {
      if (c == channel) mask |= 1u << kind;
      if (std::abs(c - channel) == 1) guard = true;
    };
    if (kinds[kTone] && b == 0 && s == toneStation) narrow(kTone, kToneChannel);
    if (kinds[kToneAll] && b == 0) narrow(kToneAll, kToneAllChannel);
    if (kinds[kBurst]) {
      const double intoSecond = std::fmod(double(t) / kFs, 1.0);  // bursts: 4 ms a second
      if (intoSecond < 0.004) mask |= 1u << kBurst;
      const double margin = kGuardSpectra * kChannels / kFs;
      if (intoSecond < 0.004 + margin || intoSecond > 1 - margin) guard = true;
    }
    if (kinds[kDrift] && b == 1) {
      const long double tau = fmodl((long double)t / kFs, 4.0L);
      const double offset = kDriftStart + kDriftRate * double(tau) - 301 * kFs;
      narrow(kDrift, int(std::lround(offset / kChannelWidth)) + 8);
    }
    return mask;
  }
};

/// One run's integrations: [integration] of [subband index].
using Integrations = std::map<std::pair<int64_t, int>, CorrelatedData>;

Integrations readIntegrations(const std::string& dump) {
  Integrations all;
  for (CorrelatedData& d : ion::test::readDump(dump + "/rank0.vis")) {
    const auto key = std::make_pair(d.integration, d.subband);
    all.emplace(key, std::move(d));
  }
  return all;
}

struct Score {
  double affected[kNrKinds] = {}, hit[kNrKinds] = {};
  double clean = 0, falselyFlagged = 0;
  /// The same in the subband's edge channels (1 and C - 1), apart: there the neighbouring
  /// subbands' aliases add the source with the delay phase of their own sky frequency, and
  /// AOFlagger may flag that structure next to a bright source (the file comment).
  double edge = 0, edgeFlagged = 0;
  double detected(int kind) const { return affected[kind] ? hit[kind] / affected[kind] : 1.0; }
  double falseRate() const { return clean ? falselyFlagged / clean : 0.0; }
  double edgeRate() const { return edge ? edgeFlagged / edge : 0.0; }
};

}  // namespace

class FlaggingPhysicsTest : public CppUnit::TestFixture {
  CPPUNIT_TEST_SUITE(FlaggingPhysicsTest);
  CPPUNIT_TEST(testEveryKindFlaggedCleanKeptSourceUnchanged);
  CPPUNIT_TEST_SUITE_END();

 public:
  void testEveryKindFlaggedCleanKeptSourceUnchanged() {
    const Integrations clean = run("clean", 4, "");
    const Integrations noise = run("noise", 0, "");
    Interference none;
    const Score cleanScore = score(clean, clean, none);
    const Score noiseScore = score(noise, clean, none);
    report("bright source, no interference", cleanScore);
    report("noise alone", noiseScore);
    CPPUNIT_ASSERT(cleanScore.falseRate() <= 0.01);
    CPPUNIT_ASSERT(noiseScore.falseRate() <= 0.01);
    const Integrations cleanPre = run("clean-pre", 4, "", false);
    const Score preScore = score(cleanPre, clean, none);
    report("bright source, pre-correlation flagging alone", preScore);
    // The edge channels: clean to the pre-correlation flagger, and to AOFlagger on noise
    // alone; with the bright source AOFlagger may flag them (reported), for the source there is
    // not what it is in the inner channels: each edge channel lies more than 5 σ off the
    // inner ones' mean on every baseline, every inner channel within 5 σ.
    CPPUNIT_ASSERT(preScore.falseRate() <= 0.01);
    CPPUNIT_ASSERT(preScore.edgeRate() <= 0.01);
    CPPUNIT_ASSERT(noiseScore.edgeRate() <= 0.01);
    for (const std::vector<double>& offset : offsetFromInnerChannels(cleanPre))
      for (int c = 1; c < kChannels; ++c) {
        const bool edge = c == 1 || c == kChannels - 1;
        CPPUNIT_ASSERT_MESSAGE(std::to_string(c),
                               edge ? offset[size_t(c)] > 5 : offset[size_t(c)] < 5);
      }
    countsDropByWhatWasFlagged(cleanPre, "clean-pre");

    // A tone at CS002, bursts and a drift at every station, RS205 noise only.
    Interference mixed;
    mixed.kinds[kTone] = mixed.kinds[kBurst] = mixed.kinds[kDrift] = mixed.kinds[kNoiseOnly] = true;
    mixed.toneStation = 1;
    mixed.brokenStation = 3;
    const std::string mixedKeys = rfiTone(kToneChannel, "CS002LBA") +
                                  "Sim.rfi.burst.period = 1.0\nSim.rfi.burst.duration = 0.004\n"
                                  "Sim.rfi.burst.power = 4\nSim.rfi.drift.frequency = " +
                                  std::to_string(kDriftStart) +
                                  "\nSim.rfi.drift.rate = " + std::to_string(kDriftRate) +
                                  "\nSim.rfi.drift.period = 4\nSim.rfi.drift.amplitude = 0.5\n"
                                  "Sim.rfi.noiseOnlyStations = [RS205LBA]\n";
    const Integrations mixedRun = run("mixed", 4, mixedKeys);
    // The same, pre-correlation flagging alone: the weights drop by exactly what it flagged.
    const Integrations mixedPre = run("mixed-pre", 4, mixedKeys, false);
    CPPUNIT_ASSERT(countsDropByWhatWasFlagged(mixedPre, "mixed-pre", mixed.brokenStation) > 0);
    CPPUNIT_ASSERT(score(mixedPre, clean, mixed).edgeRate() <= 0.01);
    // A tone at every station, RS106 silent but for it.
    Interference toneAll;
    toneAll.kinds[kToneAll] = toneAll.kinds[kToneOnly] = true;
    toneAll.brokenStation = 2;
    const Integrations toneAllRun =
        run("toneall", 4, rfiTone(kToneAllChannel, "") + "Sim.rfi.silentStations = [RS106LBA]\n");

    // Each against the interference-free run flagged the same way (the edge channels,
    // which AOFlagger may flag in part with the bright source, hold the source otherwise).
    for (const auto& [name, integrations, truth, reference] :
         {std::tuple{"tone at CS002, bursts, drift, RS205 noise only", &mixedRun, &mixed, &clean},
          std::tuple{"the same, pre-correlation flagging alone", &mixedPre, &mixed, &cleanPre},
          std::tuple{"tone at every station, RS106 tone only", &toneAllRun, &toneAll, &clean}}) {
      const Score s = score(*integrations, *reference, *truth);
      report(name, s);
      for (int kind = 0; kind < kNrKinds; ++kind)
        if (truth->kinds[size_t(kind)]) {
          CPPUNIT_ASSERT_MESSAGE(kKindNames[kind], s.affected[kind] > 0);
          CPPUNIT_ASSERT_MESSAGE(kKindNames[kind], s.detected(kind) >= 0.95);
        }
      CPPUNIT_ASSERT_MESSAGE(name, s.falseRate() <= 0.01);
      sourceUnchanged(*integrations, *reference, truth->brokenStation);
    }
  }

 private:
  /// Records and correlates one observation with `extra` Sim.rfi keys; its integrations.
  Integrations run(const std::string& name, double flux, const std::string& extra,
                   bool postCorrelation = true) {
    SmallObservation o;
    o.stations = {"CS001", "CS002", "RS106", "RS205"};
    o.subbands = "[300, 301]";
    o.seconds = 4;
    o.flux = flux;
    o.channels = kChannels;
    o.steps = kSpectra;  // blocks of 0.17 s
    o.outputDir = dir_.path() + "/unused";
    o.extra = extra;
    const std::string recordings = dir_.path() + "/" + name;
    CPPUNIT_ASSERT_EQUAL(0, runProgram({observe::test::executable("station-sim/station-sim"),
                                        writeParset(dir_.path() + "/" + name + "-record.parset", o),
                                        "--record", recordings},
                                       dir_.path() + "/" + name + "-record.log"));
    o.realTime = false;
    for (const std::string& station : o.stations)
      o.inputs.push_back("file:" + recordings + "/" + station + "LBA.rsp");
    o.extra += "OLAP.CNProc.onlineFlagging = T\nOLAP.CNProc.onlinePreCorrelationFlagging = T\n";
    if (postCorrelation) o.extra += "OLAP.CNProc.onlinePostCorrelationFlagging = T\n";
    const std::string parset = writeParset(dir_.path() + "/" + name + ".parset", o);
    if (!settings_)
      settings_ = std::make_unique<ObservationSettings>(ObservationSettings::fromFile(parset));
    const std::string dump = dir_.path() + "/" + name + "-dump",
                      log = dir_.path() + "/" + name + ".log";
    CPPUNIT_ASSERT_EQUAL_MESSAGE(
        readFile(log), 0,
        runProgram({observe::mpirunExecutable(), "-np", "1", RTCP_CORRELATOR_LOCAL_EXE, parset,
                    "--dump", dump, "--threads", "1"},
                   log));
    return readIntegrations(dump);
  }

  /// Flagged and affected samples of the cross-correlations, channels 1..15. The samples of
  /// a cell that nothing flagged are those of the clean run's fullest cell of the integration.
  Score score(const Integrations& run, const Integrations& clean, const Interference& truth) {
    Score s;
    const ObservationSettings& settings = *settings_;
    for (const auto& [key, data] : run) {
      const auto& [integration, subband] = key;
      const CorrelatedData& reference = clean.at(key);
      uint32_t full = 0;
      for (uint32_t n : reference.validSamples) full = std::max(full, n);
      if (full < kSpectra / 2) continue;  // the first block: mostly filter history
      // Per station, channel: the kinds and guard of each spectrum (its centre sample:
      // the filter bank's 16 taps end at the spectrum's last sample).
      const int64_t first = settings.blockStartSample(integration) - 7 * kChannels;
      std::vector<unsigned> masks(size_t(kStations) * kChannels * kSpectra);
      std::vector<uint8_t> guards(masks.size());
      for (int st = 0; st < kStations; ++st)
        for (int c = 1; c < kChannels; ++c)
          for (int j = 0; j < kSpectra; ++j) {
            bool guard = false;
            const size_t i = (size_t(st) * kChannels + size_t(c)) * kSpectra + size_t(j);
            masks[i] = truth.at(st, subband, first + int64_t(j) * kChannels, c, guard);
            guards[i] = guard;
          }
      for (int q = 1; q < kStations; ++q)
        for (int p = 0; p < q; ++p) {
          const int b = baselineIndex(p, q);
          for (int c = 1; c < kChannels; ++c) {
            const double flagged =
                double(full - std::min(full, data.validSamples[size_t(b) * kChannels + size_t(c)]));
            double affected[kNrKinds] = {}, allowed = 0;
            for (int j = 0; j < kSpectra; ++j) {
              const size_t ip = (size_t(p) * kChannels + size_t(c)) * kSpectra + size_t(j);
              const size_t iq = (size_t(q) * kChannels + size_t(c)) * kSpectra + size_t(j);
              unsigned mask = masks[ip] | masks[iq];
              // A broken station's baselines count for it alone.
              const unsigned broken = (1u << kNoiseOnly) | (1u << kToneOnly);
              if (mask & broken) mask &= broken;
              for (int k = 0; k < kNrKinds; ++k) affected[k] += (mask >> k) & 1u;
              allowed += mask || guards[ip] || guards[iq];
            }
            const double scale = double(full) / kSpectra;
            for (int k = 0; k < kNrKinds; ++k) {
              s.affected[k] += affected[k] * scale;
              s.hit[k] += std::min(flagged, affected[k] * scale);
            }
            const bool edge = c == 1 || c == kChannels - 1;
            (edge ? s.edge : s.clean) += double(full) - allowed * scale;
            (edge ? s.edgeFlagged : s.falselyFlagged) += std::max(0.0, flagged - allowed * scale);
          }
        }
    }
    return s;
  }

  static void report(const std::string& name, const Score& s) {
    std::cout << "\n"
              << name << ": clean samples flagged " << 100 * s.falseRate()
              << " % (subband edge channels 1 and 15: " << 100 * s.edgeRate() << " %)";
    for (int k = 0; k < kNrKinds; ++k)
      if (s.affected[k] > 0)
        std::cout << "; " << kKindNames[k] << " " << 100 * s.detected(k) << " % of "
                  << s.affected[k] << " samples flagged";
    std::cout << "\n";
  }

  /// The weights: per station, the valid samples its autocorrelation holds in channels
  /// 1..C-1 over every integration equal, to the sample, the samples that arrived less
  /// those the pre-correlation flagger flagged, as the rank's final log counts them
  /// ("CS001LBA 0.41 % (flagged of arrived)"). Only with the pre-correlation flagger: the
  /// post-correlation flagger sets the counts of what it flags to 0 after, and so does the
  /// output path's search for stations without sky (output/IncoherentStations.h, with
  /// broken-station detection): `incoherent`, a noise-only station, holds none. Returns the
  /// samples flagged over all stations.
  uint64_t countsDropByWhatWasFlagged(const Integrations& run, const std::string& name,
                                      int incoherent = -1) {
    const std::string log = readFile(dir_.path() + "/" + name + ".log");
    const std::string lead = "pre-correlation flagging: flagged of the samples that arrived:";
    const size_t line = log.find(lead);
    CPPUNIT_ASSERT_MESSAGE(log, line != std::string::npos);
    uint64_t allFlagged = 0;
    for (int s = 0; s < kStations; ++s) {
      const std::string& station = settings_->stations[size_t(s)].name;
      const size_t at = log.find(station + " ", line);
      CPPUNIT_ASSERT_MESSAGE(station, at != std::string::npos);
      unsigned long long flagged = 0, arrived = 0;
      CPPUNIT_ASSERT_EQUAL_MESSAGE(
          station, 2,
          std::sscanf(log.c_str() + log.find('(', at), "(%llu of %llu)", &flagged, &arrived));
      uint64_t valid = 0;
      for (const auto& [key, d] : run)
        for (int c = 1; c < kChannels; ++c)
          valid += d.validSamples[size_t(baselineIndex(s, s)) * kChannels + size_t(c)];
      std::cout << station << ": " << flagged << " of " << arrived
                << " samples flagged before correlation, its autocorrelation holds " << valid
                << "\n";
      CPPUNIT_ASSERT_EQUAL_MESSAGE(station, s == incoherent ? 0 : uint64_t(arrived - flagged),
                                   valid);
      allFlagged += flagged;
    }
    return allFlagged;
  }

  /// The source's visibility per channel on every cross-correlation (XX, summed over the
  /// integrations and divided by its samples) against the mean of channels 2..C-2: how many
  /// σ (σ = sqrt(P_p P_q / N), P the autocorrelations' power per sample) each channel lies
  /// off. Returns [baseline][channel] (channel 0 unused).
  static std::vector<std::vector<double>> offsetFromInnerChannels(const Integrations& run) {
    std::vector<std::vector<double>> result;
    for (int q = 1; q < kStations; ++q)
      for (int p = 0; p < q; ++p) {
        std::vector<std::complex<double>> sum(kChannels);
        std::vector<double> samples(kChannels), power(kChannels);
        for (const auto& [key, d] : run) {
          CorrelatedData& data = const_cast<CorrelatedData&>(d);
          for (int c = 1; c < kChannels; ++c) {
            sum[size_t(c)] += std::complex<double>(data.visibility(baselineIndex(p, q), c, 0));
            samples[size_t(c)] += data.valid(baselineIndex(p, q), c);
            power[size_t(c)] +=
                std::sqrt(double(data.visibility(baselineIndex(p, p), c, 0).real()) *
                          double(data.visibility(baselineIndex(q, q), c, 0).real()));
          }
        }
        std::complex<double> inner = 0;
        for (int c = 2; c < kChannels - 1; ++c) inner += sum[size_t(c)] / samples[size_t(c)];
        inner /= double(kChannels - 3);
        std::vector<double> offset(kChannels, 0.0);
        std::cout << "baseline " << p << "-" << q << ": channels off the inner ones by (sigma)";
        for (int c = 1; c < kChannels; ++c) {
          const double n = samples[size_t(c)];
          const double sigma = power[size_t(c)] / n / std::sqrt(n);
          offset[size_t(c)] = std::abs(sum[size_t(c)] / n - inner) / sigma;
          std::cout << " " << std::lround(offset[size_t(c)]);
        }
        std::cout << "\n";
        result.push_back(offset);
      }
    return result;
  }

  /// XX and YY of every baseline without the broken station, summed over integrations and
  /// channels 2..14 and divided by their samples: the run's against the clean run's, within
  /// 4 σ of the mean of N samples (σ = sqrt(P_p P_q / N), P the autocorrelations' power).
  /// Not the edge channels 1 and 15: there the neighbours' aliases add the source with
  /// another phase (8–15 σ off, above), and how much of them AOFlagger flags depends on its
  /// strategy and window (LOFAR's strategy: 25 % with windows of 16 integrations, 56 % with
  /// one of all 23), which would move the clean run's mean by 3–6 σ.
  static void sourceUnchanged(const Integrations& run, const Integrations& clean, int broken) {
    for (int q = 1; q < kStations; ++q)
      for (int p = 0; p < q; ++p) {
        if (p == broken || q == broken) continue;
        for (int pol : {0, 3}) {
          std::complex<double> sum[2];
          double samples[2] = {}, power[2][2] = {};
          for (int r = 0; r < 2; ++r)
            for (const auto& [key, d] : r ? clean : run) {
              CorrelatedData& data = const_cast<CorrelatedData&>(d);
              for (int c = 2; c < kChannels - 1; ++c) {
                sum[r] += std::complex<double>(data.visibility(baselineIndex(p, q), c, pol));
                samples[r] += data.valid(baselineIndex(p, q), c);
                power[r][0] += data.visibility(baselineIndex(p, p), c, pol).real();
                power[r][1] += data.visibility(baselineIndex(q, q), c, pol).real();
              }
            }
          const std::complex<double> v = sum[0] / samples[0], reference = sum[1] / samples[1];
          const double sigma =
              std::sqrt(power[1][0] * power[1][1]) / samples[1] / std::sqrt(samples[0]);
          const std::string what = "baseline " + std::to_string(p) + "-" + std::to_string(q) +
                                   " pol " + std::to_string(pol);
          std::cout << what << ": " << std::abs(v) << " at " << std::arg(v) << " rad against "
                    << std::abs(reference) << " at " << std::arg(reference) << " (sigma " << sigma
                    << ")\n";
          // The source: 2 of the 3 per polarisation (ρ = 2/3).
          CPPUNIT_ASSERT_MESSAGE(
              what, std::abs(reference) * samples[1] / std::sqrt(power[1][0] * power[1][1]) > 0.5);
          CPPUNIT_ASSERT_MESSAGE(what, std::abs(std::abs(v) - std::abs(reference)) < 4 * sigma);
          CPPUNIT_ASSERT_MESSAGE(
              what, std::abs(std::arg(v / reference)) * std::abs(reference) < 4 * sigma);
        }
      }
  }

  TempDir dir_;
  std::unique_ptr<ObservationSettings> settings_;
};

CPPUNIT_TEST_SUITE_REGISTRATION(FlaggingPhysicsTest);

}  // namespace rtcp::correlator::test
