#include "CorrelatorMain.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/program_options.hpp>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <stop_token>
#include <thread>

#include "CorrelatorPipeline.h"
#include "LinkClient.h"
#include "rtcp/CommandLine.h"
#include "rtcp/Files.h"
#include "rtcp/Handshake.h"
#include "rtcp/Integrations.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSecret.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/RankStatus.h"
#include "rtcp/WallClock.h"

namespace rtcp::correlator {
namespace {

namespace po = boost::program_options;

/// The pre-correlation flagging's final lines: per station the fraction of the samples
/// that arrived which were flagged (and the counts, which observe adds up over the ranks:
/// observe/FlaggingReport.h), and the subband-blocks flagged whole as broken.
std::vector<std::string> flaggingReport(const ObservationSettings& settings,
                                        const std::vector<StationFlagTotals>& totals) {
  std::vector<std::string> lines;
  if (totals.empty()) return lines;
  std::ostringstream flagged, broken;
  flagged << "pre-correlation flagging: flagged of the samples that arrived:";
  for (size_t s = 0; s < totals.size(); ++s) {
    const StationFlagTotals& t = totals[s];
    flagged << (s ? ", " : " ") << settings.stations[s].name << " " << std::fixed
            << std::setprecision(2)
            << (t.validSamples ? 100.0 * double(t.flaggedSamples) / double(t.validSamples) : 0.0)
            << " % (" << t.flaggedSamples << " of " << t.validSamples << ")";
    if (t.brokenNoSignal + t.brokenInterference > 0)
      broken << (broken.tellp() > 0 ? "; " : "") << settings.stations[s].name << " in "
             << t.brokenNoSignal + t.brokenInterference << " of " << t.subbandBlocks
             << " subband-blocks (" << t.brokenNoSignal << " no signal, " << t.brokenInterference
             << " only interference)";
  }
  lines.push_back(flagged.str());
  if (broken.tellp() > 0) lines.push_back("broken stations, flagged whole: " + broken.str());
  return lines;
}

struct Options {
  std::string parset;
  std::vector<std::string> ionprocs;  ///< empty: the local mode; the first gets the output
  std::string secretFile;
  bool noSharedLink = false;
  std::string exchange = "auto";
  int threads = 0;
  int queueBlocks = 2;
  std::string status;  ///< --status: file pattern (%r: the rank) or '-'
};

std::optional<Options> parseOptions(int argc, char** argv, bool printHelp, LocalMode* local) {
  Options o;
  po::options_description visible("usage: mpirun -np N correlator PARSET [options]\n\noptions");
  visible.add_options()("help,h", "this help")(
      "secret-file", po::value(&o.secretFile),
      "the observation's secret, with which each connection to ionproc proves it belongs to "
      "the observation (a file of mode 0600, as observe writes it; '-': rank 0 reads it from "
      "the first line of standard input, before the parset); required with --ionproc")(
      "ionproc", po::value(&o.ionprocs),
      "fetch station blocks from ionproc at tcp:HOST:PORT or unix:PATH; repeat it for one ionproc "
      "per input host (each station from the one serving it); visibilities go to the first")(
      "no-shared-link", po::bool_switch(&o.noSharedLink),
      "fetch station blocks over the socket also from an ionproc on this host (unix:), not "
      "lent in its shared memory")(
      "exchange", po::value(&o.exchange),
      "how the ranks get every station of their subbands: auto (no exchange when every "
      "station is lent from an ionproc on this host: each rank takes its own subbands of "
      "every station there; else MPI-3 shared memory when every rank is on one node, else "
      "MPI messages), shared (fetch own stations, exchange in MPI-3 shared memory when on "
      "one node) or messages (default auto)")(
      "threads", po::value(&o.threads),
      "signal-chain threads per rank (default: the node's cores / its ranks)")(
      "queue-blocks", po::value(&o.queueBlocks),
      "exchanged blocks that may wait for processing (default 2)")(
      "status", po::value(&o.status),
      "each rank rewrites this file once a second with its progress, real-time factor and "
      "time per step (rtcp/RankStatus.h; %r in the name: the rank); '-': prints it as one "
      "'rtcp-rank-status' line a second on standard output (for observe across hosts)");
  if (local) local->addOptions(visible);
  const std::string about =
      "\nionproc reads the stations and integrates; the ranks correlate.\n"
      "PARSET '-': rank 0 reads the parset from standard input (mpiexec forwards it to\n"
      "rank 0 only) and gives it to the other ranks.\n";
  if (!parseCommandLine(argc, argv, visible, "PARSET", o.parset, about, nullptr, printHelp))
    return std::nullopt;
  if (local)
    local->check(!o.ionprocs.empty());
  else if (o.ionprocs.empty())
    throw po::error("--ionproc is required");
  if (o.secretFile.empty() && !o.ionprocs.empty())
    throw po::error(
        "--secret-file is required: ionproc takes only connections that prove they belong to "
        "the observation");
  if (o.queueBlocks < 1) throw po::error("--queue-blocks must be at least 1");
  if (o.exchange != "auto" && o.exchange != "shared" && o.exchange != "messages")
    throw po::error("--exchange must be auto, shared or messages, not '" + o.exchange + "'");
  if (o.threads < 0) throw po::error("--threads must not be negative");
  return o;
}

/// Block sets in flight up to which ranks lend their subbands from ionproc (its segment
/// holds that many blocks' shares of every station per rank).
constexpr int kMostLentSets = 4;

std::vector<int> allStations(const ObservationSettings& settings) {
  std::vector<int> stations(size_t(settings.nrStations()));
  for (int s = 0; s < settings.nrStations(); ++s) stations[size_t(s)] = s;
  return stations;
}

/// The node's cores shared by the ranks on it.
int defaultThreads() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ranksOnNode = 1;
  MPI_Comm_size(node, &ranksOnNode);
  MPI_Comm_free(&node);
  return std::max(1, int(std::thread::hardware_concurrency()) / ranksOnNode);
}

/// The parset of every rank: from the file, or ("-") read by rank 0 from standard input
/// and broadcast, since mpiexec forwards standard input to rank 0 alone.
ObservationSettings readSettings(const std::string& path, int rank) {
  if (path != "-") return ObservationSettings::fromFile(path);
  std::string text;
  if (rank == 0) {
    std::ostringstream in;
    in << std::cin.rdbuf();
    text = in.str();
  }
  unsigned long long size = text.size();
  MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  text.resize(size_t(size));
  MPI_Bcast(text.data(), int(size), MPI_CHAR, 0, MPI_COMM_WORLD);
  return ObservationSettings::fromText(text, "<standard input>",
                                       std::filesystem::current_path().string());
}

/// The observation's secret of every rank: from the file, or ("-") read by rank 0 from the
/// first line of standard input and broadcast; none without --secret-file.
std::optional<ObservationSecret> readSecret(const std::string& path, int rank) {
  if (path.empty()) return std::nullopt;
  if (path != "-") return ObservationSecret::readFile(path);
  std::array<uint8_t, ObservationSecret::kSize> bytes{};
  if (rank == 0) {
    const ObservationSecret secret = ObservationSecret::readFile("-");
    std::copy(secret.bytes().begin(), secret.bytes().end(), bytes.begin());
  }
  MPI_Bcast(bytes.data(), int(bytes.size()), MPI_BYTE, 0, MPI_COMM_WORLD);
  const ObservationSecret secret = ObservationSecret::fromBytes(bytes);
  std::fill(bytes.begin(), bytes.end(), 0);
  return secret;
}

/// A rank's --status while its pipeline runs: once a second, and once more at the end.
class RankStatusWriter {
 public:
  RankStatusWriter(const Options& options, const ObservationSettings& settings,
                   const CorrelatorPipeline& pipeline, int rank)
      : target_(options.status == "-" ? "-" : rankStatusPath(options.status, rank)),
        settings_(settings),
        pipeline_(pipeline),
        rank_(rank) {
    if (options.status.empty()) return;
    char name[256] = {};
    gethostname(name, sizeof name - 1);
    host_ = name;
    thread_ = std::jthread([this](std::stop_token stop) {
      std::mutex mutex;
      std::condition_variable_any tick;
      for (std::unique_lock lock(mutex); !stop.stop_requested();) {
        write(false);
        tick.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
      }
    });
  }
  /// The final status (finished).
  void finish() {
    if (!thread_.joinable()) return;
    thread_.request_stop();
    thread_.join();
    write(true);
  }

 private:
  void write(bool finished) {
    const CorrelatorPipeline::Progress progress = pipeline_.progress();
    RankStatus status;
    status.rank = rank_;
    status.host = host_;
    status.wallTime = wallClock();
    status.finished = finished;
    status.blocks = progress.blocks;
    status.nrBlocks = nrProcessedBlocks(settings_);
    status.subbandBlocks = progress.subbandBlocks;
    status.processingSeconds = progress.processingSeconds;
    status.blockDuration = settings_.blockDuration();
    for (size_t i = 0; i < progress.steps.size(); ++i) {
      status.steps.push_back(progress.steps.name(i));
      status.stepSeconds.push_back(progress.steps.seconds(i));
      status.stepCalls.push_back(progress.steps.calls(i));
    }
    for (const auto& [tab, power] : progress.tabPower) {
      status.tabs.push_back("SAP" + std::to_string(tab.first) + " TAB" +
                            std::to_string(tab.second));
      status.tabPower.push_back(power);
    }
    status.tabBlock = progress.tabBlock;
    try {
      if (target_ == "-")
        std::cout << status.formatLine() << std::endl;  // flushed: mpiexec forwards it now
      else
        writeFileAtomically(target_, status.format());
    } catch (const std::exception& e) {  // the console's alone: not the observation's
      static RateLimiter limiter(60);
      if (limiter.allow()) RTCP_LOG_WARN("correlator", "cannot write the status: " << e.what());
    }
  }

  std::string target_;
  const ObservationSettings& settings_;
  const CorrelatorPipeline& pipeline_;
  int rank_;
  std::string host_;
  std::jthread thread_;
};

int run(const Options& options, int rank, int nrRanks, LocalMode* local) {
  const std::optional<ObservationSecret> secret = readSecret(options.secretFile, rank);
  const ObservationSettings settings = readSettings(options.parset, rank);
  if (rank == 0) settings.logReport("correlator");
  const int threads = options.threads > 0 ? options.threads : defaultThreads();

  std::unique_ptr<StationBlockFetcher> fetcher;
  std::unique_ptr<VisibilityOutput> output;
  const WorkDistribution distribution = WorkDistribution::forObservation(nrRanks, settings);
  if (!options.ionprocs.empty()) {
    // One link connection per thread that talks to an ionproc: core 0 fetches (from
    // every ionproc), core 1 sends (to the first).
    // An ionproc reached over a unix socket runs on this host: its station blocks are
    // lent in shared memory (unless --no-shared-link).
    const Handshake handshake(*secret, settings.observationId, ConnectionPurpose::kLink);
    std::vector<std::shared_ptr<ion::LinkClient>> links;
    std::vector<bool> sameHost;
    for (const std::string& ionproc : options.ionprocs) {
      const ion::LinkEndpoint endpoint = ion::LinkEndpoint::parse(ionproc);
      links.push_back(std::make_shared<ion::LinkClient>(endpoint, rank, 0, handshake));
      sameHost.push_back(!options.noSharedLink && endpoint.kind == ion::LinkEndpoint::Kind::kUnix);
    }
    // Every station lent from this host: each rank takes its own subbands of every
    // station, and ionproc's slots hold a rank's share for each block set in flight.
    std::optional<LinkFetcher::SubbandSlots> subbandSlots;
    if (options.exchange == "auto" && options.queueBlocks <= kMostLentSets &&
        nrRanks <= settings.nrSubbands() &&
        std::all_of(sameHost.begin(), sameHost.end(), [](bool b) { return b; }))
      subbandSlots = LinkFetcher::SubbandSlots{
          nrRanks * options.queueBlocks * settings.nrStations(), distribution.maxSubbandsPerRank()};
    fetcher = std::make_unique<LinkFetcher>(
        std::move(links), settings,
        subbandSlots ? allStations(settings) : distribution.stationsOf(rank), sameHost,
        subbandSlots);
    output = std::make_unique<LinkOutput>(std::make_shared<ion::LinkClient>(
        ion::LinkEndpoint::parse(options.ionprocs.front()), rank, 1, handshake));
  } else {
    fetcher = local->fetcher(settings, distribution.stationsOf(rank));
    output = local->output(settings, rank);
  }

  CorrelatorPipeline pipeline(
      settings, MPI_COMM_WORLD, *fetcher, *output,
      CorrelatorPipeline::Options{options.queueBlocks, threads, options.exchange != "messages",
                                  options.exchange == "auto"});
  RTCP_LOG_INFO("correlator",
                "rank " << rank << " of " << nrRanks << ": stations "
                        << (pipeline.lendsSubbands() ? settings.nrStations()
                                                     : int(distribution.stationsOf(rank).size()))
                        << ", up to " << distribution.maxSubbandsPerRank()
                        << " subbands per block, " << threads << " threads, "
                        << nrProcessedBlocks(settings) << " blocks; exchange "
                        << pipeline.exchangeDescription());
  RankStatusWriter status(options, settings, pipeline, rank);
  pipeline.run();
  status.finish();

  const CorrelatorPipeline::Statistics& st = pipeline.statistics();
  const double perSubbandBlock =
      st.subbandBlocks ? st.processingSeconds / double(st.subbandBlocks) : 0;
  // Real-time factor: observed time over the time this rank needed for its share.
  const double realTimeFactor =
      st.processingSeconds > 0 ? double(st.blocks) * settings.blockDuration() / st.processingSeconds
                               : 0;
  RTCP_LOG_INFO(
      "correlator",
      "rank " << rank << ": " << st.blocks << " blocks, " << st.subbandBlocks
              << " subband-blocks processed, mean " << perSubbandBlock
              << " s per subband-block, real-time factor " << realTimeFactor << "; waited "
              << st.fetchSeconds << " s for input and " << st.exchangeWaitSeconds
              << " s for the other ranks; exchanged " << st.bytesExchanged / 1e6 << " MB in "
              << st.exchangeSeconds << " s ("
              << (st.exchangeSeconds > 0 ? st.bytesExchanged / st.exchangeSeconds / 1e9 : 0)
              << " GB/s)");
  RTCP_LOG_INFO("correlator", "rank " << rank << ": steps: " << st.steps.report());
  if (st.leadInBlocks > 0)
    RTCP_LOG_INFO("correlator", "rank " << rank << ": beam former's lead-in: " << st.leadInBlocks
                                        << " blocks before the start, written nowhere, in "
                                        << st.leadInSeconds << " s");
  if (st.beamFormedSubbandBlocks > 0)
    RTCP_LOG_INFO("correlator", "rank "
                                    << rank << ": beam former: " << st.beamFormedSubbandBlocks
                                    << " subband-blocks, steps: " << st.beamFormerSteps.report());
  for (const std::string& line : flaggingReport(settings, st.beamFormerFlags))
    RTCP_LOG_INFO("correlator", "rank " << rank << ": beam former's " << line);
  for (const std::string& line : flaggingReport(settings, st.flags)) {
    if (line.starts_with("broken"))
      RTCP_LOG_WARN("correlator", "rank " << rank << ": " << line);
    else
      RTCP_LOG_INFO("correlator", "rank " << rank << ": " << line);
  }
  RTCP_LOG_INFO("correlator", "rank " << rank << ": queues: " << pipeline.queueReport());
  RTCP_LOG_INFO("correlator", "rank " << rank << ": input: " << fetcher->summary());
  RTCP_LOG_INFO("correlator", "rank " << rank << ": output: " << output->summary());
  return 0;
}

}  // namespace

int correlatorMain(int argc, char** argv, LocalMode* local) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, nrRanks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nrRanks);
  Logger::setProcessName("correlator[" + std::to_string(rank) + "]");

  int status = 0;
  try {
    std::optional<Options> options = parseOptions(argc, argv, rank == 0, local);
    if (!options) {
      MPI_Finalize();
      return 0;
    }
    if (provided < MPI_THREAD_FUNNELED)
      throw std::runtime_error("the MPI library does not support MPI_THREAD_FUNNELED");
    status = run(*options, rank, nrRanks, local);
  } catch (const po::error& e) {
    if (rank == 0)
      std::cerr << "correlator: " + std::string(e.what()) + " (see --help)\n" << std::flush;
    MPI_Abort(MPI_COMM_WORLD, 2);
  } catch (const std::exception& e) {
    // One line in one write (MPI_Abort may take the process down before a second reaches
    // mpirun), marked ERROR: observe reports a failed rank's last ERROR line as the cause.
    RTCP_LOG_ERROR("correlator", "rank " << rank << ": " << e.what());
    // mpirun forwards the line asynchronously, and MPI_Abort tears its proxies down: give
    // it time to arrive (it was lost in 2 of 6 test runs).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    // The other ranks may wait in an exchange with this one: take them down too.
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return status;
}

}  // namespace rtcp::correlator
