// storage-sink PARSET [options]: receives correlated blocks over TCP and writes one
// MeasurementSet per subband stored on this host (DESIGN §1, §2.4, §2.5).
#include <pthread.h>
#include <signal.h>

#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>

#include "StorageSink.h"
#include "rtcp/CommandLine.h"
#include "rtcp/Logger.h"

namespace po = boost::program_options;

namespace {
std::mutex gSinkMutex;
rtcp::storage::StorageSink* gSink = nullptr;  // the sink a signal stops, while it runs
}  // namespace

int main(int argc, char** argv) {
  // SIGINT, SIGTERM (also observe's death) and SIGHUP are taken by one thread that asks the
  // sink to stop: it writes what it received, closes the MSs and removes its reserve files.
  // Blocked first, so that a stop while the sink starts is a stop, not death by the signal.
  sigset_t signals;
  sigemptyset(&signals);
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, signal);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  rtcp::Logger::setProcessName("storage-sink");
  rtcp::storage::SinkOptions options;
  double stagingMb = 256, diskReserveMb = 64;
  std::string parsetPath, secretPath;
  bool report = false;
  po::options_description visible(
      "usage: storage-sink PARSET [options]\n\n"
      "Receives correlated blocks (DESIGN 2.4) and beam-formed blocks (2.4b) on\n"
      "OLAP.Storage.port and writes one MeasurementSet per subband and the beam-formed\n"
      "files whose output location is this host.\n"
      "PARSET '-' reads the parset from standard input.\n\noptions");
  visible.add_options()("help,h", "show this help")(
      "port", po::value<int>(&options.port),
      "TCP port (default OLAP.Storage.port; 0: any free port)")(
      "host", po::value<std::string>(&options.host),
      "address to listen on (default: the host the output locations name; 127.0.0.1 for "
      "localhost)")(
      "secret-file", po::value<std::string>(&secretPath),
      "the observation's secret, which every connection must prove it knows (a file of mode "
      "0600, as observe writes it; '-': the first line of standard input, before the parset)")(
      "all", po::bool_switch(&options.all),
      "write every subband and beam-formed file, whatever host its location names")(
      "location-host", po::value<std::string>(&options.locationHost),
      "write the MSs and beam-formed files whose location names exactly this host (default: "
      "any name of this host, localhost included), and listen on it (observe gives it to a "
      "storage-sink on another host, where the parset's localhost is the launching host)")(
      "staging-mb", po::value<double>(&stagingMb)->default_value(256), "staging memory bound, MiB")(
      "high-watermark", po::value<double>(&options.staging.highWatermark)->default_value(0.75),
      "fraction of staging that starts writing")(
      "low-watermark", po::value<double>(&options.staging.lowWatermark)->default_value(0.25),
      "fraction of staging writing drains down to")(
      "flush-interval",
      po::value<double>(&options.staging.flushIntervalSeconds)->default_value(1.0),
      "seconds a staged block waits at most")(
      "linger", po::value<double>(&options.lingerSeconds)->default_value(10),
      "seconds to wait for late blocks after the stop time")(
      "stop-after-seconds", po::value<double>(&options.stopAfterSeconds)->default_value(0),
      "stop after this many seconds (0: no limit)")(
      "status", po::value<std::string>(&options.statusPath),
      "rewrite this file once a second with key=value status lines (rtcp/StorageStatus.h); '-': "
      "print them as one 'rtcp-storage-status' line a second on standard output")(
      "writer-threads", po::value<int>(&options.writerThreads)->default_value(0),
      "threads writing the MeasurementSets (0: one per core)")(
      "ms-flush-interval", po::value<double>(&options.msFlushSeconds)->default_value(10),
      "seconds between flushes of each MeasurementSet while it is written")(
      "disk-reserve-mb", po::value<double>(&diskReserveMb)->default_value(64),
      "MiB kept free on each file system of the MeasurementSets (a reserve file), to close them "
      "should the disk fill up")(
      "report", po::bool_switch(&report),
      "at the end, print one 'rtcp-ms' line per MeasurementSet and one 'rtcp-bf' line per "
      "beam-formed file on standard output (for observe across hosts)")("verbose,v",
                                                                        "log debug messages");
  po::variables_map vm;
  try {
    if (!rtcp::parseCommandLine(argc, argv, visible, "PARSET", parsetPath, "\n", &vm)) return 0;
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", "bad arguments: " << e.what() << " (see --help)");
    return 2;
  }
  if (vm.count("verbose")) rtcp::Logger::setLevel(rtcp::LogLevel::kDebug);
  options.staging.capacityBytes = size_t(stagingMb * 1024 * 1024);
  if (diskReserveMb < 0) {
    RTCP_LOG_ERROR("storage", "bad arguments: --disk-reserve-mb " << diskReserveMb << " < 0");
    return 2;
  }
  options.diskReserveBytes = uint64_t(diskReserveMb * 1024 * 1024);
  options.createWhileListening = true;  // blocks are staged until their MS is made

  if (secretPath.empty()) {
    RTCP_LOG_ERROR("storage",
                   "bad arguments: --secret-file is required: storage-sink takes "
                   "blocks only over connections that prove they belong to the "
                   "observation (see --help)");
    return 2;
  }
  try {
    options.secret = rtcp::ObservationSecret::readFile(secretPath);  // before a parset on stdin
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", e.what());
    return 2;
  }
  try {
    rtcp::ObservationSettings settings = rtcp::ObservationSettings::fromFile(parsetPath);
    settings.logReport("storage");
    rtcp::storage::StorageSink sink(std::move(settings), options);
    {
      std::lock_guard lock(gSinkMutex);
      gSink = &sink;
    }
    std::thread([signals] {
      int signal = 0;
      if (sigwait(&signals, &signal) != 0) return;
      std::lock_guard lock(gSinkMutex);
      if (gSink) gSink->requestStop(std::string("SIG") + sigabbrev_np(signal));
    }).detach();
    const rtcp::storage::SinkSummary summary = sink.run();
    {
      std::lock_guard lock(gSinkMutex);
      gSink = nullptr;
    }
    summary.log();
    if (report)
      for (const rtcp::storage::SinkSummary::Output& out : summary.outputs)
        std::cout << "rtcp-ms subband=" << out.subband << " integrations=" << out.gridSize
                  << " missing=" << out.missing << " bytes=" << out.bytesWritten
                  << " path=" << out.path << std::endl;  // the path last: it may hold spaces
    if (report)
      for (const rtcp::storage::BeamFormedFileReport& file : summary.beamFormedFiles)
        std::cout << "rtcp-bf blocks=" << file.blocks
                  << " expected=" << summary.beamFormedBlocksExpected
                  << " lost=" << file.subbandBlocksLost << " bytes=" << file.bytes
                  << " path=" << file.path << std::endl;
    if (const std::string error = sink.statusError(); !error.empty()) {
      RTCP_LOG_ERROR("storage", "the status file could not be written (" << error
                                                                         << "): observe could "
                                                                            "not follow this sink");
      return 1;
    }
    return summary.failed ? 1 : 0;
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", parsetPath << ": " << e.what());
    return 1;
  }
}
