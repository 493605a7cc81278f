// rtcp-bench capacity: the largest number of subbands the whole chain (ionproc +
// correlator ranks + storage-sink, launched by observe) sustains in real time with zero
// loss, for 16 stations at 64 channels, with recordings made by station-sim replayed
// by ionproc (`--input replayed`), with station-sim simulating the sky and sending live
// UDP (`--input live`), or with station-sim sending recordings made before the trial as
// live UDP (`--input live-recorded`: a sender that costs little, as real stations cost
// the correlator's machines nothing); replayed and live by default, or all three; the
// ratio to the compute-bound capacity the correlator's own chain benchmark predicts
// (cores x subbands per core); and a CPU budget.
//
// A trial records N subbands, replays them in real time through `observe --now` (or lets
// observe start station-sim), and passes when the observation is ok with no packet lost,
// no block dropped (ranks behind), no integration dropped (storage behind), and every rank
// processed at least as fast as real time. The last condition matters: a rank at 0.6 of
// real time falls behind by 0.4 s a second, and the 2.5 s buffer hides that for a short
// trial (a 5 s trial once "sustained" 40 subbands with ranks at 0.8). N doubles
// until a trial fails, then bisects. The CPU budget is the sustained trial's steady state
// (SteadyCpu.h: sampled from /proc between a quarter and three quarters of the
// observation, so start-up is left out): CPU seconds per observed second per part, and per
// station-subband, and the seconds per observed second each part's threads were ready to
// run but waited for a core. station-sim's CPU is reported beside, not counted.
//
// --flagging: the same search for correlated observations with online RFI flagging on, both
// stages as an observation with OLAP.CNProc.onlineFlagging = T and both stage keys has them:
// onlinePreCorrelationFlagging (in the compute ranks, broken stations found) and
// onlinePostCorrelationFlagging (AOFlagger's rtcp online strategy on the integrations in
// ionproc's output path, and the coherence check), beside the search with it off, in the
// same run: the ratio of their subbands. The prediction counts the compute ranks' chain
// with the pre-correlation flagger; the post-correlation flagger's cost is ionproc's.
//
// --dump: one trial (8 subbands unless --subbands says otherwise; live-recorded unless
// --input says otherwise: station UDP that costs the machine little, as real stations do)
// with a station buffer of the window and 4 s more (OLAP.nrSecondsOfBuffer), in which
// rtcp-trigger asks for the last --dump-seconds (10) of every station and subband once the
// observation has run that long and 4 s more: the dump's wall time, bytes and ionproc's CPU
// per GB dumped, and the observation's late and dropped blocks, late packets and flagged
// samples during the dump and outside it (DumpDuringTrial.h).
//
// --beamformed: the same search for beam-formed observations, replayed: 8 coherent TABs of
// Stokes I (16 channels, 16 spectra a sample) coherently dedispersed at DM 26.76, plus
// incoherent Stokes I, with no correlated output; then correlated and beam-formed at once.
// Their predictions: cores x the beam former's subbands per core on the trial's own
// settings (BeamFormerChain.h), and for both at once cores / (1 / correlator + 1 / beam
// former).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <sstream>
#include <tuple>

#include "BeamFormerChain.h"
#include "ChainBenchmark.h"
#include "ChildProcess.h"
#include "DumpDuringTrial.h"
#include "Executables.h"
#include "SteadyCpu.h"
#include "rtcp/Benchmark.h"
#include "rtcp/Files.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"

namespace rtcp::observe::bench {

namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

struct CapacityOptions {
  int nrStations = 16;
  int seconds = 10;
  int ranks = 2;
  int maxSubbands = 0;          ///< 0: the prediction, or what memory holds if less
  int onlySubbands = 0;         ///< > 0: one trial of this many subbands, no search
  std::string input = "both";   ///< replayed, live, live-recorded, both or all
  std::string directory;        ///< empty: a temporary one, removed afterwards
  bool noSharedMemory = false;  ///< observe --no-shared-memory: the socket and MPI-message paths
  bool lendRing = false;        ///< observe --lend-ring: ionproc lends its ring
  bool beamFormed = false;      ///< --beamformed: beam-formed, then correlated + beam-formed
  bool console = false;         ///< observe --console, its /status.json fetched once a second
  bool flagging = false;        ///< --flagging: correlated with and without flagging
  bool dump = false;            ///< --dump: a triggered dump in the middle of one trial
  double dumpSeconds = 10;      ///< --dump-seconds: its window
};

/// What a trial's observation makes.
enum class Products {
  kCorrelated,            ///< visibilities (MSs)
  kBeamFormed,            ///< 8 coherent TABs of Stokes I, dedispersed, and incoherent I
  kCorrelatedBeamFormed,  ///< both at once
  kCorrelatedFlagged,     ///< visibilities, pre- and post-correlation flagging on
};

bool hasBeamFormed(Products products) {
  return products == Products::kBeamFormed || products == Products::kCorrelatedBeamFormed;
}

const char* productsName(Products products) {
  switch (products) {
    case Products::kCorrelated:
      return "correlated";
    case Products::kBeamFormed:
      return "beamformed";
    case Products::kCorrelatedBeamFormed:
      return "correlated_beamformed";
    case Products::kCorrelatedFlagged:
      return "correlated_flagged";
  }
  return "?";
}

/// Coherent TABs of a beam-formed trial and their dispersion measure (PSR B0329+54's).
constexpr int kCoherentTabs = 8;
constexpr double kTabDispersionMeasure = 26.76;

const char* const kStations[] = {"CS001", "CS002", "CS003", "CS004", "CS005", "CS006",
                                 "CS007", "CS011", "CS013", "CS017", "CS021", "CS024",
                                 "CS026", "CS028", "CS030", "CS031", "CS032", "CS101",
                                 "CS103", "CS201", "CS301", "CS302", "CS401", "CS501"};

constexpr int kBeamletsPerPort = 61;  ///< 16-bit RSP packets

/// Bytes one station-subband's 16-bit samples take per second (200 MHz clock).
constexpr double kBytesPerStationSubbandSecond = 200e6 / 1024 * 8;

/// Where station s's packets for its port-th RSP port go in a live trial.
std::string liveInput(int station, int port) {
  return "udp:127.0.0.1:" + std::to_string(20000 + 10 * station + port);
}

/// The observations' start: the trials' parsets hold it, observe --now shifts it.
const double kStart = parseUtc("2026-01-01 00:00:00");

/// The beam-formed outputs of a trial's parset (into `output`): kCoherentTabs TABs of Stokes I
/// 0.5 degrees around the beam centre, 16 channels and 16 spectra a sample, coherently
/// dedispersed, and the incoherent Stokes I of the same shape; the correlated output off
/// unless both are made.
std::string beamFormedKeys(Products products, const std::string& output) {
  std::ostringstream p;
  p.precision(12);
  if (products == Products::kBeamFormed)
    p << "Observation.DataProducts.Output_Correlated.enabled = F\n";
  for (const char* kind : {"Coherent", "Incoherent"})
    p << "Observation.DataProducts.Output_" << kind << "Stokes.enabled = T\n"
      << "Observation.DataProducts.Output_" << kind << "Stokes.locations = [localhost:" << output
      << "]\n"
      << "Cobalt.BeamFormer." << kind << "Stokes.which = I\n"
      << "Cobalt.BeamFormer." << kind << "Stokes.nrChannelsPerSubband = 16\n"
      << "Cobalt.BeamFormer." << kind << "Stokes.timeIntegrationFactor = 16\n";
  p << "Cobalt.BeamFormer.coherentDedisperseChannels = T\n"
    << "Observation.Beam[0].nrTiedArrayBeams = " << kCoherentTabs + 1 << "\n";
  for (int t = 0; t < kCoherentTabs; ++t) {
    const double angle = 2 * M_PI * t / kCoherentTabs, offset = 0.5 * M_PI / 180;
    p << "Observation.Beam[0].TiedArrayBeam[" << t
      << "].angle1 = " << 5.2336866848 + offset * std::cos(angle) / std::cos(0.7109425145) << "\n"
      << "Observation.Beam[0].TiedArrayBeam[" << t
      << "].angle2 = " << 0.7109425145 + offset * std::sin(angle) << "\n"
      << "Observation.Beam[0].TiedArrayBeam[" << t
      << "].dispersionMeasure = " << kTabDispersionMeasure << "\n";
  }
  p << "Observation.Beam[0].TiedArrayBeam[" << kCoherentTabs << "].coherent = F\n";
  return p.str();
}

/// 0.25 s blocks of 768 spectra x 64 channels, 1 s integrations, 16-bit samples; from
/// kStart + startOffset for `seconds`; o.products' outputs.
std::string parset(const CapacityOptions& o, Products products, int seconds, int nrSubbands,
                   const std::string& inputs, const std::string& output, int startOffset = 0) {
  std::ostringstream p;
  p << "Observation.ObsID = " << 7000 + nrSubbands << "\n"
    << "Observation.startTime = '" << formatUtc(kStart + startOffset) << "'\n"
    << "Observation.stopTime = '" << formatUtc(kStart + startOffset + seconds) << "'\n"
    << "Observation.nrBitsPerSample = 16\nObservation.antennaSet = "
       "LBA_OUTER\nObservation.bandFilter = LBA_30_90\n"
    << "Observation.VirtualInstrument.stationList = [";
  for (int s = 0; s < o.nrStations; ++s) p << (s ? ", " : "") << kStations[s];
  p << "]\nObservation.channelsPerSubband = 64\nObservation.nrBeams = 1\n"
    << "Observation.Beam[0].angle1 = 5.2336866848\nObservation.Beam[0].angle2 = 0.7109425145\n"
    << "Observation.Beam[0].subbandList = [200.." << 200 + nrSubbands - 1 << "]\n";
  const int ports = (nrSubbands + kBeamletsPerPort - 1) / kBeamletsPerPort;
  for (int s = 0; s < o.nrStations; ++s) {
    p << "PIC.Core." << kStations[s] << "LBA.RSP.ports = [";
    for (int port = 0; port < ports; ++port) {
      p << (port ? ", " : "");
      if (inputs.empty())
        p << liveInput(s, port);
      else if (port == 0)  // station-sim's recording names: the antenna field's
        p << "file:" << inputs << "/" << kStations[s] << "LBA.rsp";
      else
        p << "file:" << inputs << "/" << kStations[s] << "LBA-" << port << ".rsp";
    }
    p << "]\n";
  }
  p << "OLAP.CNProc.integrationSteps = 768\nOLAP.IONProc.integrationSteps = 4\nOLAP.realTime = T\n"
    << "OLAP.delayCompensation = T\nOLAP.correctBandPass = T\n"
    << "Observation.DataProducts.Output_Correlated.locations = [localhost:" << output << "]\n"
    << "Sim.nrSources = 1\nSim.Source[0].angle1 = 5.24\nSim.Source[0].angle2 = 0.72\n"
    << "Sim.Source[0].flux = 2\nSim.noisePower = 1.0\nSim.seed = 5\n";
  if (hasBeamFormed(products)) p << beamFormedKeys(products, output);
  if (o.dump) p << "OLAP.nrSecondsOfBuffer = " << o.dumpSeconds + 4 << "\n";
  if (products == Products::kCorrelatedFlagged)
    p << "OLAP.CNProc.onlineFlagging = T\nOLAP.CNProc.onlinePreCorrelationFlagging = T\n"
      << "OLAP.CNProc.onlinePostCorrelationFlagging = T\n";
  return p.str();
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  if (!file) throw std::runtime_error("cannot write " + path);
}

/// The whole file ("" when it cannot be read: a part that never started).
std::string readFile(const std::string& path) { return tryReadFile(path).value_or(""); }

/// Runs a program to its end with its output in a log; its exit code.
int run(const std::string& name, const std::vector<std::string>& arguments,
        const std::string& log) {
  ChildProcess child(name, arguments, log);
  child.start();
  child.waitFor(1e9);
  return child.exitCode().value_or(-1);
}

/// Every number that follows `pattern` in `text`.
std::vector<double> numbersAfter(const std::string& text, const std::string& pattern) {
  std::vector<double> values;
  for (size_t at = text.find(pattern); at != std::string::npos; at = text.find(pattern, at + 1))
    values.push_back(std::strtod(text.c_str() + at + pattern.size(), nullptr));
  return values;
}

/// Every number that follows "key": in the summary's JSON (written by observe).
std::vector<double> numbersOf(const std::string& json, const std::string& key) {
  return numbersAfter(json, "\"" + key + "\": ");
}

/// One GET of PATH from the console whose address observe wrote to DIR/console.url
/// ("http://127.0.0.1:PORT/"), as an operator's page does once a second; the bytes
/// answered (0 before the console is up).
size_t fetchFromConsole(const std::string& consoleUrlFile, const std::string& path) {
  std::ifstream file(consoleUrlFile);
  std::string url;
  if (!(file >> url) || !url.starts_with("http://")) return 0;
  const size_t colon = url.rfind(':');
  if (colon == std::string::npos || colon < 7) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(uint16_t(std::atoi(url.c_str() + colon + 1)));
  if (inet_pton(AF_INET, url.substr(7, colon - 7).c_str(), &address.sin_addr) != 1) return 0;
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 0;
  size_t received = 0;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0) {
    const std::string request =
        "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) == ssize_t(request.size())) {
      char buffer[65536];
      for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) received += size_t(n);
    }
  }
  ::close(fd);
  return received;
}

struct Trial {
  bool sustained = false;
  std::string why;
  /// CPU seconds per observed second per part, from the middle half of the observation.
  std::optional<std::map<std::string, double>> steadyCpu;
  /// Seconds per observed second each part's threads waited for a core, same window.
  std::optional<std::map<std::string, double>> steadyWait;
  /// CPU seconds per observed second of each correlator rank, same window.
  std::optional<std::map<std::string, double>> steadyRankCpu;
  /// Beam-formed bytes storage-sink wrote (.raw samples and .h5 weights) and the seconds its
  /// writer spent writing them and syncing the files, from its log's summary.
  double beamFormedBytes = 0, beamFormedWriteSeconds = 0;
  /// --dump: the dump and what it cost the observation, and the observation's summary.
  std::shared_ptr<DumpDuringTrial> dump;
  std::string summaryJson;
};

/// The beam-formed files' bytes written and seconds of writing in a storage-sink log's
/// summary lines ("... B bytes written in S s").
std::pair<double, double> beamFormedWrites(const std::string& log) {
  static const std::regex summary(R"(summary: .*: .* (\d+) bytes written in ([0-9.eE+-]+) s)");
  double bytes = 0, seconds = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), summary);
       it != std::sregex_iterator(); ++it) {
    bytes += std::stod((*it)[1]);
    seconds += std::stod((*it)[2]);
  }
  return {bytes, seconds};
}

/// How the ranks got their station blocks, from ionproc's log (link/README.md, "Two
/// paths"): so that a trial's figures say which path they measured.
std::string linkPath(const std::string& ionprocLog) {
  if (ionprocLog.find("rows lent in the ring") != std::string::npos)
    return "rows lent in ionproc's ring";
  if (ionprocLog.find("shared-memory link:") != std::string::npos)
    return "blocks copied into shared slots";
  return "blocks over the link's socket";
}

/// The slowest rank's "real-time factor" (observed time over its processing time) in a
/// correlator log; 0 when no rank reported one.
double slowestRankPace(const std::string& log) {
  const std::vector<double> factors = numbersAfter(log, "real-time factor ");
  return factors.empty() ? 0 : *std::min_element(factors.begin(), factors.end());
}

void syncFileSystem(const std::string& directory) {
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  const bool synced = fd >= 0 && ::syncfs(fd) == 0;
  const int error = errno;
  if (fd >= 0) ::close(fd);
  if (!synced) throw std::runtime_error("cannot sync " + directory + ": " + std::strerror(error));
}

/// How the stations' packets reach ionproc in a trial.
enum class Input {
  kReplayed,      ///< ionproc reads recordings (file: inputs)
  kLive,          ///< UDP from station-sim simulating the sky (observe starts it)
  kLiveRecorded,  ///< UDP from station-sim sending recordings made before the trial
};

const char* inputName(Input input) {
  switch (input) {
    case Input::kReplayed:
      return "replayed";
    case Input::kLive:
      return "live";
    case Input::kLiveRecorded:
      return "live-recorded";
  }
  return "?";
}

/// Records nrSubbands with station-sim into `recordings`, from kStart + startOffset for
/// `seconds`, and syncs them to disk.
void record(const CapacityOptions& o, const std::string& dir, const std::string& recordings,
            int nrSubbands, int seconds, int startOffset) {
  writeFile(dir + "/record.parset",
            parset(o, Products::kCorrelated, seconds, nrSubbands, "", dir + "/ms", startOffset));
  if (run("station-sim",
          {partExecutable("station-sim"), dir + "/record.parset", "--record", recordings},
          dir + "/record.log") != 0)
    throw std::runtime_error("station-sim could not record (see " + dir + "/record.log)");
  // The recordings (GBs at tens of subbands) go to disk now, not by the kernel's
  // writeback during the trial, on the cores the chain is measured on.
  syncFileSystem(recordings);
}

/// Asks the kernel to compact free memory now (root only; elsewhere nothing happens), so
/// that ionproc's buffers find huge pages without compacting while the trial runs. After
/// a trial of 61 subbands had filled and freed 15 GB of page cache, the next one's ionproc
/// took 7 s to fault its 2.9 GB in and its ranks ran at 0.73-0.93 of real time, while
/// smaller trials after it passed at 1.24-1.63: trials measured what came before them.
void compactMemory() {
  std::ofstream compact("/proc/sys/vm/compact_memory");
  if (compact) compact << "1\n";
}

/// The seconds observe --now shifted the observation by, from its log (waits for it while
/// observe runs); nullopt when observe ended first.
std::optional<int64_t> observeShift(ChildProcess& observe, const std::string& log) {
  const std::string pattern = "--now: start and stop shifted by ";
  for (;;) {
    const std::string text = readFile(log);
    if (const size_t at = text.find(pattern); at != std::string::npos)
      return std::strtoll(text.c_str() + at + pattern.size(), nullptr, 10);
    if (observe.waitFor(0.05)) return std::nullopt;
  }
}

/// station-sim sending the recordings as the stations' UDP (the live parset's ports, in
/// station and port order), their timestamps shifted by the observation's shift.
std::vector<std::string> recordingSender(const std::string& dir, const CapacityOptions& o,
                                         int nrSubbands, int seconds, const std::string& recordings,
                                         int64_t shift) {
  writeFile(dir + "/send.parset",
            parset(o, Products::kCorrelated, seconds, nrSubbands, recordings, dir + "/ms"));
  std::string destinations;
  const int ports = (nrSubbands + kBeamletsPerPort - 1) / kBeamletsPerPort;
  for (int s = 0; s < o.nrStations; ++s)
    for (int port = 0; port < ports; ++port) {
      if (!destinations.empty()) destinations += ',';
      destinations += liveInput(s, port);
    }
  return {partExecutable("station-sim"),
          dir + "/send.parset",
          "--replay",
          "--replay-to",
          destinations,
          "--restamp-by",
          std::to_string(shift)};
}

/// One trial of nrSubbands for `seconds`.
Trial runTrial(const CapacityOptions& o, const std::string& top, int nrSubbands, int seconds,
               Input input, Products products) {
  const std::string dir = top + "/" + inputName(input) + "-" + productsName(products) + "-N" +
                          std::to_string(nrSubbands) + "-" + std::to_string(seconds) + "s";
  fs::create_directories(dir);
  const std::string recordings = dir + "/recordings";
  // Recordings sent as UDP begin a second early and end a second late: the observation
  // starts after the first packet and ends before the last, as with real stations.
  const int lead = input == Input::kLiveRecorded ? 1 : 0;
  if (input != Input::kLive) record(o, dir, recordings, nrSubbands, seconds + 2 * lead, -lead);
  writeFile(dir + "/replay.parset",
            parset(o, products, seconds, nrSubbands, input == Input::kReplayed ? recordings : "",
                   dir + "/ms"));
  const std::string obs = dir + "/obs";
  std::vector<std::string> observe{
      partExecutable("observe"), dir + "/replay.parset", "--now", "--dir", obs, "--ranks",
      std::to_string(o.ranks)};
  if (o.noSharedMemory) observe.push_back("--no-shared-memory");
  if (o.lendRing) observe.push_back("--lend-ring");
  if (input == Input::kLiveRecorded) observe.push_back("--no-station-sim");
  if (o.console) {
    observe.push_back("--console");
    observe.push_back("0");
  }
  compactMemory();
  ChildProcess child("observe", observe, dir + "/observe.log");
  child.start();
  std::optional<ChildProcess> sender;
  std::optional<SteadyCpu> senderCpu;
  if (input == Input::kLiveRecorded)
    if (const std::optional<int64_t> shift = observeShift(child, dir + "/observe.log")) {
      sender.emplace("station-sim",
                     recordingSender(dir, o, nrSubbands, seconds + 2 * lead, recordings, *shift),
                     dir + "/send.log");
      sender->start();
      senderCpu.emplace(sender->pid(), obs + "/ionproc.status",
                        std::vector<std::string>{"station-sim"});
    }
  // observe itself too: with --console its server thread is what it costs.
  SteadyCpu cpu(child.pid(), obs + "/ionproc.status",
                {"observe", "ionproc", "correlator", "storage-sink", "station-sim"});
  std::shared_ptr<DumpDuringTrial> dump;
  if (o.dump)  // the window ends 4 s after the start, plus the window: start-up left out
    dump =
        std::make_shared<DumpDuringTrial>(child.pid(), obs, dir, o.dumpSeconds, o.dumpSeconds + 4);
  auto nextFetch = std::chrono::steady_clock::now();
  while (!child.waitFor(0.25)) {
    cpu.sample();
    if (dump) dump->sample();
    if (o.console && std::chrono::steady_clock::now() >= nextFetch) {
      nextFetch += std::chrono::seconds(1);
      fetchFromConsole(obs + "/console.url", "/status.json");
    }
    if (senderCpu) senderCpu->sample();
  }
  if (sender && !sender->waitFor(30)) sender->kill();
  const int code = child.exitCode().value_or(-1);
  fs::remove_all(recordings);
  fs::remove_all(dir + "/ms");

  Trial trial;
  const std::string json = readFile(obs + "/summary.json");
  double lost = 0;
  for (double n : numbersOf(json, "packetsLost")) lost += n;
  const double blocks =
      numbersOf(json, "blocksDropped").empty() ? -1 : numbersOf(json, "blocksDropped")[0];
  const double integrations = numbersOf(json, "integrationsDropped").empty()
                                  ? -1
                                  : numbersOf(json, "integrationsDropped")[0];
  const double pace = slowestRankPace(readFile(obs + "/correlator.log"));
  // Beam-formed data lost on the way (its files' subband-blocks written as zeros of weight
  // 0), and every file of the parset written.
  double beamFormedLost = 0;
  for (double n : numbersOf(json, "subbandBlocksLost")) beamFormedLost += n;
  const size_t filesWritten = numbersOf(json, "blocksWritten").size();
  const bool filesComplete = !hasBeamFormed(products) || filesWritten == kCoherentTabs + 1;
  trial.sustained = code == 0 && lost == 0 && blocks == 0 && integrations == 0 && pace >= 1 &&
                    beamFormedLost == 0 && filesComplete;
  std::ostringstream why;
  why << "observe exit " << code << ", " << lost << " packets lost, " << blocks
      << " blocks dropped, " << integrations << " integrations dropped, ";
  if (hasBeamFormed(products))
    why << beamFormedLost << " beam-formed subband-blocks lost in " << filesWritten << " files, ";
  why << "slowest rank at " << std::setprecision(3) << pace << " of real time; "
      << linkPath(readFile(obs + "/ionproc.log"));
  trial.why = why.str();
  trial.steadyCpu = cpu.perObservedSecond();
  trial.steadyWait = cpu.waitPerObservedSecond();
  trial.steadyRankCpu = cpu.perProcessPerObservedSecond();
  std::tie(trial.beamFormedBytes, trial.beamFormedWriteSeconds) =
      beamFormedWrites(readFile(obs + "/storage-sink.log"));
  trial.dump = dump;
  trial.summaryJson = json;
  if (senderCpu && trial.steadyCpu)
    if (const auto sent = senderCpu->perObservedSecond(); sent && sent->count("station-sim"))
      (*trial.steadyCpu)["station-sim"] = sent->at("station-sim");
  return trial;
}

/// MemAvailable of /proc/meminfo in bytes (0 if unreadable).
double availableMemoryBytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return 0;
}

/// The compute-bound prediction rounded up (no trial above it can pass), or fewer when a
/// trial's recordings (with the live-recorded lead) and ionproc's buffers (about 3.5 s of
/// every station-subband) would not fit in 0.9 of the memory available now. A trial of 61
/// subbands, whose recordings alone took three quarters, spent 22 s faulting ionproc's
/// 3.8 GB in (the kernel compacting memory for huge pages) and dropped every block: it
/// measured memory, not the chain.
int defaultMaxSubbands(const CapacityOptions& o, double predicted) {
  constexpr double kBufferSeconds = 3.5;
  const double bytesPerSubband =
      double(o.nrStations) * (o.seconds + 2 + kBufferSeconds) * kBytesPerStationSubbandSecond;
  const double fit = 0.9 * availableMemoryBytes() / bytesPerSubband;
  return std::max(4, int(std::min(std::ceil(predicted), std::floor(fit))));
}

std::optional<CapacityOptions> parseOptions(int argc, char** argv) {
  CapacityOptions o;
  po::options_description d("usage: rtcp-bench capacity [options]");
  d.add_options()("help,h", "this help")("stations", po::value(&o.nrStations),
                                         "stations (default 16, at most 24)")(
      "seconds", po::value(&o.seconds), "seconds per trial observation (default 10)")(
      "ranks", po::value(&o.ranks), "correlator ranks (default 2)")(
      "max-subbands", po::value(&o.maxSubbands),
      "largest number of subbands tried (default: the compute-bound prediction, or as many "
      "as memory holds the recordings and ionproc's buffers of, if fewer)")(
      "subbands", po::value(&o.onlySubbands),
      "one trial of this many subbands instead of a search (to profile the parts)")(
      "input", po::value(&o.input),
      "replayed, live, live-recorded (UDP from recordings made before each trial), both "
      "(replayed and live, the default) or all")("dir", po::value(&o.directory),
                                                 "keep the trials' logs and summaries here")(
      "no-shared-memory", po::bool_switch(&o.noSharedMemory),
      "observe --no-shared-memory: the ranks fetch over the link's socket and exchange by MPI "
      "messages (the paths of ranks on other hosts), to compare")(
      "lend-ring", po::bool_switch(&o.lendRing),
      "observe --lend-ring: ionproc lends the ranks the rows in its station buffer instead of "
      "copying blocks into shared memory, to compare")(
      "beamformed", po::bool_switch(&o.beamFormed),
      "beam-formed observations (8 coherent TABs of Stokes I dedispersed at DM 26.76 and "
      "incoherent Stokes I), then correlated and beam-formed at once; replayed unless --input "
      "says otherwise")("console", po::bool_switch(&o.console),
                        "observe --console, its /status.json fetched once a second as an "
                        "operator's page does: cpu_per_observed_second.observe is its cost")(
      "flagging", po::bool_switch(&o.flagging),
      "correlated observations with online RFI flagging on, both stages (OLAP.CNProc."
      "onlineFlagging, onlinePreCorrelationFlagging, onlinePostCorrelationFlagging) besides the "
      "same with it off: correlated_flagged figures and their subbands_to_unflagged")(
      "dump", po::bool_switch(&o.dump),
      "one trial (--subbands, default 8; --input, default live-recorded; --seconds, default "
      "twice the window and 12) with a buffer of the window and 4 s, in which rtcp-trigger asks "
      "for the "
      "last --dump-seconds of every station and subband once the observation ran that long "
      "and 4 s: the dump's time, bytes and ionproc CPU per GB, and the observation's late and "
      "dropped blocks during the dump and outside it")("dump-seconds", po::value(&o.dumpSeconds),
                                                       "--dump: the window (default 10 s)");
  po::variables_map vm;
  po::store(po::command_line_parser(std::vector<std::string>(argv, argv + argc)).options(d).run(),
            vm);
  po::notify(vm);
  if (vm.count("help")) {
    std::cout << d;
    return std::nullopt;
  }
  if (o.nrStations < 2 || o.nrStations > int(std::size(kStations)))
    throw po::error("--stations: 2..24");
  if (o.seconds < 1 || o.seconds > 1799) throw po::error("--seconds: 1..1799");
  if (o.beamFormed && !vm.count("input")) o.input = "replayed";
  if (o.beamFormed && o.flagging) throw po::error("--flagging: correlated trials only");
  if (o.dump) {
    if (o.beamFormed || o.flagging) throw po::error("--dump: correlated trials only");
    if (!(o.dumpSeconds >= 1 && o.dumpSeconds <= 60)) throw po::error("--dump-seconds: 1..60");
    if (o.onlySubbands <= 0) o.onlySubbands = 8;
    if (!vm.count("input")) o.input = "live-recorded";
    if (!vm.count("seconds")) o.seconds = int(std::ceil(2 * o.dumpSeconds)) + 12;
  }
  if (o.input != "replayed" && o.input != "live" && o.input != "live-recorded" &&
      o.input != "both" && o.input != "all")
    throw po::error("--input: replayed, live, live-recorded, both or all");
  return o;
}

/// "capacity.<input>." (and the products but for correlated ones) as a figure's name holds
/// it.
std::string figurePrefix(Input input, Products products) {
  std::string mode = std::string("capacity.") + inputName(input) + ".";
  if (products != Products::kCorrelated) mode += std::string(productsName(products)) + ".";
  std::replace(mode.begin(), mode.end(), '-', '_');
  return mode;
}

/// The prediction from the whole chain's CPU, not the signal chain's alone: the subbands
/// the machine's cores carry at the CPU seconds per subband-second every part of the trial
/// used in its steady state (ionproc's input and forwarding, the ranks' fetch, exchange
/// and output beside their kernels, storage-sink; station-sim's too where it runs:
/// `.with_station_sim`; not observe's, 0.1-0.2 % of a core). Machine load from outside the chain
/// does not enter it (CPU seconds, not wall time), so the ratio of the subbands sustained to it is
/// the fraction of the machine's capacity the chain reached; kernels_fraction_of_chain_cpu is how
/// much of the chain's CPU the compute-bound prediction counts.
void printWholeChainPrediction(const std::string& mode, const std::map<std::string, double>& budget,
                               int measured, int sustained, double predicted) {
  const double cores = coresOfThisMachine();
  double chain = 0, simulator = 0;
  for (const auto& [part, perSecond] : budget) {
    printFigure(mode + "cpu_per_subband_second." + part, perSecond / measured);
    if (part == "station-sim")
      simulator += perSecond / measured;
    else if (part != "observe")
      chain += perSecond / measured;
  }
  printFigure(mode + "cpu_per_subband_second.chain", chain);
  if (chain <= 0) return;
  const double wholeChain = cores / chain;
  printFigure(mode + "predicted_subbands_whole_chain", wholeChain);
  printFigure(mode + "ratio_to_whole_chain_prediction", sustained / wholeChain);
  if (predicted > 0) printFigure(mode + "kernels_fraction_of_chain_cpu", cores / predicted / chain);
  if (simulator > 0) {
    printFigure(mode + "predicted_subbands_whole_chain.with_station_sim",
                cores / (chain + simulator));
    printFigure(mode + "ratio_to_whole_chain_prediction.with_station_sim",
                sustained * (chain + simulator) / cores);
  }
}

/// storage-sink's beam-formed writes against the rate the trial made them: bytes per second
/// of its writer's time writing and syncing them (the rate it can keep up with) over bytes
/// per observed second (the goal: at least 2).
void printStorageWrites(const std::string& mode, const Trial& trial, int seconds) {
  if (trial.beamFormedBytes <= 0 || trial.beamFormedWriteSeconds <= 0) {
    printFigure(mode + "storage_hdf5_write_rate_to_observed_rate", "not measured");
    return;
  }
  const double writeRate = trial.beamFormedBytes / trial.beamFormedWriteSeconds;
  const double observedRate = trial.beamFormedBytes / seconds;
  printFigure(mode + "storage_hdf5_mb_per_observed_second", observedRate / 1e6);
  printFigure(mode + "storage_hdf5_mb_per_second_writing", writeRate / 1e6);
  printFigure(mode + "storage_hdf5_write_rate_to_observed_rate", writeRate / observedRate);
}

/// Bisects the sustained number of subbands of one input mode and prints its figures;
/// the subbands sustained.
int measureMode(const CapacityOptions& o, const std::string& top, Input input, Products products,
                double predicted) {
  const int seconds = o.seconds;
  std::map<int, Trial> trials;
  auto attempt = [&](int n) -> bool {
    Trial t = runTrial(o, top, n, seconds, input, products);
    std::cerr << "capacity (" << inputName(input) << ", " << productsName(products) << "): " << n
              << " subbands: " << (t.sustained ? "sustained" : "NOT sustained") << " (" << t.why
              << ")\n";
    const bool ok = t.sustained;
    trials[n] = std::move(t);
    return ok;
  };
  int good = 0, bad = o.maxSubbands + 1;
  if (o.onlySubbands > 0) {
    (attempt(o.onlySubbands) ? good : bad) = o.onlySubbands;
  } else {
    for (int n = std::min(4, o.maxSubbands); good < o.maxSubbands;
         n = std::min(2 * n, o.maxSubbands)) {
      if (!attempt(n)) {
        bad = n;
        break;
      }
      good = n;
    }
    while (bad - good > std::max(1, good / 8)) {
      const int middle = (good + bad) / 2;
      (attempt(middle) ? good : bad) = middle;
    }
  }

  const std::string mode = figurePrefix(input, products);
  printFigure(mode + "predicted_subbands_compute_bound", predicted);
  printFigure(mode + "subbands_sustained", good);
  printFigure(mode + "first_subbands_not_sustained",
              bad > o.maxSubbands ? std::string("none tried") : std::to_string(bad));
  printFigure(mode + "ratio_to_prediction", predicted > 0 ? good / predicted : 0);
  // The CPU budget of the sustained trial (of the one trial, sustained or not, with
  // --subbands), in its steady state (SteadyCpu.h).
  const int measured = o.onlySubbands > 0 ? o.onlySubbands : good;
  if (measured == 0) return good;
  const std::optional<std::map<std::string, double>>& budget = trials.at(measured).steadyCpu;
  if (!budget) {
    printFigure(mode + "cpu_per_observed_second", "not measured (no steady window)");
    return good;
  }
  const Trial& trial = trials.at(measured);
  double chain = 0;
  for (const auto& [part, perSecond] : *budget) {
    printFigure(mode + "cpu_per_observed_second." + part, perSecond);
    printFigure(mode + "cpu_per_station_subband." + part, perSecond / (measured * o.nrStations));
    if (part != "station-sim" && part != "observe") chain += perSecond;
  }
  if (trial.steadyRankCpu)
    for (const auto& [rank, perSecond] : *trial.steadyRankCpu)
      printFigure(mode + "cpu_per_observed_second." + rank, perSecond);
  printFigure(mode + "cpu_per_observed_second.chain", chain);
  printFigure(mode + "cpu_per_station_subband.chain", chain / (measured * o.nrStations));
  printFigure(mode + "chain_cpu_fraction_of_cores", chain / coresOfThisMachine());
  printWholeChainPrediction(mode, *budget, measured, good, predicted);
  if (hasBeamFormed(products)) printStorageWrites(mode, trial, o.seconds);
  if (trial.dump) trial.dump->printFigures(mode, trial.summaryJson);
  // Time ready to run but waiting for a core: a part that falls behind with cores to
  // spare on average waits behind the others' bursts.
  if (const auto& wait = trials.at(measured).steadyWait)
    for (const auto& [part, perSecond] : *wait)
      printFigure(mode + "core_wait_per_observed_second." + part, perSecond);
  // Live, station-sim simulates (or sends) the stations' packets on the same cores: the
  // chain had what it left. The prediction scaled to those cores gives the chain's own ratio.
  if (const auto sim = budget->find("station-sim"); sim != budget->end() && predicted > 0) {
    const double cores = coresOfThisMachine();
    const double left = std::max(cores - sim->second, 0.0);
    printFigure(mode + "cores_left_by_station_sim", left);
    if (left > 0)
      printFigure(mode + "ratio_to_prediction_on_cores_left",
                  measured / (predicted * left / cores));
  }
  return good;
}

/// The compute-bound prediction of a trial's products: cores x the subbands per core of
/// the correlator's chain, of the beam former on the trial's own settings, or of both one
/// after the other.
double prediction(const CapacityOptions& o, Products products, int cores) {
  if (products == Products::kCorrelatedFlagged) {
    FlaggingSettings flagging;
    flagging.online = flagging.preCorrelation = flagging.detectBrokenStations = true;
    return cores * correlator::bench::chainSubbandsPerCore(o.nrStations, nullptr, &flagging);
  }
  const double correlated = correlator::bench::chainSubbandsPerCore(o.nrStations);
  if (products == Products::kCorrelated) return cores * correlated;
  const ObservationSettings settings = ObservationSettings::fromParset(
      Parset::fromString(parset(o, products, o.seconds, 1, "", "out")));
  StepTimes steps;
  const double beamFormed =
      correlator::beamformed::bench::beamFormerSubbandsPerCore(settings, &steps);
  std::cerr << "capacity: beam former, " << beamFormed << " subbands per core: " << steps.report()
            << "\n";
  if (products == Products::kBeamFormed) return cores * beamFormed;
  return cores / (1 / correlated + 1 / beamFormed);
}

int capacity(int argc, char** argv) {
  const std::optional<CapacityOptions> options = parseOptions(argc, argv);
  if (!options) return 0;
  CapacityOptions o = *options;
  const int cores = coresOfThisMachine();
  const std::vector<Products> products =
      o.beamFormed ? std::vector<Products>{Products::kBeamFormed, Products::kCorrelatedBeamFormed}
      : o.flagging ? std::vector<Products>{Products::kCorrelated, Products::kCorrelatedFlagged}
                   : std::vector<Products>{Products::kCorrelated};
  // The predictions first, on a quiet machine.
  std::map<Products, double> predicted;
  for (Products p : products) predicted[p] = prediction(o, p, cores);
  if (o.maxSubbands <= 0) {
    double most = 0;
    for (const auto& [p, n] : predicted) most = std::max(most, n);
    o.maxSubbands = defaultMaxSubbands(o, most);
  }
  const std::string top =
      o.directory.empty() ? fs::temp_directory_path().string() + "/rtcp-capacity" : o.directory;
  fs::remove_all(top);
  fs::create_directories(top);
  printFigure("capacity.stations", o.nrStations);
  printFigure("capacity.channels", 64);
  printFigure("capacity.cores", cores);
  printFigure("capacity.trial_seconds", o.seconds);
  if (o.beamFormed) {
    printFigure("capacity.beamformed.coherent_tabs", kCoherentTabs);
    printFigure("capacity.beamformed.dispersion_measure", kTabDispersionMeasure);
  }
  for (const auto& [p, n] : predicted)
    printFigure(
        p == Products::kCorrelated
            ? std::string("capacity.predicted_subbands_compute_bound")
            : std::string("capacity.") + productsName(p) + ".predicted_subbands_compute_bound",
        n);
  const bool all = o.input == "all", both = o.input == "both";
  std::map<std::pair<Input, Products>, int> sustained;
  for (Input input : {Input::kReplayed, Input::kLive, Input::kLiveRecorded})
    if (all || (both && input != Input::kLiveRecorded) || o.input == inputName(input))
      for (Products p : products)
        sustained[{input, p}] = measureMode(o, top, input, p, predicted.at(p));
  if (o.flagging)  // the subbands with flagging on, of those with it off
    for (const auto& [mode, good] : sustained)
      if (mode.second == Products::kCorrelatedFlagged &&
          sustained.at({mode.first, Products::kCorrelated}) > 0)
        printFigure(
            figurePrefix(mode.first, Products::kCorrelatedFlagged) + "subbands_to_unflagged",
            double(good) / sustained.at({mode.first, Products::kCorrelated}));
  if (o.directory.empty()) fs::remove_all(top);
  // This guest's speed drifts with its host's load (the prediction moved from 110 to 128
  // subbands within an hour): the prediction again after the trials, and each mode's
  // ratio to the larger of the two, the figure that flatters least.
  for (Products p : products) {
    const double after = prediction(o, p, cores);
    printFigure(p == Products::kCorrelated
                    ? std::string("capacity.predicted_subbands_compute_bound_after")
                    : std::string("capacity.") + productsName(p) +
                          ".predicted_subbands_compute_bound_after",
                after);
    for (const auto& [mode, good] : sustained)
      if (mode.second == p)
        printFigure(figurePrefix(mode.first, p) + "ratio_to_larger_prediction",
                    good / std::max(predicted.at(p), after));
  }
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK(
    "capacity",
    "the whole chain's real-time capacity in subbands (16 stations, 64 channels, "
    "recordings replayed through observe) and its ratio to the correlator bench's prediction "
    "(--beamformed: beam-formed, and correlated + beam-formed)",
    capacity);

}  // namespace rtcp::observe::bench
