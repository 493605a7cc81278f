// rtcp-bench storage: visibilities written into MeasurementSets through the whole
// storage-sink path (TCP, checks, CRC, staging, writer), against a plain sequential write
// of the same number of visibility bytes to the same disk in the same run. Both end with
// fsync and syncfs, so neither leaves dirty pages behind. Also reports the staging
// memory's high-water mark against its bound.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "StorageSink.h"
#include "rtcp/Baselines.h"
#include "rtcp/Benchmark.h"
#include "rtcp/Handshake.h"
#include "rtcp/Logger.h"
#include "rtcp/Parset.h"
#include "rtcp/SampleTime.h"
#include "rtcp/StationTable.h"
#include "rtcp/Stream.h"

namespace rtcp::storage {
namespace {

using Clock = std::chrono::steady_clock;

struct BenchOptions {
  int stations = 16;
  int channels = 64;
  int integrations = 300;
  int subbands = 2;
  double integrationSeconds = 1;
  double stagingMb = 32;
  std::string dir = "/tmp";
  /// One round through the sink, without the sequential writes (for profiling the sink).
  bool sinkOnly = false;
  double msFlushSeconds = SinkOptions{}.msFlushSeconds;  ///< storage-sink --ms-flush-interval
  /// Integrations sent in real time, one each integrationSeconds (0: as fast as the sink
  /// takes them), and how many of them warm up before the real-time figures are taken.
  int pacedIntegrations = 0;
  int warmUpIntegrations = 10;
  /// How the MSs' tiled columns are written (storage-sink's MeasurementSetWriter.h).
  TileWrites tileWrites = TileWrites::direct;
};

TileWrites tileWrites(const std::string& name) {
  if (name == "direct") return TileWrites::direct;
  if (name == "casacore") return TileWrites::casacore;
  if (name == "buffered") return TileWrites::buffered;
  throw std::invalid_argument("--tile-writes: '" + name +
                              "' is none of direct, casacore and buffered");
}

/// CPU seconds of this process, and of the calling thread.
double processCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}
double threadCpuSeconds() {
  rusage usage{};
  ::getrusage(RUSAGE_THREAD, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

/// The subband numbers of a case: 300, 301, ... (LOFAR's 488: 12 ... 499).
int firstSubband(const BenchOptions& o) { return o.subbands > 200 ? 12 : 300; }

/// The first n LBA fields of the shipped station table.
std::vector<std::string> lbaStations(int n) {
  std::ifstream table(dataDirectory() + "/StationPositions.csv");
  std::vector<std::string> names;
  for (std::string line; std::getline(table, line) && int(names.size()) < n;) {
    const size_t comma1 = line.find(','), comma2 = line.find(',', comma1 + 1);
    if (line.empty() || line[0] == '#' || comma2 == std::string::npos) continue;
    if (line.substr(comma2 + 1, line.find(',', comma2 + 1) - comma2 - 1) == "LBA")
      names.push_back(line.substr(0, comma1));
  }
  if (int(names.size()) < n) throw std::runtime_error("the station table has too few LBA fields");
  return names;
}

ObservationSettings benchSettings(const BenchOptions& o, const std::string& dir) {
  std::string stations, ports, subbands;
  int port = 20000;
  for (const std::string& name : lbaStations(o.stations)) {
    stations += (stations.empty() ? "" : ", ") + name;
    std::string list;  // enough ports for the subbands: 61 beamlets each at 16 bits
    for (int p = 0; p * 61 < o.subbands; ++p)
      list += (p ? ", udp:127.0.0.1:" : "udp:127.0.0.1:") + std::to_string(port++);
    ports += "PIC.Core." + name + "LBA.RSP.ports = [" + list + "]\n";
  }
  for (int s = 0; s < o.subbands; ++s)
    subbands += (s ? ", " : "") + std::to_string(firstSubband(o) + s);
  const int steps = std::max(1, int(o.integrationSeconds * 195312.5 / o.channels));
  const double seconds = double(steps) * o.channels / 195312.5 * o.integrations;
  const double start = parseUtc("2025-06-01 12:00:00");
  const std::string text =
      "Observation.ObsID = 99\nObservation.startTime = '2025-06-01 12:00:00'\n"
      "Observation.stopTime = '" +
      formatUtc(start + seconds + 0.5 * seconds / o.integrations) + "'\n" +
      "Observation.antennaSet = LBA_OUTER\nObservation.bandFilter = LBA_30_90\n"
      "Observation.VirtualInstrument.stationList = [" +
      stations + "]\n" + "Observation.channelsPerSubband = " + std::to_string(o.channels) + "\n" +
      "Observation.nrBeams = 1\nObservation.Beam[0].angle1 = 5.2336866848\n"
      "Observation.Beam[0].angle2 = 0.7109425145\nObservation.Beam[0].subbandList = [" +
      subbands + "]\n" +
      "Observation.referencePhaseCenter = [3826577.066, 461022.948, 5064892.786]\n" + ports +
      "OLAP.CNProc.integrationSteps = " + std::to_string(steps) + "\nOLAP.realTime = F\n" +
      "Observation.DataProducts.Output_Correlated.locations = [localhost:" + dir + "]\n";
  ObservationSettings settings =
      ObservationSettings::fromParset(Parset::fromString(text, "storage benchmark"));
  // Exactly: the sink stops once every integration of the parset arrived.
  if (settings.nrIntegrations() != o.integrations)
    throw std::runtime_error("benchmark parset holds " + std::to_string(settings.nrIntegrations()) +
                             " integrations, not " + std::to_string(o.integrations));
  return settings;
}

/// Flushes everything dirty on the file system that holds dir.
void syncFileSystem(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd >= 0) {
    ::syncfs(fd);
    ::close(fd);
  }
}

/// Seconds from the first byte sent: to the last block sent (the sink takes blocks as
/// fast as staging lets it), to the sink done (every block written, the MSs flushed and
/// closed), to the file system synced (total).
struct SinkTimes {
  double sent = 0, closed = 0, total = 1e30;
  double create = 0;   ///< seconds to create the MSs (before the first byte)
  double sinkCpu = 0;  ///< CPU seconds of the sink (the process less the sending thread)
  /// Paced: the sink's CPU seconds from the end of the warm-up to every block written (not
  /// yet closed), and the observed seconds those integrations span.
  double steadyCpu = 0, steadyObservedSeconds = 0;
  /// Paced: seconds from the end of the last integration (when it was sent) until every
  /// block was written. Up to one MS flush interval when the sink keeps up (integrations
  /// that fill no whole DATA tile go into the MS at its next flush); more: it fell behind.
  double writtenAfterLastSeconds = 0;
};

/// The sink's CPU seconds so far: the process's less the calling (sending) thread's.
double sinkCpuSeconds() { return processCpuSeconds() - threadCpuSeconds(); }

/// Waits until the sink has written `integrations` subband-integrations, or has stopped
/// (run's result ready: it failed) short of them.
void waitUntilWritten(const StorageSink& sink, const std::future<SinkSummary>& run,
                      uint64_t integrations) {
  while (sink.status().integrationsWritten < integrations &&
         run.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
  }
}

/// Sends every integration of every subband through TCP into a storage sink.
SinkTimes writeThroughSink(const BenchOptions& o, const std::string& dir, SinkSummary& summary) {
  ObservationSettings settings = benchSettings(o, dir);
  const int64_t nrIntegrations = o.integrations;
  SinkOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  options.staging.capacityBytes = size_t(o.stagingMb * 1024 * 1024);
  options.msFlushSeconds = o.msFlushSeconds;
  const ObservationSecret secret = ObservationSecret::generate();
  options.secret = secret;
  const Handshake handshake(secret, uint64_t(settings.observationId), ConnectionPurpose::kStorage);
  options.tileWrites = o.tileWrites;
  CorrelatedData block(o.stations, o.channels);
  for (size_t i = 0; i < block.visibilities.size(); ++i)
    block.visibilities[i] = {float(i % 97), -float(i % 89)};
  for (uint32_t& n : block.validSamples) n = 3052;
  std::vector<uint8_t> bytes = block.serialise(uint64_t(settings.observationId));

  const auto created = Clock::now();
  StorageSink sink(std::move(settings), options);  // creates the MSs: timed on its own
  const double createSeconds = std::chrono::duration<double>(Clock::now() - created).count();
  const auto start = Clock::now();
  const double cpuAtStart = processCpuSeconds();
  auto run = std::async(std::launch::async, [&] { return sink.run(); });
  double senderCpu = threadCpuSeconds();
  SinkTimes times;
  {
    std::unique_ptr<Stream> stream = connectTcp("127.0.0.1", sink.port(), 10);
    handshake.proveToPeer(stream->fileDescriptor());
    const bool paced = o.pacedIntegrations > 0;
    double steadyStart = 0;
    for (int64_t i = 0; i < nrIntegrations; ++i) {
      if (paced) {  // integration i ends (and is sent) integrationSeconds after i - 1
        std::this_thread::sleep_until(
            start + std::chrono::duration_cast<Clock::duration>(
                        std::chrono::duration<double>(double(i + 1) * o.integrationSeconds)));
        if (i == o.warmUpIntegrations) steadyStart = sinkCpuSeconds();
      }
      for (int s = 0; s < o.subbands; ++s) {
        CorrelatedHeader header = CorrelatedHeader::read(bytes.data());
        header.subband = uint32_t(s);  // the subband index
        header.integration = uint64_t(i);
        header.write(bytes.data());  // the CRC covers the payload only
        stream->write(bytes.data(), bytes.size());
      }
    }
    if (paced) {
      waitUntilWritten(sink, run, uint64_t(nrIntegrations) * uint64_t(o.subbands));
      times.steadyCpu = sinkCpuSeconds() - steadyStart;
      times.writtenAfterLastSeconds = std::chrono::duration<double>(Clock::now() - start).count() -
                                      double(nrIntegrations) * o.integrationSeconds;
      times.steadyObservedSeconds =
          double(nrIntegrations - o.warmUpIntegrations) * o.integrationSeconds;
    }
    // The sink's replies are not read here: a plain close would reset the connection and
    // lose what the socket had not yet sent (the benchmark then waited for ever).
    if (!stream->finishWriting(600)) throw std::runtime_error("the sink took not every block");
  }
  senderCpu = threadCpuSeconds() - senderCpu;
  auto seconds = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  times.create = createSeconds;
  times.sent = seconds();
  summary = run.get();
  times.closed = seconds();
  syncFileSystem(dir);
  times.total = seconds();
  times.sinkCpu = processCpuSeconds() - cpuAtStart - senderCpu;
  return times;
}

/// Writes bytes sequentially in 1 MiB chunks, fsync, syncfs; returns the seconds.
double writeSequentially(const std::string& path, uint64_t bytes) {
  std::vector<char> chunk(1 << 20, 'v');
  const auto start = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  for (uint64_t done = 0; done < bytes;) {
    const size_t size = size_t(std::min<uint64_t>(chunk.size(), bytes - done));
    const ssize_t written = ::write(fd, chunk.data(), size);
    if (written <= 0) throw std::runtime_error(path + ": write failed: " + std::strerror(errno));
    done += uint64_t(written);
  }
  ::fsync(fd);
  ::close(fd);
  syncFileSystem(std::filesystem::path(path).parent_path());
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// Bytes of every file under dir.
uint64_t bytesOnDisk(const std::string& dir) {
  uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) bytes += entry.file_size();
  return bytes;
}

/// One case through the sink, best of two rounds (the disk is shared), with sequential
/// writes of the same visibility bytes and of the same bytes as the MSs hold in each round;
/// prints its figures under prefix. Every MS stays until the benchmark ends: on ext4
/// without a journal (this machine's root) a file created within minutes of many deletes
/// takes milliseconds of the kernel's time (it skips every recently freed inode), which
/// made creation 3 to 6 times slower after a case's MSs were removed. Returns the bytes per
/// second of the sequential write of the MSs' bytes (0 with --sink-only).
double runCase(const BenchOptions& o, const std::string& dir, const std::string& prefix,
               double requiredPerSecond) {
  const uint64_t visibilityBytes = uint64_t(o.integrations) * o.subbands * nrBaselines(o.stations) *
                                   o.channels * kNrPolarisationProducts * 8;
  double sequential = 1e30, sequentialMs = 1e30;
  SinkTimes sink;
  SinkSummary summary;
  uint64_t msBytes = 0;
  const int nrRounds = o.sinkOnly ? 1 : 2;
  for (int round = 0; round < nrRounds; ++round) {
    const std::string roundDir = dir + "/" + prefix + "round" + std::to_string(round);
    const SinkTimes times = writeThroughSink(o, roundDir, summary);
    if (times.total < sink.total) sink = times;
    msBytes = bytesOnDisk(roundDir);
    if (o.sinkOnly) continue;
    sequential = std::min(sequential, writeSequentially(dir + "/sequential.dat", visibilityBytes));
    std::filesystem::remove(dir + "/sequential.dat");
    sequentialMs = std::min(sequentialMs, writeSequentially(dir + "/sequential.dat", msBytes));
    std::filesystem::remove(dir + "/sequential.dat");
  }
  const double subbandIntegrations = double(o.integrations) * o.subbands;
  if (summary.blocksWritten != uint64_t(subbandIntegrations))
    throw std::runtime_error("the sink wrote " + std::to_string(summary.blocksWritten) + " blocks");
  printFigure(prefix + "stations", o.stations);
  printFigure(prefix + "channels", o.channels);
  printFigure(prefix + "subbands", o.subbands);
  printFigure(prefix + "integration_seconds", o.integrationSeconds);
  printFigure(prefix + "integrations", subbandIntegrations);
  printFigure(prefix + "visibility_bytes", double(visibilityBytes));
  // DATA plus WEIGHT_SPECTRUM, FLAG, UVW, ...: the MSs hold more than the visibilities.
  printFigure(prefix + "ms_bytes", double(msBytes));
  if (!o.sinkOnly) {
    printFigure(prefix + "fraction_of_sequential_write", sequential / sink.total);
    // The same bytes as the MSs hold (DATA, WEIGHT_SPECTRUM, FLAG, ... and the subtables).
    printFigure(prefix + "fraction_of_sequential_write_of_ms_bytes", sequentialMs / sink.total);
  }
  printFigure(prefix + "create_seconds", sink.create);
  printFigure(prefix + "sink_seconds", sink.total);
  printFigure(prefix + "sink_cpu_seconds", sink.sinkCpu);
  // Receiving, checking, staging, converting and writing, per CPU second of the sink.
  const double perCore = subbandIntegrations / sink.sinkCpu;
  printFigure(prefix + "subband_integrations_per_cpu_second", perCore);
  // How many times over one core keeps up with the observation in real time.
  printFigure(prefix + "realtime_headroom_per_core", perCore / requiredPerSecond);
  printFigure(prefix + "sink_last_block_sent_seconds", sink.sent);
  printFigure(prefix + "sink_written_and_closed_seconds", sink.closed);
  printFigure(prefix + "sink_sync_seconds", sink.total - sink.closed);
  if (!o.sinkOnly) {
    printFigure(prefix + "sequential_seconds", sequential);
    printFigure(prefix + "sequential_ms_bytes_seconds", sequentialMs);
  }
  printFigure(prefix + "staging_high_water_fraction",
              double(summary.stagingHighWaterBytes) / double(summary.stagingCapacityBytes));
  return o.sinkOnly ? 0 : double(msBytes) / sequentialMs;
}

/// The case sent in real time (pacedIntegrations of them, one each integrationSeconds):
/// the sink's CPU seconds per observed second once warmed up (first writes, one MS flush
/// interval), periodic flushes included, closing not: what one core must give a long
/// observation. Its MSs stay until the end (deleting them would slow the next creation).
/// sequentialBytesPerSecond (0: not measured): the disk's, to which the MS bytes an observed
/// second needs are compared; a disk slower than that leaves the sink behind real time,
/// whatever its CPU.
void runPaced(const BenchOptions& base, const std::string& dir, const std::string& prefix,
              double sequentialBytesPerSecond) {
  BenchOptions o = base;
  o.integrations = o.pacedIntegrations;
  if (o.warmUpIntegrations >= o.integrations)
    throw std::invalid_argument("--paced-integrations must exceed the " +
                                std::to_string(o.warmUpIntegrations) + " of the warm-up");
  SinkSummary summary;
  const std::string pacedDir = dir + "/" + prefix + "paced";
  const SinkTimes times = writeThroughSink(o, pacedDir, summary);
  if (summary.blocksWritten != uint64_t(o.integrations) * uint64_t(o.subbands))
    throw std::runtime_error("the paced sink wrote " + std::to_string(summary.blocksWritten) +
                             " blocks");
  const double cpuPerSecond = times.steadyCpu / times.steadyObservedSeconds;
  printFigure(prefix + "paced_integrations", o.integrations);
  printFigure(prefix + "paced_observed_seconds_measured", times.steadyObservedSeconds);
  printFigure(prefix + "paced_cpu_seconds_per_observed_second", cpuPerSecond);
  printFigure(prefix + "paced_realtime_headroom_per_core", 1 / cpuPerSecond);
  printFigure(prefix + "paced_written_seconds_after_last_integration",
              times.writtenAfterLastSeconds);
  const double msBytesPerSecond =
      double(bytesOnDisk(pacedDir)) / (double(o.integrations) * o.integrationSeconds);
  printFigure(prefix + "paced_ms_bytes_per_observed_second", msBytesPerSecond);
  if (sequentialBytesPerSecond > 0)
    printFigure(prefix + "paced_disk_headroom", sequentialBytesPerSecond / msBytesPerSecond);
}

/// Seconds to make n MSs ready (created and opened), against copying the same files.
void runCreation(const BenchOptions& base, int n, const std::string& dir) {
  BenchOptions o = base;
  o.subbands = n;
  o.integrations = 1;
  SinkSummary summary;
  const SinkTimes times = writeThroughSink(o, dir + "/create", summary);
  printFigure("storage.create_measurement_sets", n);
  printFigure("storage.create_seconds", times.create);
  // The floor this file system sets: copying one MS's files n times (cp -r).
  const std::string one =
      dir + "/create/" + ObservationSettings::defaultFilename(99, 0, 0);  // beam 0, subband index 0
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i)
    std::filesystem::copy(one, dir + "/copies/" + std::to_string(i) + ".MS",
                          std::filesystem::copy_options::recursive);
  const double copy = std::chrono::duration<double>(Clock::now() - start).count();
  printFigure("storage.create_file_copy_seconds", copy);
  printFigure("storage.create_fraction_of_file_copy", copy / times.create);
}

int storageBenchmark(int argc, char** argv) {
  // The two cases: LOFAR-like (488 subbands, 24 stations, 64 channels, 1 s) and short
  // integrations (488 subbands, 1 station, 16 channels, 5 ms); --stations etc. run one case.
  // 10 s of the LOFAR-like case: one interval of the sink's MS flushes (--ms-flush-interval),
  // so that each MS's flush weighs as in a long observation (its first write weighs more);
  // 1 s of the short one, as the IE613 capture at 5.2 ms.
  BenchOptions lofar{24, 64, 10, 488, 1, 256, "/tmp"};
  lofar.pacedIntegrations = 30;  // and 30 s in real time
  BenchOptions shortCase{1, 16, 200, 488, 0.005, 256, "/tmp"};
  BenchOptions custom = lofar;
  custom.pacedIntegrations = 0;  // one case: paced only when asked
  bool customCase = false;
  int createCount = 100;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " needs a value");
      return argv[++i];
    };
    customCase |= arg == "--stations" || arg == "--channels" || arg == "--integrations" ||
                  arg == "--subbands" || arg == "--integration-seconds";
    if (arg == "--stations")
      custom.stations = std::stoi(value());
    else if (arg == "--channels")
      custom.channels = std::stoi(value());
    else if (arg == "--integrations")
      custom.integrations = std::stoi(value());
    else if (arg == "--subbands")
      custom.subbands = std::stoi(value());
    else if (arg == "--integration-seconds")
      custom.integrationSeconds = std::stod(value());
    else if (arg == "--lofar-integrations")
      lofar.integrations = std::stoi(value());
    else if (arg == "--short-integrations")
      shortCase.integrations = std::stoi(value());
    else if (arg == "--create")
      createCount = std::stoi(value());
    else if (arg == "--staging-mb")
      custom.stagingMb = lofar.stagingMb = shortCase.stagingMb = std::stod(value());
    else if (arg == "--dir")
      custom.dir = lofar.dir = shortCase.dir = value();
    else if (arg == "--ms-flush-interval")
      custom.msFlushSeconds = lofar.msFlushSeconds = shortCase.msFlushSeconds = std::stod(value());
    else if (arg == "--paced-integrations")
      custom.pacedIntegrations = lofar.pacedIntegrations = std::stoi(value());
    else if (arg == "--tile-writes")
      custom.tileWrites = lofar.tileWrites = shortCase.tileWrites = tileWrites(value());
    else if (arg == "--sink-only")
      custom.sinkOnly = lofar.sinkOnly = shortCase.sinkOnly = true;
    else if (arg == "--help") {
      std::printf(
          "rtcp-bench storage [--lofar-integrations 10] [--short-integrations 200] [--create 100]\n"
          "                   [--staging-mb 256] [--dir /tmp] [--sink-only]\n"
          "                   [--ms-flush-interval 10] [--paced-integrations 30]\n"
          "                   [--tile-writes direct|casacore|buffered]\n"
          "rtcp-bench storage --stations S --channels C --integrations N --subbands B\n"
          "                   [--integration-seconds T]   (one case only)\n"
          "--sink-only: one round through the sink, no sequential writes (for profiling)\n"
          "--paced-integrations N: N integrations more, sent in real time, for the CPU\n"
          "  seconds per observed second after a warm-up of 10 (LOFAR-like case; 0: none)\n"
          "--tile-writes: the MS's tiled columns straight into their files (direct, in a\n"
          "  build with the fast path) or through casacore's put, with its tile cache\n"
          "  (casacore) or its buffered tile access (buffered)\n");
      return 0;
    } else
      throw std::invalid_argument("unknown argument " + arg);
  }
  std::string dir = lofar.dir + "/rtcp-bench-storage-XXXXXX";
  if (!mkdtemp(dir.data())) throw std::runtime_error(dir + ": mkdtemp failed");
  std::filesystem::create_directories(dir + "/copies");
  if (customCase) {
    const double disk =
        runCase(custom, dir, "storage.", custom.subbands / custom.integrationSeconds);
    if (custom.pacedIntegrations > 0) runPaced(custom, dir, "storage.", disk);
  } else {
    const double disk =
        runCase(lofar, dir, "storage.lofar.", lofar.subbands / lofar.integrationSeconds);
    if (lofar.pacedIntegrations > 0) runPaced(lofar, dir, "storage.lofar.", disk);
    runCase(shortCase, dir, "storage.short.", shortCase.subbands / shortCase.integrationSeconds);
    runCreation(shortCase, createCount, dir);
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace

RTCP_REGISTER_BENCHMARK(
    "storage", "MS write speed through storage-sink vs a sequential write; staging high-water mark",
    storageBenchmark);

}  // namespace rtcp::storage
