#include "DumpDuringTrial.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "SteadyCpu.h"
#include "rtcp/Benchmark.h"
#include "rtcp/Files.h"
#include "rtcp/Integrations.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace rtcp::observe::bench {
namespace {

namespace fs = std::filesystem;

/// Every number that follows "key": in observe's summary.json.
double sumOf(const std::string& json, const std::string& key) {
  double sum = 0;
  const std::string pattern = "\"" + key + "\": ";
  for (size_t at = json.find(pattern); at != std::string::npos; at = json.find(pattern, at + 1))
    sum += std::strtod(json.c_str() + at + pattern.size(), nullptr);
  return sum;
}

/// The bytes of the recordings (.rsp) in a dump's directory.
uint64_t recordingBytes(const std::string& directory) {
  uint64_t bytes = 0;
  std::error_code error;
  for (auto it = fs::directory_iterator(directory, error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (it->path().extension() == ".rsp") bytes += it->file_size(error);
  return bytes;
}

/// station-sim's worst lag behind its schedule in seconds, from the line it logs at its end
/// ("... worst lag 392.2 ms"); nullopt without such a log.
std::optional<double> senderWorstLag(const std::string& log) {
  const std::optional<std::string> text = tryReadFile(log);
  const std::string pattern = "worst lag ";
  const size_t at = text ? text->rfind(pattern) : std::string::npos;
  if (at == std::string::npos) return std::nullopt;
  return std::strtod(text->c_str() + at + pattern.size(), nullptr) / 1e3;
}

}  // namespace

void DumpDuringTrial::Counts::add(const Sample& before, const Sample& after, double allowance) {
  seconds += after.wallTime - before.wallTime;
  blocksGone += after.blocksGone - before.blocksGone;
  packetsLate += after.late - before.late;
  samplesServed += after.samplesServed - before.samplesServed;
  samplesFlagged += after.samplesFlagged - before.samplesFlagged;
  incompleteIntegrations += after.incompleteIntegrations - before.incompleteIntegrations;
  const uint64_t served = uint64_t(std::max<int64_t>(0, after.newestBlock - before.newestBlock));
  blocksServed += served;
  // After the observation's last block the lag grows with the clock: only the lag of
  // blocks being served counts.
  if (served == 0 || after.lastBlockServed) return;
  if (after.newestBlockLag > allowance) blocksLate += served;
  maxLag = std::max(maxLag, after.newestBlockLag);
}

DumpDuringTrial::DumpDuringTrial(pid_t observe, std::string obs, std::string dir, double window,
                                 double triggerAt)
    : observe_(observe),
      obs_(std::move(obs)),
      dir_(std::move(dir)),
      window_(window),
      triggerAt_(triggerAt) {}

DumpDuringTrial::~DumpDuringTrial() = default;

void DumpDuringTrial::sample() {
  const double now = wallClock();
  if (!ionproc_) ionproc_ = findPart(observe_, "ionproc");
  if (ionproc_)
    if (const std::optional<double> cpu = processCpuSeconds(*ionproc_)) cpu_.push_back({now, *cpu});
  if (trigger_ && triggerEnded_ == 0 && trigger_->poll()) {
    triggerEnded_ = now;
    triggerCode_ = trigger_->exitCode().value_or(-1);
  }
  ion::IonStatus status;
  try {
    status = ion::IonStatus::read(obs_ + "/ionproc.status");
  } catch (const std::runtime_error&) {
    return;  // not written yet, or being replaced
  }
  if (!settingsRead_) {
    const ObservationSettings s = ObservationSettings::fromFile(obs_ + "/observation.parset");
    startTime_ = s.startTime;
    blockDuration_ = s.blockDuration();
    // Keeping pace, the newest block served ends between maxNetworkDelay and a block
    // before the clock (a block is served maxNetworkDelay after its end, the next one a
    // block later); a block asked for later than one more block than that is late.
    allowance_ = s.maxNetworkDelay + 2 * blockDuration_;
    maxNetworkDelay_ = s.maxNetworkDelay;
    processedBlocks_ = nrProcessedBlocks(s);  // whole integrations: the last block served
    inputBytesPerSecond_ = double(s.nrStations()) * s.nrSubbands() * s.subbandWidth() *
                           s.bitsPerSample / 2;  // 2 polarisations x (re, im)
    settingsRead_ = true;
  }
  if (samples_.empty() || status.wallTime > samples_.back().wallTime) noteStatus(status);
  // The observed time now (a replay's clock shifted to it): the newest block's end, its lag
  // behind the clock when the status was written, and the time since.
  if (trigger_ || status.newestBlock < 0 || status.trigger.empty()) return;
  const double dataNow = startTime_ + double(status.newestBlock + 1) * blockDuration_ +
                         status.newestBlockLag + (now - status.wallTime);
  if (dataNow >= startTime_ + triggerAt_) startTrigger(dataNow);
}

void DumpDuringTrial::noteStatus(const ion::IonStatus& status) {
  Sample s;
  s.wallTime = status.wallTime;
  s.newestBlock = status.newestBlock;
  s.newestBlockLag = status.newestBlockLag;
  s.lastBlockServed = status.newestBlock + 1 >= processedBlocks_;
  s.incompleteIntegrations = status.incompleteIntegrations;
  for (const ion::IonStatus::Station& st : status.stations) {
    s.blocksGone = std::max(s.blocksGone, st.blocksGone);
    s.late += st.late;
    s.samplesServed += st.samplesServed;
    s.samplesFlagged += st.samplesFlagged;
  }
  samples_.push_back(s);
}

void DumpDuringTrial::startTrigger(double dataNow) {
  windowTo_ = dataNow;
  windowFrom_ = dataNow - window_;
  trigger_ = std::make_unique<ChildProcess>(
      "rtcp-trigger",
      std::vector<std::string>{RTCP_TRIGGER_EXE, obs_, "--from", formatUtc(windowFrom_), "--to",
                               formatUtc(windowTo_), "--out", obs_ + "/dumps/bench"},
      dir_ + "/trigger.log");
  triggerStarted_ = wallClock();
  trigger_->start();
}

std::optional<double> DumpDuringTrial::cpuAt(double wallTime) const {
  const auto at = std::lower_bound(cpu_.begin(), cpu_.end(), wallTime,
                                   [](const CpuSample& c, double t) { return c.wallTime < t; });
  if (at == cpu_.end()) return std::nullopt;
  return at->cpuSeconds;
}

double DumpDuringTrial::cpuRate(double from, double to) const {
  const CpuSample* first = nullptr;
  const CpuSample* last = nullptr;
  for (const CpuSample& c : cpu_)
    if (c.wallTime >= from && c.wallTime <= to) {
      if (!first) first = &c;
      last = &c;
    }
  if (!first || last == first || last->wallTime <= first->wallTime) return 0;
  return (last->cpuSeconds - first->cpuSeconds) / (last->wallTime - first->wallTime);
}

void DumpDuringTrial::printCounts(const std::string& prefix, const Counts& c) const {
  printFigure(prefix + "seconds", c.seconds);
  printFigure(prefix + "blocks_served", double(c.blocksServed));
  printFigure(prefix + "blocks_late", double(c.blocksLate));
  printFigure(prefix + "blocks_dropped", double(c.blocksGone));
  printFigure(prefix + "packets_late", double(c.packetsLate));
  printFigure(prefix + "samples_flagged_fraction",
              c.samplesServed ? double(c.samplesFlagged) / double(c.samplesServed) : 0.0);
  printFigure(prefix + "incomplete_integrations", double(c.incompleteIntegrations));
  printFigure(prefix + "max_block_lag_seconds", c.maxLag);
}

void DumpDuringTrial::writeSamples(const std::string& path) const {
  std::ofstream csv(path);
  csv << "seconds_from_trigger,phase,newest_block,newest_block_lag,blocks_dropped,packets_late,"
         "samples_served,samples_flagged,incomplete_integrations\n";
  for (const Sample& s : samples_)
    csv << s.wallTime - triggerStarted_ << ","
        << (s.wallTime <= triggerStarted_    ? "before"
            : s.wallTime < triggerEnded_ + 1 ? "during"
                                             : "after")
        << "," << s.newestBlock << "," << s.newestBlockLag << "," << s.blocksGone << "," << s.late
        << "," << s.samplesServed << "," << s.samplesFlagged << "," << s.incompleteIntegrations
        << "\n";
}

void DumpDuringTrial::printFigures(const std::string& prefix, const std::string& summaryJson) {
  const std::string p = prefix + "dump.";
  printFigure(p + "window_seconds", window_);
  if (!trigger_) {
    printFigure(p + "status", "not triggered (the observation did not reach the trigger time)");
    return;
  }
  if (triggerEnded_ == 0) {  // still running after observe ended: ionproc has gone
    trigger_->waitFor(10);
    triggerEnded_ = wallClock();
    triggerCode_ = trigger_->exitCode().value_or(-1);
  }
  const std::string directory = obs_ + "/dumps/bench";
  const uint64_t bytes = recordingBytes(directory);
  const double wall = triggerEnded_ - triggerStarted_;
  printFigure(p + "status", triggerCode_ == 0   ? "complete"
                            : triggerCode_ == 1 ? "partial (see " + dir_ + "/trigger.log)"
                                                : "failed (see " + dir_ + "/trigger.log)");
  printFigure(p + "window_from", formatUtc(windowFrom_));
  printFigure(p + "window_to", formatUtc(windowTo_));
  printFigure(p + "wall_seconds", wall);
  printFigure(p + "bytes", double(bytes));
  printFigure(p + "gb_per_second", wall > 0 ? double(bytes) / 1e9 / wall : 0.0);
  // ionproc's CPU during the dump, and beyond its rate in the seconds before it (the input,
  // serving and integrating, which go on meanwhile).
  const std::optional<double> atStart = cpuAt(triggerStarted_), atEnd = cpuAt(triggerEnded_);
  const double before = cpuRate(triggerStarted_ - 8, triggerStarted_);
  if (atStart && atEnd && bytes > 0) {
    const double during = *atEnd - *atStart;
    const double extra = during - before * wall;
    printFigure(p + "ionproc_cores_before", before);
    printFigure(p + "ionproc_cores_during", wall > 0 ? during / wall : 0.0);
    printFigure(p + "ionproc_cpu_seconds_per_gb", during / (double(bytes) / 1e9));
    printFigure(p + "ionproc_extra_cpu_seconds_per_gb", extra / (double(bytes) / 1e9));
    // Against what the observation costs ionproc per GB of station input, in the same run.
    if (before > 0 && inputBytesPerSecond_ > 0)
      printFigure(p + "extra_cpu_per_gb_to_observed_cpu_per_gb",
                  extra / (double(bytes) / 1e9) / (before / (inputBytesPerSecond_ / 1e9)));
  } else {
    printFigure(p + "ionproc_cpu_seconds_per_gb", "not measured");
  }
  // The live observation during the dump (from the trigger until a second after the dump
  // ended, at the status file's one-second grain) and outside it (from the first block).
  Counts during, outside;
  for (size_t i = 1; i < samples_.size(); ++i) {
    const Sample& a = samples_[i - 1];
    const Sample& b = samples_[i];
    if (b.newestBlock < 0) continue;
    const bool overlaps = b.wallTime > triggerStarted_ && a.wallTime < triggerEnded_ + 1;
    (overlaps ? during : outside).add(a, b, allowance_);
  }
  printFigure(p + "late_block_lag_seconds", allowance_);
  printCounts(p + "during.", during);
  printCounts(p + "outside.", outside);
  printFigure(p + "observation.packets_lost", sumOf(summaryJson, "packetsLost"));
  // Packets late at the sender are not the dump's: station-sim on these cores falls behind
  // its schedule under other load (a sender of live-recorded input logs into dir, one that
  // simulates into the observation's directory).
  for (const std::string& log : {dir_ + "/send.log", obs_ + "/station-sim.log"})
    if (const std::optional<double> lag = senderWorstLag(log)) {
      printFigure(p + "observation.sender_worst_lag_seconds", *lag);
      printFigure(p + "observation.max_network_delay_seconds", maxNetworkDelay_);
    }
  printFigure(p + "observation.blocks_dropped", sumOf(summaryJson, "blocksDropped"));
  printFigure(p + "observation.integrations_dropped", sumOf(summaryJson, "integrationsDropped"));
  writeSamples(dir_ + "/ionproc-samples.csv");
  // GBs: the figures have them; dump.parset and the answer stay.
  std::vector<fs::path> recordings;
  std::error_code error;
  for (auto it = fs::directory_iterator(directory, error); !error && it != fs::directory_iterator();
       it.increment(error))
    if (it->path().extension() == ".rsp") recordings.push_back(it->path());
  for (const fs::path& path : recordings) fs::remove(path, error);
}

}  // namespace rtcp::observe::bench
