#pragma once
/// \file StorageSink.h
/// The storage tier (DESIGN §1): a TCP server that accepts any number of connections (a
/// thread each), validates and stages the correlated blocks, and writes them into one
/// MeasurementSet per subband stored on this host through a few write-behind writer
/// threads (one per core by default), each serving a share of the MSs; and the beam-formed
/// blocks on the same connections (DESIGN §2.4b) into the beam-formed files stored on this
/// host (BeamFormedWriter, a thread of its own).

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "BeamFormedIngest.h"
#include "BeamFormedWriter.h"
#include "BlockValidator.h"
#include "DiskSpace.h"
#include "DurableReplies.h"
#include "IngestStatistics.h"
#include "MeasurementSetWriter.h"
#include "OutputLayout.h"
#include "StagingArea.h"
#include "rtcp/Handshake.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/StorageStatus.h"
#include "rtcp/Stream.h"

namespace rtcp::storage {

struct SinkOptions {
  /// Address to listen on; "": the one the outputs' location names (listenHost()), so that
  /// the sink is reachable where its senders connect and nowhere else.
  std::string host;
  int port = -1;     ///< -1: OLAP.Storage.port; 0: any free port
  bool all = false;  ///< write every subband, whatever host its location names
  /// Write the outputs whose location names exactly this host ("": any name of this host,
  /// isLocalHost); the default listening address then (storage-sink --location-host).
  std::string locationHost;
  StagingOptions staging;
  double lingerSeconds = 10;    ///< after the stop time, wait this long for late blocks
  double stopAfterSeconds = 0;  ///< stop after this long whatever arrived (0: no limit)
  int writerThreads = 0;        ///< threads writing the MSs (0: one per core)
  /// --status: rewrite this file once a second with StorageStatus.h's lines ("-": one line
  /// a second on standard output; "": none).
  std::string statusPath;
  /// How often each MS is flushed to the file system while it is written (its rows made
  /// visible to readers and kept over a crash). casacore fsyncs at every flush of a table
  /// with a StandardStMan column, so hundreds of MSs cannot be flushed every second.
  double msFlushSeconds = 10;
  /// Bytes kept free (a reserve file) on each file system the MSs are on, to flush and
  /// close them should the disk fill up anyway (DiskSpace.h); --disk-reserve-mb.
  uint64_t diskReserveBytes = 64 << 20;
  /// Listen as soon as the first MS is made and make (and open) the others on a thread in
  /// subband order while blocks arrive: a block for an MS not made yet stays staged until
  /// it is (staging is bounded; TCP pushes back), never lost. Off: every MS is made and
  /// opened before the constructor returns.
  bool createWhileListening = false;
  /// The observation's secret: every connection must prove it knows it before a block is
  /// taken (Handshake.h); required.
  std::optional<ObservationSecret> secret;
  /// How the main table's tiled columns are written (MeasurementSetWriter.h); the benchmark
  /// compares them.
  TileWrites tileWrites = TileWrites::direct;
};

/// Where a sink listens by default: the host its outputs' locations name (the name the
/// senders connect to: StorageSender::destinations), 127.0.0.1 for localhost or when none
/// of them names this host (--all). Throws std::runtime_error when they name this host
/// in ways that are not all loopback (give --host).
std::string listenHost(const ObservationSettings& settings,
                       const std::vector<SubbandOutput>& outputs);

/// What a run did, per MeasurementSet and in total.
struct SinkSummary {
  struct Output {
    std::string path;
    int subband = 0;
    int64_t gridSize = 0;  ///< integrations the MS holds
    int64_t missing = 0;   ///< of those, flagged because they never arrived
    uint64_t bytesWritten = 0;
  };
  uint64_t blocksReceived = 0, blocksWritten = 0, bytesReceived = 0;
  std::array<uint64_t, kNrBlockRejects> rejected{};  ///< [BlockReject]
  std::vector<Output> outputs;
  size_t stagingHighWaterBytes = 0, stagingCapacityBytes = 0;
  bool complete = false;  ///< every expected integration of every subband arrived
  bool failed = false;    ///< an MS could not be written
  /// Integrations received and checked that no MS holds (writing had stopped: disk full).
  uint64_t integrationsLost = 0;
  uint64_t connectionsRefused = 0;  ///< connections that failed the handshake
  uint64_t blocksDuplicated = 0;    ///< blocks for integrations this sink had written
  std::string error;                ///< why writing failed ("" when it did not)
  /// The beam-formed files written here, and the blocks each holds when complete.
  std::vector<BeamFormedFileReport> beamFormedFiles;
  int64_t beamFormedBlocksExpected = 0;
  uint64_t beamFormedRejected = 0;  ///< beam-formed blocks refused (the log says why)
  std::string stopReason;
  void log() const;  ///< logs the summary, one line per item
};

class StorageSink {
 public:
  /// Opens (or reopens) the MSs and binds the port; throws on failure.
  StorageSink(ObservationSettings settings, SinkOptions options);
  ~StorageSink();
  StorageSink(const StorageSink&) = delete;
  StorageSink& operator=(const StorageSink&) = delete;

  uint16_t port() const { return listener_->port(); }
  const std::vector<SubbandOutput>& outputs() const { return outputs_; }
  /// Serves until every integration arrived, the stop time plus linger passed,
  /// stopAfterSeconds elapsed or requestStop(); then writes everything staged and
  /// closes the MSs.
  SinkSummary run();
  /// Asks run() to stop (thread-safe).
  void requestStop(const std::string& reason = "stop requested");
  /// Connections accepted so far, and how many of them are still open.
  size_t nrConnectionsAccepted() const { return accepted_; }
  size_t nrConnectionsOpen() const { return open_; }
  /// What the sink has done so far (any thread).
  StorageStatus status() const;
  /// Why the --status file could not be written, the last time it failed ("" if never).
  std::string statusError() const;

 private:
  void acceptConnections();
  /// Writes the batches of one writer thread (its share of the outputs) until closed.
  void drain(int writer);
  /// Writes one staged block into its MS, or counts it lost once writing has stopped.
  void writeBlock(const StagedBlock& block);
  /// A block for an integration its MS already holds: sent again after a restart (it was
  /// there when this sink reopened the MS), or an error counted and logged with its source.
  void reportDuplicate(const StagedBlock& block, const std::string& path);
  /// Serves one accepted connection: the handshake, then its blocks.
  void serveConnection(Stream& stream, int source);
  /// Flushes output o's MS (periodically while written).
  void flushOutput(int output);
  /// Writing failed: stop writing (every block from now on is lost, counted), say why.
  void failWriting(int output, const std::string& what);
  /// Flushes and closes the MSs; false when one of them could not be.
  bool closeMeasurementSets(SinkSummary& summary);
  /// Makes this host's beam-formed files (BeamFormedWriter) and their ingest.
  void openBeamFormedFiles();
  /// Writes what is left of them and closes them (final lengths and times); false when
  /// that failed.
  bool closeBeamFormedFiles(SinkSummary& summary);
  bool allArrived() const;
  /// Makes the MSs not made before (a restart's are reopened first, in the constructor) and
  /// opens their writers, each published to the writer threads as soon as it is open
  /// (ready_); on the constructor's thread or, with createWhileListening, on preparing_.
  void prepareMeasurementSets(const std::vector<MeasurementSetDescription>& descriptions,
                              const std::vector<std::string>& paths,
                              const std::vector<bool>& existed);
  /// Opens output o's writer and publishes it.
  void openWriter(size_t o, const MeasurementSetDescription& description, const std::string& path,
                  bool existed);
  /// Waits until output o's MS is open; false when it never will be (making the MSs failed).
  bool waitUntilReady(int output);
  /// Writes status() to options_.statusPath (logs, does not throw, when it cannot).
  void writeStatus() const;
  /// The status thread: writeStatus() once a second until stopped.
  void reportStatus(std::stop_token stop);

  ObservationSettings settings_;
  SinkOptions options_;
  std::vector<SubbandOutput> outputs_;
  std::unique_ptr<BlockValidator> validator_;
  std::unique_ptr<StagingArea> staging_;
  std::vector<std::unique_ptr<MeasurementSetWriter>> writers_;  // [output]; set once, ready_
  std::unique_ptr<std::atomic<bool>[]> ready_;                  // [output]: writers_ set
  std::mutex readyMutex_;
  std::condition_variable readyCondition_;
  std::atomic<bool> preparingFailed_{false};
  std::thread preparing_;  // createWhileListening: makes the MSs; joined in run()
  std::unique_ptr<TcpListener> listener_;
  IngestStatistics statistics_;
  std::atomic<int64_t> integrationsWritten_{0};
  std::atomic<bool> failed_{false};
  std::unique_ptr<DiskSpace> diskSpace_;
  mutable std::mutex errorMutex_;
  std::string error_;                // the first reason writing failed
  mutable std::string statusError_;  // why --status could not be written
  // Blocks the writers took from staging, lost after writing stopped, and the
  // integrations the MSs held when opened (a restart).
  std::atomic<uint64_t> blocksTaken_{0}, integrationsLost_{0};
  int64_t integrationsAtStart_ = 0;
  std::atomic<size_t> accepted_{0}, open_{0};

  std::mutex mutex_;
  std::condition_variable stopCondition_;
  bool stopRequested_ = false;
  std::string stopReason_;
  std::vector<std::pair<std::unique_ptr<Stream>, std::thread>> connections_;
  std::vector<std::string> sourceNames_;  // [connection]: "connection N (peer address)"
  std::unique_ptr<Handshake> handshake_;
  std::vector<int64_t> gridAtOpen_;  // [output]: integrations the MS held when opened
  // This host's beam-formed files (none: nullptr); made before listening, finished in run().
  std::unique_ptr<BeamFormedWriter> beamFormed_;
  std::unique_ptr<BeamFormedIngest> beamFormedIngest_;

  // For status(): MSs made and opened, each output's flagged integrations (gaps).
  std::atomic<uint64_t> measurementSetsCreated_{0}, measurementSetsReady_{0},
      measurementSetsClosed_{0};
  std::atomic<bool> listening_{false}, finished_{false};
  std::unique_ptr<std::atomic<int64_t>[]> missing_;  // [output]
  std::unique_ptr<DurableMarks> durable_;            ///< what is on disk, told back to the senders
  std::atomic<uint64_t> bytesWritten_{0};
  std::jthread statusThread_;  // last: stopped and joined before the rest goes
};

}  // namespace rtcp::storage
