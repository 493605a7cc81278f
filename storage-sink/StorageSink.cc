#include "StorageSink.h"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <set>

#include "BlockReceiver.h"
#include "FileSystemSync.h"
#include "MeasurementSetTemplate.h"
#include "ParallelFor.h"
#include "rtcp/Files.h"
#include "rtcp/Logger.h"
#include "rtcp/WallClock.h"

namespace rtcp::storage {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

/// Threads that close the MSs: mostly waiting for fsyncs.
constexpr int kClosingThreads = 8;

/// An open MS holds about 25 files open (casacore's storage managers and tables, the tile
/// files and their direct-I/O twins): hundreds of MSs need more than the usual soft limit
/// of 1024, so it is raised to the hard limit.
void raiseOpenFileLimit(size_t nrMeasurementSets) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    RTCP_LOG_WARN("storage",
                  "cannot raise the open-file limit for " << nrMeasurementSets << " MSs");
}

}  // namespace

void SinkSummary::log() const {
  RTCP_LOG_INFO("storage", "summary: stopped (" << stopReason << "); " << blocksReceived
                                                << " blocks received, " << blocksWritten
                                                << " written, " << bytesReceived
                                                << " bytes received");
  for (int r = 1; r < kNrBlockRejects; ++r)
    if (rejected[size_t(r)])
      RTCP_LOG_INFO("storage", "summary: rejected " << rejected[size_t(r)]
                                                    << " blocks: " << toString(BlockReject(r)));
  for (const Output& out : outputs)
    RTCP_LOG_INFO("storage", "summary: " << out.path << " (subband " << out.subband
                                         << "): " << out.gridSize << " integrations, "
                                         << out.missing << " missing (flagged), "
                                         << out.bytesWritten << " bytes written");
  if (connectionsRefused)
    RTCP_LOG_ERROR("storage", "summary: " << connectionsRefused
                                          << " connections refused: they did not prove they "
                                             "belong to the observation (peers above)");
  if (blocksDuplicated)
    RTCP_LOG_ERROR("storage", "summary: " << blocksDuplicated
                                          << " blocks for integrations already written (the "
                                             "first kept; sources above)");
  if (integrationsLost)
    RTCP_LOG_ERROR("storage", "summary: " << integrationsLost
                                          << " integrations received could not be written ("
                                          << error << ")");
  for (const BeamFormedFileReport& file : beamFormedFiles)
    RTCP_LOG_INFO("storage", "summary: " << file.path << ": " << file.blocks << " of "
                                         << beamFormedBlocksExpected << " blocks written, "
                                         << file.subbandBlocksLost << " subband-blocks lost, "
                                         << file.subbandBlocksLate << " late, " << file.rows
                                         << " samples, " << file.bytes << " bytes written in "
                                         << file.writeSeconds << " s, synced " << file.syncs
                                         << " times while written");
  if (beamFormedRejected)
    RTCP_LOG_ERROR("storage", "summary: " << beamFormedRejected
                                          << " beam-formed blocks rejected (reasons above)");
  RTCP_LOG_INFO("storage", "summary: staging high-water mark " << stagingHighWaterBytes << " of "
                                                               << stagingCapacityBytes << " bytes");
}

std::string listenHost(const ObservationSettings& settings,
                       const std::vector<SubbandOutput>& outputs) {
  std::set<std::string> named;  // the location hosts of the outputs that are this host's
  for (const SubbandOutput& out : outputs) {
    const std::string& host = settings.correlatedOutput.hosts.at(size_t(out.subbandIndex));
    if (isLocalHost(host)) named.insert(host);
  }
  for (const BeamFormedFile& file : settings.beamFormed.files)
    if (isLocalHost(file.host)) named.insert(file.host);
  const auto loopback = [](const std::string& h) {
    return h.empty() || h == "localhost" || h == "127.0.0.1";
  };
  if (std::all_of(named.begin(), named.end(), loopback)) return "127.0.0.1";
  if (named.size() == 1) return *named.begin();
  std::string names;
  for (const std::string& h : named) names += (names.empty() ? "" : ", ") + h;
  throw std::runtime_error("the output locations name this host in several ways (" + names +
                           "): give --host, the address the senders reach");
}

StorageSink::StorageSink(ObservationSettings settings, SinkOptions options)
    : settings_(std::move(settings)), options_(std::move(options)) {
  if (!options_.secret)
    throw std::runtime_error(
        "no observation secret (--secret-file): storage-sink takes blocks only over "
        "connections that prove they belong to the observation");
  handshake_ = std::make_unique<Handshake>(*options_.secret, settings_.observationId,
                                           ConnectionPurpose::kStorage);
  outputs_ = localOutputs(settings_, options_.all, options_.locationHost);
  if (options_.host.empty())
    options_.host =
        options_.locationHost.empty() ? listenHost(settings_, outputs_) : options_.locationHost;
  openBeamFormedFiles();
  raiseOpenFileLimit(outputs_.size());
  std::map<uint32_t, int> subbandToOutput;
  for (size_t o = 0; o < outputs_.size(); ++o)
    subbandToOutput[uint32_t(outputs_[o].subbandIndex)] = int(o);
  validator_ = std::make_unique<BlockValidator>(settings_, std::move(subbandToOutput));
  const int writerThreads = options_.writerThreads > 0
                                ? options_.writerThreads
                                : int(std::max(1u, std::thread::hardware_concurrency()));
  staging_ = std::make_unique<StagingArea>(int(outputs_.size()), validator_->payloadSize(),
                                           options_.staging, writerThreads);
  missing_ = std::make_unique<std::atomic<int64_t>[]>(outputs_.size());
  durable_ = std::make_unique<DurableMarks>(int(outputs_.size()));
  if (!options_.statusPath.empty())
    statusThread_ = std::jthread([this](std::stop_token stop) { reportStatus(stop); });
  const auto antennaFields = describeAntennaFields(settings_);  // once for all the MSs
  std::vector<MeasurementSetDescription> descriptions;
  std::vector<std::string> paths;
  std::vector<bool> existed;  // [output]: made by an earlier run, reopened
  for (const SubbandOutput& out : outputs_) {
    descriptions.push_back(describeMeasurementSet(settings_, out.subbandIndex, antennaFields));
    descriptions.back().runId = options_.secret->runId();
    paths.push_back(out.path);
    existed.push_back(std::filesystem::exists(out.path));
  }
  // The reserve first: whatever else fills the disk, the MSs can be closed.
  const int nrStations = int(validator_->nrStations()), nrChannels = int(validator_->nrChannels());
  diskSpace_ = std::make_unique<DiskSpace>(
      paths, settings_.observationId, msIntegrationBytes(nrStations, nrChannels),
      msTileBytes(nrStations, nrChannels), options_.diskReserveBytes);
  // The staging buffers are touched while the MSs are made (that mostly waits for the file
  // system), as many as the observation can fill.
  std::jthread preallocating([this] {  // joined on every way out
    staging_->preallocate(size_t(validator_->nrIntegrations()) * outputs_.size());
  });
  writers_.resize(outputs_.size());
  gridAtOpen_.assign(outputs_.size(), 0);
  ready_ = std::make_unique<std::atomic<bool>[]>(outputs_.size());
  const int port = options_.port >= 0 ? options_.port : settings_.correlatedOutput.storagePort;
  // A restart's MSs are reopened first, before any writer runs (reopened on the preparing
  // thread beside the writers, a restarted sink was once seen dying with a corrupted heap
  // in ~Table).
  for (size_t o = 0; o < outputs_.size(); ++o)
    if (existed[o]) openWriter(o, descriptions[o], paths[o], true);
  if (options_.createWhileListening) {
    preallocating.join();
    listener_ = std::make_unique<TcpListener>(options_.host, uint16_t(port));  // may throw
    preparing_ = std::thread([this, descriptions = std::move(descriptions),
                              paths = std::move(paths), existed = std::move(existed)] {
      try {
        prepareMeasurementSets(descriptions, paths, existed);
      } catch (const std::exception& e) {
        {
          std::lock_guard lock(errorMutex_);
          if (error_.empty())
            error_ = std::string("making the MeasurementSets failed: ") + e.what();
        }
        RTCP_LOG_ERROR("storage", "making the MeasurementSets failed: " << e.what());
        failed_ = true;
        {
          std::lock_guard lock(readyMutex_);
          preparingFailed_ = true;
        }
        readyCondition_.notify_all();
        requestStop("making the MeasurementSets failed");
      }
    });
  } else {
    prepareMeasurementSets(descriptions, paths, existed);
    preallocating.join();
    listener_ = std::make_unique<TcpListener>(options_.host, uint16_t(port));
  }
  listening_ = true;
  RTCP_LOG_INFO("storage",
                "run " << options_.secret->runId() << ": listening on " << options_.host << " port "
                       << listener_->port() << " for " << outputs_.size()
                       << " subbands of observation " << settings_.observationId << " ("
                       << validator_->nrIntegrations() << " integrations each)"
                       << (beamFormed_ ? " and " + std::to_string(beamFormed_->nrFiles()) +
                                             " beam-formed files"
                                       : ""));
}

void StorageSink::openBeamFormedFiles() {
  std::vector<BeamFormedWriter::Target> targets;
  const std::vector<BeamFormedFile>& files = settings_.beamFormed.files;
  for (size_t f = 0; f < files.size(); ++f)
    if (options_.all || storedHere(files[f].host, options_.locationHost)) {
      targets.push_back({int(f), files[f].directory});
      if (!files[f].directory.empty()) std::filesystem::create_directories(files[f].directory);
    }
  if (targets.empty()) return;
  beamFormed_ = std::make_unique<BeamFormedWriter>(
      settings_, targets, 4,
      [this] {
        if (allArrived()) requestStop("every integration and beam-formed block arrived");
      },
      options_.secret->runId());
  beamFormedIngest_ = std::make_unique<BeamFormedIngest>(settings_, *beamFormed_);
}

StorageSink::~StorageSink() {
  if (preparing_.joinable()) preparing_.join();  // run() not called: the thread still ends
}

void StorageSink::openWriter(size_t o, const MeasurementSetDescription& description,
                             const std::string& path, bool existed) {
  auto writer =
      std::make_unique<MeasurementSetWriter>(description, path, !existed, options_.tileWrites);
  integrationsWritten_ += writer->nrWritten();
  missing_[o] = writer->nrMissing();
  if (existed) integrationsAtStart_ += writer->nrWritten();
  gridAtOpen_[o] = writer->gridSize();
  writers_[o] = std::move(writer);
  {
    std::lock_guard lock(readyMutex_);
    ready_[o] = true;
  }
  readyCondition_.notify_all();
  ++measurementSetsReady_;
}

void StorageSink::prepareMeasurementSets(const std::vector<MeasurementSetDescription>& descriptions,
                                         const std::vector<std::string>& paths,
                                         const std::vector<bool>& existed) {
  const auto creating = Clock::now();
  const std::clock_t cpuCreating = std::clock();  // the process's CPU time (every thread)
  // Each MS is opened as soon as it is made (its writer may write at once)...
  createMeasurementSets(
      descriptions, paths, [this](int made) { measurementSetsCreated_ = made; },
      [&](size_t o) {
        if (options_.createWhileListening) openWriter(o, descriptions[o], paths[o], false);
      });
  // ... or, all made, one after another.
  if (!options_.createWhileListening)
    for (size_t o = 0; o < outputs_.size(); ++o)
      if (!existed[o]) openWriter(o, descriptions[o], paths[o], false);
  RTCP_LOG_INFO("storage", "MSs created and opened for writing in "
                               << std::chrono::duration<double>(Clock::now() - creating).count()
                               << " s (" << double(std::clock() - cpuCreating) / CLOCKS_PER_SEC
                               << " CPU s of the process"
                               << (options_.createWhileListening ? ", while listening" : "")
                               << ")");
}

bool StorageSink::waitUntilReady(int output) {
  if (ready_[size_t(output)]) return true;
  std::unique_lock lock(readyMutex_);
  readyCondition_.wait(lock, [&] { return ready_[size_t(output)] || preparingFailed_; });
  return ready_[size_t(output)];
}

void StorageSink::requestStop(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (!stopRequested_) stopReason_ = reason;
  stopRequested_ = true;
  stopCondition_.notify_all();
}

bool StorageSink::allArrived() const {
  return integrationsWritten_ >= int64_t(outputs_.size()) * validator_->nrIntegrations() &&
         (!beamFormed_ || beamFormed_->complete());
}

void StorageSink::acceptConnections() {
  while (std::unique_ptr<Stream> stream = listener_->accept()) {
    std::lock_guard lock(mutex_);
    if (stopRequested_) break;
    Stream* raw = stream.get();
    ++open_;
    const int source = int(connections_.size());
    sourceNames_.push_back("connection " + std::to_string(source) + " (" +
                           peerAddress(raw->fileDescriptor()) + ")");
    std::thread thread([this, raw, source] {
      ::pthread_setname_np(::pthread_self(), "sink-receive");  // for perf and top
      serveConnection(*raw, source);
      if (--open_ == 0) staging_->writeAll();  // nothing left to batch the staged blocks with
    });
    ++accepted_;
    connections_.emplace_back(std::move(stream), std::move(thread));
  }
}

void StorageSink::serveConnection(Stream& stream, int source) {
  std::string peer;
  {
    std::lock_guard lock(mutex_);
    peer = sourceNames_[size_t(source)];
  }
  try {
    handshake_->acceptPeer(stream.fileDescriptor());
  } catch (const HandshakeError& e) {
    ++statistics_.connectionsRefused;
    RTCP_LOG_ERROR("storage", peer << " refused: " << e.what());
    stream.shutdown();
    return;
  }
  RTCP_LOG_DEBUG("storage", peer << " opened");
  BlockReceiver receiver(*validator_, *staging_, statistics_);
  DurableReplies replies(*durable_, stream.fileDescriptor(), beamFormed_.get());
  receiver.replyWith(&replies);
  receiver.fromSource(source);
  receiver.receiveBeamFormedWith(beamFormedIngest_.get());
  receiver.run(stream, peer);
  RTCP_LOG_DEBUG("storage", peer << " closed");
}

void StorageSink::reportDuplicate(const StagedBlock& block, const std::string& path) {
  const int64_t integration = int64_t(block.header.integration);
  std::string source = "an unknown source";
  {
    std::lock_guard lock(mutex_);
    if (block.source >= 0 && size_t(block.source) < sourceNames_.size())
      source = sourceNames_[size_t(block.source)];
  }
  if (integration < gridAtOpen_[size_t(block.output)]) {  // a restart's resend
    ++statistics_.rejected[size_t(BlockReject::kDuplicate)];
    RTCP_LOG_DEBUG("storage", path << ": integration " << integration << " from " << source
                                   << " was in the MS when it was reopened (sent again)");
    return;
  }
  ++statistics_.duplicatesOfThisRun;
  ++statistics_.rejected[size_t(BlockReject::kDuplicate)];
  RTCP_LOG_ERROR("storage", path << ": a second block for integration " << integration
                                 << " (subband index " << block.header.subband << ") from "
                                 << source << ": already written, the first kept");
}

void StorageSink::failWriting(int output, const std::string& what) {
  diskSpace_->checkFull(output, what);
  const std::string full = diskSpace_->fullReason();
  const std::string reason =
      full.empty() ? writers_[size_t(output)]->path() + ": writing failed: " + what : full;
  {
    std::lock_guard lock(errorMutex_);
    if (!error_.empty()) return;
    error_ = reason;
  }
  RTCP_LOG_ERROR("storage", reason << "; writing stops, the MeasurementSets keep what was written"
                                   << (full.empty() ? "" : " (" + what + ")"));
  failed_ = true;
  requestStop("writing failed");
}

void StorageSink::writeBlock(const StagedBlock& block) {
  ++blocksTaken_;
  if (!waitUntilReady(block.output)) {  // its MS could not be made
    ++integrationsLost_;
    return;
  }
  MeasurementSetWriter& writer = *writers_[size_t(block.output)];
  if (!failed_ && !diskSpace_->admit(block.output))
    failWriting(block.output, "integration " + std::to_string(block.header.integration) + " of " +
                                  writer.path() + " does not fit");
  if (failed_) {
    ++integrationsLost_;
    return;
  }
  try {
    const uint64_t bytesBefore = writer.bytesWritten();
    if (writer.write(int64_t(block.header.integration), block.payload.data())) {
      bytesWritten_ += writer.bytesWritten() - bytesBefore;
      ++statistics_.blocksWritten;
      ++integrationsWritten_;
      durable_->written(block.output, int64_t(block.header.integration));
      missing_[size_t(block.output)] = writer.nrMissing();
    } else {
      reportDuplicate(block, writer.path());
    }
  } catch (const std::exception& e) {
    failWriting(block.output, e.what());
    ++integrationsLost_;  // perhaps not (closing may write it): counted again at the end
  }
}

void StorageSink::flushOutput(int output) {
  if (!ready_[size_t(output)]) return;  // never made (its blocks were counted lost)
  MeasurementSetWriter& writer = *writers_[size_t(output)];
  try {
    writer.flush();
    diskSpace_->flushed(output);
    durable_->flushed(output);
  } catch (const std::exception& e) {
    failWriting(output, std::string("flushing: ") + e.what());
  }
}

void StorageSink::drain(int writerThread) {
  ::pthread_setname_np(::pthread_self(), "sink-write");
  // Flushing writes out partly filled tiles and costs fsyncs: once per msFlushSeconds and MS.
  const auto flushInterval = std::chrono::duration<double>(options_.msFlushSeconds);
  std::map<int, Clock::time_point> lastFlush;  // [output], of this writer's outputs
  for (;;) {
    std::vector<std::unique_ptr<StagedBlock>> batch = staging_->nextBatch(writerThread);
    if (batch.empty()) break;
    // Time-major (each output's blocks keep their order): the writers of a beam's
    // subbands then ask the shared UvwCalculator for nearly the same epochs, which its
    // cache of recent epochs holds; output-major, a batch of more integrations per
    // subband than that cache (a fast sender) computed every epoch's rotation again.
    std::stable_sort(batch.begin(), batch.end(), [](const auto& a, const auto& b) {
      return a->header.integration < b->header.integration;
    });
    std::vector<int> touched;
    for (std::unique_ptr<StagedBlock>& block : batch) {
      touched.push_back(block->output);
      writeBlock(*block);
      staging_->release(std::move(block));
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    const auto now = Clock::now();
    for (int output : touched) {
      auto [last, first] = lastFlush.try_emplace(output, now);
      if (first || now - last->second < flushInterval || failed_) continue;
      flushOutput(output);
      last->second = Clock::now();
    }
    if (allArrived()) requestStop("every integration arrived");
  }
}

SinkSummary StorageSink::run() {
  std::vector<std::thread> writerThreads;
  for (int w = 0; w < staging_->nrWriters(); ++w)
    writerThreads.emplace_back([this, w] { drain(w); });
  std::thread acceptor([this] { acceptConnections(); });

  Clock::time_point deadline = Clock::time_point::max();
  std::string deadlineReason;
  if (options_.stopAfterSeconds > 0) {
    deadline = after(options_.stopAfterSeconds);
    deadlineReason = "--stop-after-seconds elapsed";
  }
  const double now = wallClock();
  if (now < settings_.stopTime) {  // a live observation; a replay of a past one waits for its data
    const Clock::time_point stop = after(settings_.stopTime - now + options_.lingerSeconds);
    if (stop < deadline) deadline = stop, deadlineReason = "stop time plus linger passed";
  }
  if (allArrived()) requestStop("every integration arrived");
  {
    std::unique_lock lock(mutex_);
    if (!stopCondition_.wait_until(lock, deadline, [&] { return stopRequested_; })) {
      stopRequested_ = true;
      stopReason_ = deadlineReason;
    }
  }

  // Stop receiving, then write everything staged.
  listener_->shutdown();
  acceptor.join();
  {
    std::lock_guard lock(mutex_);
    for (auto& connection : connections_) connection.first->shutdown();
  }
  for (auto& connection : connections_) connection.second.join();
  staging_->close();
  for (std::thread& thread : writerThreads) thread.join();
  if (preparing_.joinable()) preparing_.join();  // every MS made before they are closed

  SinkSummary summary;
  summary.complete = allArrived();
  summary.stopReason = stopReason_;
  if (!closeMeasurementSets(summary)) summary.failed = true;
  if (!closeBeamFormedFiles(summary)) summary.failed = true;
  // Counted again now that the MSs are closed: a block whose write failed may have been
  // written by the closing flush after all.
  int64_t written = 0;
  for (const SinkSummary::Output& out : summary.outputs) written += out.gridSize - out.missing;
  integrationsWritten_ = written;
  const uint64_t writtenNow = uint64_t(std::max<int64_t>(0, written - integrationsAtStart_));
  const uint64_t duplicates = statistics_.rejected[size_t(BlockReject::kDuplicate)];
  integrationsLost_ =
      blocksTaken_ > writtenNow + duplicates ? blocksTaken_ - writtenNow - duplicates : 0;
  summary.integrationsLost = integrationsLost_;
  summary.connectionsRefused = statistics_.connectionsRefused;
  summary.blocksDuplicated = statistics_.duplicatesOfThisRun;
  summary.failed = summary.failed || failed_;
  {
    std::lock_guard lock(errorMutex_);
    summary.error = error_;
  }
  summary.blocksReceived = statistics_.blocksReceived;
  summary.blocksWritten = statistics_.blocksWritten;
  summary.bytesReceived = statistics_.bytesReceived;
  for (int r = 0; r < kNrBlockRejects; ++r)
    summary.rejected[size_t(r)] = statistics_.rejected[size_t(r)];
  summary.stagingHighWaterBytes = staging_->highWaterBytes();
  summary.stagingCapacityBytes = staging_->capacityBytes();
  diskSpace_.reset();  // the reserve files go
  finished_ = true;
  // The reporter stops first: two writers of the status file would race on its temporary
  // (one's rename finds it gone), and a snapshot taken before finished_ could land last.
  if (statusThread_.joinable()) {
    statusThread_.request_stop();
    statusThread_.join();
  }
  if (!options_.statusPath.empty()) writeStatus();
  return summary;
}

bool StorageSink::closeBeamFormedFiles(SinkSummary& summary) {
  if (!beamFormed_) return true;
  bool closed = true;
  try {
    beamFormed_->finish();  // the blocks still missing subbands, the final lengths and times
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", "writing the beam-formed files failed: " << e.what());
    std::lock_guard lock(errorMutex_);
    if (error_.empty()) error_ = std::string("writing the beam-formed files failed: ") + e.what();
    failed_ = true;
    closed = false;
  }
  summary.beamFormedBlocksExpected = beamFormed_->blocksPerFile();
  summary.beamFormedFiles = beamFormed_->reports();
  summary.beamFormedRejected = beamFormedIngest_->rejected;
  std::vector<std::string> paths;
  for (const BeamFormedFileReport& file : summary.beamFormedFiles) paths.push_back(file.path);
  try {
    syncFileSystems(paths);
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", "syncing the beam-formed files to the disk failed: " << e.what());
    closed = false;
  }
  return closed;
}

bool StorageSink::closeMeasurementSets(SinkSummary& summary) {
  // After the disk filled up, the reserve makes room to flush what the MSs hold.
  if (diskSpace_->anyFull()) diskSpace_->releaseReserves();
  // Once the observation is over, its whole time grid is due: pad what never came (not
  // after writing failed: the grid ends with the last integration written).
  const bool observationOver = summary.complete || wallClock() >= settings_.stopTime;
  // Pad, flush and close the MSs several at a time: casacore fsyncs as it flushes them.
  summary.outputs.resize(outputs_.size());
  std::atomic<bool> closingFailed{false};
  forEachInParallel(outputs_.size(), kClosingThreads, [&](size_t o) {
    if (!writers_[o]) {  // making the MSs failed before this one
      summary.outputs[o] = {outputs_[o].path, outputs_[o].subbandNumber, 0, 0, 0};
      ++measurementSetsClosed_;
      return;
    }
    MeasurementSetWriter& writer = *writers_[o];
    // Pads and flushes (to the disk below, once for all the MSs). Both can be done again
    // after a failure: rows already added are not added twice (MeasurementSetWriter).
    auto padAndFlush = [&] {
      if (observationOver && !failed_) writer.extendTo(validator_->nrIntegrations());
      writer.flush();
    };
    bool flushed = false;
    try {
      padAndFlush();
      flushed = true;
    } catch (const std::exception& e) {
      diskSpace_->checkFull(int(o), e.what());  // before the reserve is freed
      diskSpace_->releaseReserves();
      try {  // once more, with the reserve freed: tiles are written as the next ones are
             // started, so the padding may have failed as well as the flush
        padAndFlush();
        flushed = true;
        RTCP_LOG_WARN("storage",
                      writer.path() << ": closed with the disk-space reserve (" << e.what() << ")");
        std::lock_guard lock(errorMutex_);
        if (error_.empty()) error_ = diskSpace_->fullReason() + "; the reserve closed the MSs";
      } catch (const std::exception& again) {
        RTCP_LOG_ERROR("storage", writer.path()
                                      << ": closing failed: " << e.what() << "; " << again.what());
        closingFailed = true;
      }
    }
    summary.outputs[o] = {writer.path(), outputs_[o].subbandNumber, writer.gridSize(),
                          writer.nrMissing(), writer.bytesWritten()};
    missing_[o] = writer.nrMissing();
    if (flushed) {
      writers_[o].reset();  // closes the MS: nothing is left to write
    } else {
      // casacore's table would write again as it is destroyed, and throw from a
      // destructor: left open (its memory too) rather than abort the sink.
      RTCP_LOG_ERROR("storage", writer.path() << " is left inconsistent");
      (void)writers_[o].release();
    }
    ++measurementSetsClosed_;
  });
  writers_.clear();
  try {
    std::vector<std::string> paths;
    for (const SinkSummary::Output& out : summary.outputs) paths.push_back(out.path);
    syncFileSystems(paths);
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", "syncing the MeasurementSets to the disk failed: " << e.what());
    closingFailed = true;
  }
  if (closingFailed) {
    failed_ = true;
    std::lock_guard lock(errorMutex_);
    if (error_.empty()) error_ = "closing the MeasurementSets failed (see the log)";
  }
  return !closingFailed;
}

StorageStatus StorageSink::status() const {
  StorageStatus s;
  s.wallTime = wallClock();
  s.listening = listening_;
  s.finished = finished_;
  s.measurementSets = outputs_.size();
  s.measurementSetsCreated = measurementSetsCreated_;
  s.measurementSetsReady = measurementSetsReady_;
  s.measurementSetsClosed = measurementSetsClosed_;
  s.integrationsExpected = uint64_t(validator_->nrIntegrations()) * outputs_.size();
  s.blocksReceived = statistics_.blocksReceived;
  s.blocksRejected = statistics_.totalRejected();
  s.integrationsWritten = uint64_t(std::max<int64_t>(0, integrationsWritten_));
  for (size_t o = 0; o < outputs_.size(); ++o) s.integrationsFlagged += uint64_t(missing_[o]);
  s.backlog = staging_->nrQueued();
  s.backlogBytes = s.backlog * staging_->blockBytes();
  s.bytesReceived = statistics_.bytesReceived;
  s.bytesWritten = bytesWritten_;
  s.failed = failed_;
  s.integrationsLost = integrationsLost_;
  s.connectionsRefused = statistics_.connectionsRefused;
  s.blocksDuplicated = statistics_.duplicatesOfThisRun;
  if (beamFormed_) {
    s.beamFormedFiles = beamFormed_->nrFiles();
    s.beamFormedBlocksExpected = uint64_t(beamFormed_->blocksPerFile()) * s.beamFormedFiles;
    for (const BeamFormedFileReport& file : beamFormed_->reports()) {
      const uint64_t lost = uint64_t(file.subbandBlocksLost + file.subbandBlocksLate);
      s.beamFormedBlocksWritten += uint64_t(file.blocks);
      s.beamFormedSubbandBlocksLost += lost;
      s.beamFormedBytesWritten += file.bytes;
      s.beamFormedFileNames.push_back(std::filesystem::path(file.path).filename().string());
      s.beamFormedFileBlocks.push_back(uint64_t(file.blocks));
      s.beamFormedFileSubbandBlocksLost.push_back(lost);
    }
    s.beamFormedReceived = beamFormedIngest_->blocks;
    s.beamFormedRejected = beamFormedIngest_->rejected;
  }
  std::lock_guard lock(errorMutex_);
  s.error = error_;
  return s;
}

void StorageSink::writeStatus() const {
  try {
    const StorageStatus s = status();
    if (options_.statusPath == "-") {
      std::cout << s.formatLine() << std::endl;
    } else {
      writeFileAtomically(options_.statusPath, s.format());
    }
  } catch (const std::exception& e) {
    // observe follows the sink by this file: one it cannot read is an error of the sink
    // (its exit code), not a stale status in observe's summary.
    std::lock_guard lock(errorMutex_);
    if (statusError_.empty())
      RTCP_LOG_ERROR("storage", "cannot write the status file: " << e.what());
    statusError_ = e.what();
  }
}

std::string StorageSink::statusError() const {
  std::lock_guard lock(errorMutex_);
  return statusError_;
}

void StorageSink::reportStatus(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  std::unique_lock lock(mutex);
  while (!stop.stop_requested()) {
    writeStatus();
    wake.wait_for(lock, stop, std::chrono::seconds(1), [] { return false; });
  }
}

}  // namespace rtcp::storage
