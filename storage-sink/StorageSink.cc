#include "StorageSink.h"

#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>

#include "BlockReceiver.h"
#include "FileSystemSync.h"
#include "MeasurementSetTemplate.h"
#include "ParallelFor.h"
#include "rtcp/Logger.h"
#include "rtcp/StatusFile.h"

namespace rtcp::storage {
namespace {

using Clock = std::chrono::steady_clock;

Clock::time_point after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

/// Threads that close the MSs: mostly waiting for fsyncs.
constexpr int kClosingThreads = 8;

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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
  RTCP_LOG_INFO("storage", "summary: staging high-water mark " << stagingHighWaterBytes << " of "
                                                               << stagingCapacityBytes << " bytes");
}

StorageSink::StorageSink(ObservationSettings settings, SinkOptions options)
    : settings_(std::move(settings)), options_(std::move(options)) {
  outputs_ = localOutputs(settings_, options_.all);
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
  if (!options_.statusPath.empty())
    statusThread_ = std::jthread([this](std::stop_token stop) { reportStatus(stop); });
  const auto antennaFields = describeAntennaFields(settings_);  // once for all the MSs
  std::vector<MeasurementSetDescription> descriptions;
  std::vector<std::string> paths;
  std::vector<bool> existed;  // [output]: made by an earlier run, reopened
  for (const SubbandOutput& out : outputs_) {
    descriptions.push_back(describeMeasurementSet(settings_, out.subbandIndex, antennaFields));
    paths.push_back(out.path);
    existed.push_back(std::filesystem::exists(out.path));
  }
  // The staging buffers are touched while the MSs are made (that mostly waits for the file
  // system), as many as the observation can fill.
  std::jthread preallocating([this] {  // joined on every way out
    staging_->preallocate(size_t(validator_->nrIntegrations()) * outputs_.size());
  });
  const auto creating = Clock::now();
  createMeasurementSets(descriptions, paths, [this](int made) { measurementSetsCreated_ = made; });
  const auto opening = Clock::now();
  for (size_t o = 0; o < outputs_.size(); ++o) {
    writers_.push_back(
        std::make_unique<MeasurementSetWriter>(descriptions[o], paths[o], !existed[o]));
    integrationsWritten_ += writers_.back()->nrWritten();
    missing_[o] = writers_.back()->nrMissing();
    ++measurementSetsReady_;
  }
  preallocating.join();
  RTCP_LOG_INFO("storage", "MSs created in "
                               << std::chrono::duration<double>(opening - creating).count()
                               << " s, opened for writing in "
                               << std::chrono::duration<double>(Clock::now() - opening).count()
                               << " s");
  const int port = options_.port >= 0 ? options_.port : settings_.correlatedOutput.storagePort;
  listener_ = std::make_unique<TcpListener>(options_.host, uint16_t(port));
  listening_ = true;
  RTCP_LOG_INFO("storage", "listening on port "
                               << listener_->port() << " for " << outputs_.size()
                               << " subbands of observation " << settings_.observationId << " ("
                               << validator_->nrIntegrations() << " integrations each)");
}

StorageSink::~StorageSink() = default;

void StorageSink::requestStop(const std::string& reason) {
  std::lock_guard lock(mutex_);
  if (!stopRequested_) stopReason_ = reason;
  stopRequested_ = true;
  stopCondition_.notify_all();
}

bool StorageSink::allArrived() const {
  return integrationsWritten_ >= int64_t(outputs_.size()) * validator_->nrIntegrations();
}

void StorageSink::acceptConnections() {
  while (std::unique_ptr<Stream> stream = listener_->accept()) {
    std::lock_guard lock(mutex_);
    if (stopRequested_) break;
    Stream* raw = stream.get();
    ++open_;
    std::thread thread([this, raw, n = connections_.size()] {
      const std::string peer = "connection " + std::to_string(n);
      RTCP_LOG_DEBUG("storage", peer << " opened");
      BlockReceiver(*validator_, *staging_, statistics_).run(*raw, peer);
      RTCP_LOG_DEBUG("storage", peer << " closed");
      if (--open_ == 0) staging_->writeAll();  // nothing left to batch the staged blocks with
    });
    ++accepted_;
    connections_.emplace_back(std::move(stream), std::move(thread));
  }
}

void StorageSink::writeBlock(const StagedBlock& block) {
  MeasurementSetWriter& writer = *writers_[size_t(block.output)];
  try {
    if (failed_) return;
    const uint64_t bytesBefore = writer.bytesWritten();
    if (writer.write(int64_t(block.header.integration), block.payload.data())) {
      bytesWritten_ += writer.bytesWritten() - bytesBefore;
      ++statistics_.blocksWritten;
      ++integrationsWritten_;
      missing_[size_t(block.output)] = writer.nrMissing();
    } else {
      statistics_.reject(
          BlockReject::kDuplicate, writer.path(),
          "integration " + std::to_string(block.header.integration) + " already written");
    }
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", writer.path() << ": writing failed: " << e.what());
    failed_ = true;
    requestStop("writing failed");
  }
}

void StorageSink::drain(int writerThread) {
  // Flushing writes out partly filled tiles and costs fsyncs: once per msFlushSeconds and MS.
  const auto flushInterval = std::chrono::duration<double>(options_.msFlushSeconds);
  std::map<int, Clock::time_point> lastFlush;  // [output], of this writer's outputs
  for (;;) {
    std::vector<std::unique_ptr<StagedBlock>> batch = staging_->nextBatch(writerThread);
    if (batch.empty()) break;
    std::vector<int> touched;
    for (std::unique_ptr<StagedBlock>& block : batch) {
      if (touched.empty() || touched.back() != block->output) touched.push_back(block->output);
      writeBlock(*block);
      staging_->release(std::move(block));
    }
    const auto now = Clock::now();
    for (int output : touched) {
      auto [last, first] = lastFlush.try_emplace(output, now);
      if (first || now - last->second < flushInterval) continue;
      MeasurementSetWriter& writer = *writers_[size_t(output)];
      try {
        writer.flush();
        last->second = Clock::now();
      } catch (const std::exception& e) {
        RTCP_LOG_ERROR("storage", writer.path() << ": flush failed: " << e.what());
        failed_ = true;
        requestStop("writing failed");
      }
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
  const double now = unixNow();
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

  SinkSummary summary;
  summary.complete = allArrived();
  summary.failed = failed_;
  summary.stopReason = stopReason_;
  // Once the observation is over, its whole time grid is due: pad what never came.
  const bool observationOver = summary.complete || unixNow() >= settings_.stopTime;
  // Pad, flush and close the MSs several at a time: casacore fsyncs as it flushes them.
  summary.outputs.resize(outputs_.size());
  std::atomic<bool> finishingFailed{false};
  forEachInParallel(outputs_.size(), kClosingThreads, [&](size_t o) {
    MeasurementSetWriter& writer = *writers_[o];
    try {
      if (observationOver && !failed_) writer.extendTo(validator_->nrIntegrations());
      writer.flush();  // to the disk below, once for all the MSs
    } catch (const std::exception& e) {
      RTCP_LOG_ERROR("storage", writer.path() << ": finishing failed: " << e.what());
      finishingFailed = true;
    }
    summary.outputs[o] = {writer.path(), outputs_[o].subbandNumber, writer.gridSize(),
                          writer.nrMissing(), writer.bytesWritten()};
    missing_[o] = writer.nrMissing();
    writers_[o].reset();  // closes the MS
    ++measurementSetsClosed_;
  });
  if (finishingFailed) summary.failed = true;
  writers_.clear();
  try {
    std::vector<std::string> paths;
    for (const SinkSummary::Output& out : summary.outputs) paths.push_back(out.path);
    syncFileSystems(paths);
  } catch (const std::exception& e) {
    RTCP_LOG_ERROR("storage", "syncing the MeasurementSets to the disk failed: " << e.what());
    summary.failed = true;
  }
  summary.blocksReceived = statistics_.blocksReceived;
  summary.blocksWritten = statistics_.blocksWritten;
  summary.bytesReceived = statistics_.bytesReceived;
  for (int r = 0; r < kNrBlockRejects; ++r)
    summary.rejected[size_t(r)] = statistics_.rejected[size_t(r)];
  summary.stagingHighWaterBytes = staging_->highWaterBytes();
  summary.stagingCapacityBytes = staging_->capacityBytes();
  finished_ = true;
  if (!options_.statusPath.empty()) writeStatus();
  return summary;
}

StorageStatus StorageSink::status() const {
  StorageStatus s;
  s.wallTime = unixNow();
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
  return s;
}

void StorageSink::writeStatus() const {
  try {
    const StorageStatus s = status();
    if (options_.statusPath == "-") {
      std::cout << s.formatLine() << std::endl;
    } else {
      ion::writeFileAtomically(options_.statusPath, s.format());
    }
  } catch (const std::exception& e) {
    RTCP_LOG_WARN("storage", "status: " << e.what());
  }
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
