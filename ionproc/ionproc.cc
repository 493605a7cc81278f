// ionproc PARSET: the I/O-node process. Station input into delayed circular buffers, the
// link to the compute ranks with its plug-ins, integration, and output to storage-sink.
#include <signal.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "LinkServer.h"
#include "OutputPath.h"
#include "StationInput.h"
#include "TriggerService.h"
#include "daemon/CallService.h"
#include "daemon/PluginHost.h"
#include "rtcp/CommandLine.h"
#include "rtcp/Files.h"
#include "rtcp/HostMemory.h"
#include "rtcp/InputRecordingSettings.h"
#include "rtcp/IntegrationSendPool.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/SampleTime.h"
#include "rtcp/SharedMemory.h"
#include "rtcp/StationBufferSize.h"
#include "rtcp/StatusFile.h"
#include "rtcp/WallClock.h"

namespace po = boost::program_options;
using namespace rtcp;
using namespace rtcp::ion;

namespace {

constexpr const char* kDefaultLink = "tcp:127.0.0.1:4200";
constexpr double kTailSeconds = 0.2;  ///< for the stop time's last packets in flight

struct Options {
  std::string parset;
  std::string link = kDefaultLink;
  std::vector<std::string> plugins;
  size_t outputQueue = kDefaultOutputQueue;
  double spoolMb = 1024;  ///< the spool behind each storage connection's queue
  std::string spoolDir;   ///< its files; default $TMPDIR or /tmp
  double retainMb =
      kDefaultRetainMb;  ///< sent, not yet on storage-sink's disk: sent again after a break
  double linger = 10;
  bool noInput = false;
  bool noOutput = false;
  bool lendRing = false;
  std::string stations;  ///< comma-separated names; empty: every station
  std::string statusFile;
  std::string quickLookFile;
  std::string secretFile;
  std::string trigger = "127.0.0.1:0";  ///< HOST:PORT of the trigger port; "" none
  std::string recordInput;              ///< overrides Rtcp.recordInput.directory
  std::optional<double> recordMaxGb, recordBufferMb;
};

/// With --lend-ring, whether ranks on this host (a unix: link) read the rows where the
/// receivers wrote them, in the station ring in shared memory, rather than get each block
/// copied into a slot. Only with 2 MB pages: on this machine kind (a paravirtualised
/// guest) ranks read a ring of 4 KB pages at a quarter of the speed (rtcp-bench capacity,
/// 44 subbands: input conversion 0.2 against 0.055 ms per station-subband-block).
bool lendSampleRing(const Options& options) {
  if (options.link.rfind("unix:", 0) != 0 || !options.lendRing) return false;
  if (SharedMemory::hugePages()) return true;
  RTCP_LOG_WARN("ionproc",
                "/dev/shm has no huge pages: station blocks are copied into shared memory for "
                "the ranks, not lent in place from the station buffer (mount -o "
                "remount,huge=advise /dev/shm, as scripts/setup.sh does, to lend them)");
  return false;
}

std::optional<Options> parseOptions(int argc, char** argv) {
  Options o;
  // Defaults shared with observe's memory plan (rtcp/IntegrationSendPool.h).
  const auto number = [](double value) {
    std::ostringstream text;
    text << value;
    return text.str();
  };
  const std::string outputQueueHelp =
      "integrations that may wait per storage connection (default " +
      number(double(kDefaultOutputQueue)) + ")";
  const std::string retainHelp =
      "MiB per storage connection of integrations sent but not yet on storage-sink's disk (it "
      "says when they are), kept to send again should it die (default " +
      number(kDefaultRetainMb) + "; 0: none)";
  po::options_description visible("usage: ionproc PARSET [options]\n\noptions");
  visible.add_options()("help,h", "this help")(
      "link", po::value(&o.link),
      "where compute ranks connect: tcp:HOST:PORT (HOST: the address they reach) or unix:PATH "
      "(default tcp:127.0.0.1:4200)")(
      "secret-file", po::value(&o.secretFile),
      "the observation's secret, which every link connection must prove it knows and with "
      "which ionproc proves its own to storage-sink (a file of mode 0600, as observe writes "
      "it; '-': the first line of standard input, before the parset); required")(
      "plugin", po::value(&o.plugins),
      "plug-in shared object to load (repeatable; default: the correlator plug-in)")(
      "output-queue", po::value(&o.outputQueue), outputQueueHelp.c_str())(
      "spool-mb", po::value(&o.spoolMb),
      "MiB per storage connection that integrations which do not fit in its queue are spooled "
      "to on disk while storage-sink is away, and sent after it (default 1024; 0: drop them)")(
      "spool-dir", po::value(&o.spoolDir),
      "directory of the spool files (default $TMPDIR or /tmp)")("retain-mb", po::value(&o.retainMb),
                                                                retainHelp.c_str())(
      "linger", po::value(&o.linger),
      "seconds past the stop time to wait for the last results (default 10)")(
      "no-input", po::bool_switch(&o.noInput),
      "run without station input (link, plug-ins and output only)")(
      "stations", po::value(&o.stations),
      "serve only these stations (comma-separated names; default: all), e.g. the ones whose inputs "
      "reach this host")(
      "no-output", po::bool_switch(&o.noOutput),
      "only serve station blocks; another ionproc integrates and sends to storage")(
      "lend-ring", po::bool_switch(&o.lendRing),
      "with a unix: link and huge pages in /dev/shm, lend the ranks the rows in the station "
      "buffer itself rather than copy each block into shared memory for them (slower on a "
      "2-core guest: link/README.md)")(
      "trigger", po::value(&o.trigger),
      "HOST:PORT the trigger port listens on for dumps of the station buffers "
      "(TriggerProtocol.h, rtcp-trigger; port 0: any free one, as the status file's 'trigger' "
      "says; default 127.0.0.1:0; 'none': no trigger port)")(
      "record-input", po::value(&o.recordInput),
      "record every station's valid packets into DIR as they arrive, one recording per input "
      "stream (STATION-K.rsp, station-sim's format), written behind the input (default: "
      "Rtcp.recordInput.directory)")(
      "record-max-gb", po::value<double>()->notifier([&o](double v) { o.recordMaxGb = v; }),
      "the most GB the recordings may take (default Rtcp.recordInput.maxGB; 0: 90 % of the free "
      "space)")(
      "record-buffer-mb", po::value<double>()->notifier([&o](double v) { o.recordBufferMb = v; }),
      "MiB of buffers between the input and the disk (default Rtcp.recordInput.bufferMB, 256)")(
      "status", po::value(&o.statusFile),
      "rewrite this file once a second with key=value status lines (StatusFile.h); '-': print them "
      "as one 'rtcp-status' line a second on standard output (for observe across hosts)")(
      "quicklook", po::value(&o.quickLookFile),
      "rewrite this file with the newest integration of the middle subband (autocorrelation "
      "spectra, a few baselines' amplitude and phase; output/QuickLook.h) as JSON when it "
      "changed, at most once a second; '-': print it as one 'rtcp-quicklook' line on standard "
      "output (for observe's console across hosts)");
  const std::string about =
      "\nServes the parset's stations to the correlator ranks over the link, adds their\n"
      "visibilities over OLAP.IONProc.integrationSteps blocks and sends them to storage-sink.\n"
      "With one ionproc per input host, each serves its --stations and all but one run\n"
      "with --no-output. PARSET '-' reads the parset from standard input.\n";
  if (!parseCommandLine(argc, argv, visible, "PARSET", o.parset, about)) return std::nullopt;
  if (o.secretFile.empty())
    throw po::error(
        "--secret-file is required: the link and storage take only connections that prove "
        "they belong to the observation");
  if (!(o.spoolMb >= 0)) throw po::error("--spool-mb must not be negative");
  if (!(o.retainMb >= 0)) throw po::error("--retain-mb must not be negative");
  if (o.spoolDir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    o.spoolDir = tmp && *tmp ? tmp : "/tmp";
  }
  if (o.plugins.empty()) {
    const std::filesystem::path beside =
        std::filesystem::canonical("/proc/self/exe").parent_path() / "librtcp_correlator_plugin.so";
    o.plugins.push_back(std::filesystem::exists(beside) ? beside.string() : RTCP_CORRELATOR_PLUGIN);
  }
  return o;
}

/// The indices of the comma-separated station names (all stations when empty).
std::vector<int> stationIndices(const ObservationSettings& settings, const std::string& names) {
  std::vector<int> indices;
  std::istringstream list(names);
  for (std::string name; std::getline(list, name, ',');) {
    if (name.empty()) continue;
    const int index = settings.stationIndex(name);
    if (index < 0)
      throw std::runtime_error("--stations: " + name + " is not in the parset's station list");
    indices.push_back(index);
  }
  if (!names.empty() && indices.empty()) throw std::runtime_error("--stations: no station named");
  return indices;
}

/// The recording of the input that the parset and the options ask for, if any.
std::optional<RecorderOptions> recordingOptions(const ObservationSettings& settings,
                                                const Options& options) {
  const std::string base = options.parset == "-"
                               ? std::filesystem::current_path().string()
                               : std::filesystem::absolute(options.parset).parent_path().string();
  InputRecordingSettings r = InputRecordingSettings::fromParset(
      Parset::fromString(settings.parsetText, options.parset), base);
  if (!options.recordInput.empty()) r.directory = options.recordInput;
  if (options.recordMaxGb) r.maxGB = *options.recordMaxGb;
  if (options.recordBufferMb) r.bufferMB = *options.recordBufferMb;
  if (!r.enabled()) return std::nullopt;
  if (!(r.maxGB >= 0) || !(r.bufferMB >= 1))
    throw std::runtime_error("--record-max-gb must not be negative, --record-buffer-mb at least 1");
  RecorderOptions recorder;
  recorder.directory = r.directory;
  recorder.bufferBytes = size_t(r.bufferMB * (1 << 20));
  if (r.maxGB > 0) {
    recorder.maxBytes = uint64_t(r.maxGB * 1e9);
  } else {  // 90 % of the free space of the directory's file system (or its parent's)
    std::filesystem::path existing = std::filesystem::absolute(r.directory);
    while (!std::filesystem::exists(existing) && existing.has_parent_path() &&
           existing != existing.parent_path())
      existing = existing.parent_path();
    recorder.maxBytes = uint64_t(0.9 * double(std::filesystem::space(existing).available));
  }
  RTCP_LOG_INFO("ionproc", "recording the input into " << recorder.directory << " (at most "
                                                       << double(recorder.maxBytes) / 1e9 << " GB, "
                                                       << r.bufferMB << " MiB of buffers)");
  return recorder;
}

/// Refuses station buffers (OLAP.nrSecondsOfBuffer) that this host's memory cannot hold,
/// before they are allocated: a clear error, not an out-of-memory kill.
void checkBufferMemory(const ObservationSettings& s, std::vector<int> stations) {
  if (stations.empty())
    for (int i = 0; i < s.nrStations(); ++i) stations.push_back(i);
  double bytes = 0;
  for (int index : stations) bytes += stationBufferBytes(s, index);
  const std::optional<HostMemory> available = hostMemory();
  if (!available || bytes <= 0.9 * available->bytes) return;
  std::ostringstream why;
  why.precision(3);
  why << "OLAP.nrSecondsOfBuffer = " << s.secondsOfBuffer << " s: the station buffers of "
      << stations.size() << " antenna fields x " << s.nrSubbands() << " subbands ("
      << double(stationBufferCapacity(s)) / s.subbandWidth() << " s each) need " << bytes / 1e9
      << " GB, more than the 90 % of " << available->bytes / 1e9 << " GB this host can give ("
      << available->source << "); a shorter OLAP.nrSecondsOfBuffer, fewer stations or subbands "
      << "make it fit";
  throw std::runtime_error(why.str());
}

/// Blocks the stop signals in every thread; the main thread waits for them.
sigset_t blockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);  // observe's death (PR_SET_PDEATHSIG) is SIGTERM; a hangup as well
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  return set;
}

/// What the --status file reports: input, integrator and storage counters and the lag of
/// the newest block served behind the wall clock.
IonStatus collectStatus(const ObservationSettings& settings, std::vector<IonStatus::Station> input,
                        double clockShift, const OutputPath& output) {
  IonStatus status;
  status.wallTime = wallClock();
  status.nrBlocks = settings.nrBlocks();
  status.blockDuration = settings.blockDuration();
  status.stations = std::move(input);
  for (const IonStatus::Station& st : status.stations)
    status.newestBlock = std::max(status.newestBlock, st.lastBlock);
  if (status.newestBlock >= 0) {
    const double end =
        SampleClock(settings.clockMHz).unixTime(settings.blockStartSample(status.newestBlock + 1));
    status.newestBlockLag = status.wallTime - (end + clockShift);
  }
  const auto in = output.integrator().statistics();
  status.blocksIntegrated = in.blocks;
  status.integrations = in.integrations;
  status.incompleteIntegrations = in.incompleteIntegrations;
  if (const StorageSender* storage = output.storage()) {
    const auto st = storage->statistics();
    status.storageQueued = st.queued;
    status.storageSent = st.sent;
    status.storageDropped = st.dropped;
    status.storageConnections = st.connects;
    status.beamFormedQueued = st.beamFormed.queued;
    status.beamFormedSent = st.beamFormed.sent;
    status.beamFormedDropped = st.beamFormed.dropped;
    status.beamFormedSpooled = st.beamFormed.spooled;
    status.beamFormedResent = st.beamFormed.resent;
    status.beamFormedUnprotected = st.beamFormed.unprotected;
  }
  return status;
}

int run(const Options& options, const sigset_t& stopSignals) {
  const ObservationSecret secret = ObservationSecret::readFile(options.secretFile);  // stdin first
  const ObservationSettings settings = ObservationSettings::fromFile(options.parset);
  settings.logReport("ionproc");

  OutputPathOptions outputOptions;
  outputOptions.toStorage = !options.noOutput;
  outputOptions.queuePerConnection = options.outputQueue;
  outputOptions.finishTimeoutSeconds = options.linger;
  outputOptions.spoolBytes = uint64_t(options.spoolMb * 1024 * 1024);
  outputOptions.spoolDirectory = options.spoolDir;
  outputOptions.retainBytes = uint64_t(options.retainMb * 1024 * 1024);
  outputOptions.secret = secret;
  OutputPath output(settings, outputOptions);

  BlockSource* blocks = nullptr;
  std::unique_ptr<StationInput> input;
  if (!options.noInput) {
    checkBufferMemory(settings, stationIndices(settings, options.stations));
    StationInputOptions inputOptions;
    inputOptions.replayFromFirstRequest = true;
    inputOptions.sharedRing = lendSampleRing(options);
    inputOptions.record = recordingOptions(settings, options);
    input = std::make_unique<StationInput>(settings, stationIndices(settings, options.stations),
                                           inputOptions);
    blocks = input.get();
  }
  if (!blocks) RTCP_LOG_WARN("ionproc", "running without station input");
  const LinkServer* linkServer = nullptr;  // once it listens
  std::string triggerEndpoint;             // once the trigger port listens
  std::string statusError;                 // the first reason --status could not be written
  uint64_t quickLookShown = 0;             // the quick look's version written last
  auto writeQuickLook = [&] {
    const QuickLook& quickLook = output.quickLook();
    if (options.quickLookFile.empty() || quickLook.version() == quickLookShown) return;
    quickLookShown = quickLook.version();
    try {
      if (options.quickLookFile == "-")
        std::cout << "rtcp-quicklook " << quickLook.json() << std::endl;
      else
        writeFileAtomically(options.quickLookFile, quickLook.json() + "\n");
    } catch (const std::exception& e) {  // the console's alone: not the observation's
      static RateLimiter limiter(60);
      if (limiter.allow()) RTCP_LOG_WARN("ionproc", "cannot write the quick look: " << e.what());
    }
  };
  auto writeStatus = [&](bool finished) {
    if (options.statusFile.empty()) return;
    std::vector<IonStatus::Station> inputStatistics;
    double clockShift = 0;
    if (input) {
      for (const StationStatistics& st : input->statistics()) {
        IonStatus::Station station;
        station.name = st.station;
        station.packetsReceived = st.packetsReceived;
        station.packetsAccepted = st.packetsAccepted;
        station.late = st.late;
        station.duplicated = st.duplicated;
        station.rejected = st.rejectedTotal();
        station.implausible = st.implausible();
        station.beforeStart = st.beforeStart();
        station.blocksServed = st.blocksServed;
        station.samplesServed = st.samplesServed;
        station.samplesFlagged = st.samplesFlagged;
        station.blocksGone = st.blocksGone;
        station.samplesLevelFlagged = st.samplesLevelFlagged;
        station.subbandBlocksLevelFlagged = st.subbandBlocksLevelFlagged;
        station.lastBlock = st.lastBlock;
        station.acceptedBeforeStart = st.acceptedBeforeStart;
        station.acceptedAfterStop = st.acceptedAfterStop;
        station.portsAccepted = st.acceptedInWindowPerStream;
        station.packetsRecorded = st.packetsRecorded;
        station.packetsNotRecorded = st.packetsNotRecorded;
        inputStatistics.push_back(std::move(station));
      }
      clockShift = input->clockShift();
    }
    writeQuickLook();
    IonStatus status = collectStatus(settings, inputStatistics, clockShift, output);
    status.linkConnectionsRefused = linkServer ? linkServer->statistics().connectionsRefused : 0;
    status.trigger = triggerEndpoint;
    status.finished = finished;
    try {
      if (options.statusFile == "-") {
        std::cout << status.formatLine() << std::endl;  // flushed: mpiexec forwards it now
        return;
      }
      writeFileAtomically(options.statusFile, status.format());
    } catch (const std::exception& e) {
      // observe follows ionproc by this file alone: one it cannot read is an error of
      // ionproc (its exit code), not a stale status in observe's summary.
      static RateLimiter limiter(60);
      if (statusError.empty()) statusError = e.what();
      if (limiter.allow()) RTCP_LOG_ERROR("ionproc", "cannot write the status file: " << e.what());
    }
  };

  FunctionRegistry functions;
  std::vector<std::function<std::string()>> summaries;
  PluginHost plugins(PluginContext{functions, &settings, blocks,
                                   options.noOutput ? nullptr : &output, &summaries});
  for (const std::string& path : options.plugins) plugins.load(path);
  CallService calls(functions);
  LinkServer link(LinkEndpoint::parse(options.link), calls,
                  Handshake(secret, settings.observationId, ConnectionPurpose::kLink));
  linkServer = &link;
  if (input) input->start();
  std::unique_ptr<TriggerService> trigger;
  if (input && options.trigger != "none") {
    const size_t colon = options.trigger.rfind(':');
    if (colon == std::string::npos)
      throw std::runtime_error("--trigger " + options.trigger + ": not HOST:PORT");
    const std::string host = options.trigger.substr(0, colon);
    trigger = std::make_unique<TriggerService>(
        host, uint16_t(std::stoi(options.trigger.substr(colon + 1))), *input,
        Handshake(secret, settings.observationId, ConnectionPurpose::kTrigger));
    triggerEndpoint = host + ":" + std::to_string(trigger->port());
  }

  // Until every integration went out, the stop time passed (real time; for a real-time
  // replay of recordings, the stop time as shifted to the wall clock once the replay
  // started), or a signal.
  auto stopTimePassed = [&](double seconds) {
    double replayShift = 0;
    if (input && !input->started()) return false;  // a replay waiting for the ranks
    if (input) replayShift = input->clockShift();
    return wallClock() > settings.stopTime + replayShift + seconds;
  };

  // Done: every integration sent on, or (--no-output, or no correlated output: the ranks
  // then only form beams, whose data go on as they come) every block of every station
  // served; and the ranks hung up: a rank still holding blocks lent in shared memory
  // returns them at its end, and would find the link gone (a rank hangs up once it sent
  // everything).
  const int64_t expected = settings.nrIntegrations() * settings.nrSubbands();
  const int64_t blocksProcessed = nrProcessedBlocks(settings);
  const bool integrating = !options.noOutput && settings.correlatedOutput.enabled;
  auto allSentOrServed = [&] {
    if (integrating) return int64_t(output.integrator().statistics().integrations) >= expected;
    if (input)
      return std::ranges::all_of(input->statistics(), [&](const StationStatistics& st) {
        return st.lastBlock + 1 >= blocksProcessed;
      });
    return false;
  };
  auto done = [&] { return allSentOrServed() && link.statistics().connectionsOpen == 0; };
  int signal = 0;
  for (double statusWritten = 0; !signal;) {
    if (wallClock() >= statusWritten + 1) {  // once a second (--status - is a log stream)
      writeStatus(false);
      statusWritten = wallClock();
    }
    // Real time: past the last integration, keep receiving until the stop time, so that
    // the packet counts cover start..stop (the tail after the last whole block included).
    if (done() && (!settings.realTime || stopTimePassed(kTailSeconds))) break;
    if (settings.realTime && stopTimePassed(options.linger)) {
      RTCP_LOG_WARN("ionproc", "stop time passed " << options.linger << " s ago; stopping");
      break;
    }
    const timespec quarterSecond{0, 250'000'000};  // the ranks' hang-up is seen soon
    signal = sigtimedwait(&stopSignals, nullptr, &quarterSecond);
    if (signal < 0) signal = 0;
  }
  if (signal) RTCP_LOG_INFO("ionproc", "SIG" << sigabbrev_np(signal) << ": stopping");

  if (trigger) {  // the dumps in progress end first: they read the running input
    trigger->stop();
    const auto t = trigger->statistics();
    RTCP_LOG_INFO("ionproc", "trigger: " << t.dumps << " dumps, " << t.refused << " refused");
  }
  if (input) input->stop();
  link.stop();
  const bool complete = output.finish();

  const auto li = link.statistics();
  if (li.connectionsRefused)
    RTCP_LOG_ERROR("ionproc", "link: " << li.connectionsRefused
                                       << " connections refused: they did not prove they belong "
                                          "to the observation (peers above)");
  RTCP_LOG_INFO("ionproc", "link: " << li.connections << " connections (" << li.connectionsLost
                                    << " lost), " << li.reads << " reads of " << li.bytesRead
                                    << " bytes, " << li.writes << " writes of " << li.bytesWritten
                                    << " bytes, " << calls.calls() << " calls (" << calls.failures()
                                    << " failed)");
  if (input)
    for (const StationStatistics& st : input->statistics())
      RTCP_LOG_INFO("ionproc", "input " << st.station << ": " << st.packetsReceived
                                        << " packets received, " << st.packetsAccepted
                                        << " accepted, " << st.late << " late, " << st.duplicated
                                        << " duplicated, " << st.rejectedTotal() << " rejected ("
                                        << st.implausible() << " implausible, " << st.beforeStart()
                                        << " before the start); " << st.blocksServed
                                        << " blocks served, " << st.blocksGone << " of them gone");
  if (input)
    for (const RecordingCounts& r : input->recordings())
      RTCP_LOG_INFO("ionproc", "recording " << r.path << ": " << r.packets << " packets, "
                                            << r.bytes << " bytes; not recorded: " << r.noBuffer
                                            << " (no free buffer), " << r.overBound
                                            << " (over the bound), " << r.writeFailed
                                            << " (write failed)");
  for (const std::string& line : output.summary()) RTCP_LOG_INFO("ionproc", line);
  for (const auto& summary : summaries) RTCP_LOG_INFO("ionproc", summary());
  writeStatus(true);
  if (!statusError.empty()) {
    RTCP_LOG_ERROR("ionproc", "the status file could not be written (" << statusError
                                                                       << "): observe could not "
                                                                          "follow this ionproc");
    return 1;
  }
  return complete ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  // First: a stop asked for while ionproc starts (observe stopping every part because
  // another failed) is a stop after start-up, not death by SIGINT (exit code 130).
  const sigset_t stopSignals = blockStopSignals();
  Logger::setProcessName("ionproc");
  try {
    const std::optional<Options> options = parseOptions(argc, argv);
    return options ? run(*options, stopSignals) : 0;
  } catch (const po::error& e) {
    RTCP_LOG_ERROR("ionproc", e.what() << " (see ionproc --help)");
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("ionproc", e.what());
  }
  return 1;
}
