#pragma once
/// \file BeamFormedWriter.h
/// The beam-formed files one storage-sink writes. It takes one TAB's data of one subband and
/// block at a time (BeamFormedData, as the ranks make it and ionproc forwards it), copies
/// each Stokes component into its file's block rows [sample][subband × channel] (the one
/// copy the file's layout needs: a row holds every subband of the file), and when a file's
/// block holds all its subbands hands it to a writer thread that writes it
/// (BeamFormedFileWriter). A block still missing subbands when more than `blocksInFlight`
/// newer blocks of its file have begun, or at finish(), is written with the missing
/// subbands as zeros of weight 0, and the loss counted. Block buffers are reused (allocated
/// up to blocksInFlight + 2 per file).
///
/// Restarted (a storage-sink that died, started again for the same run), it continues the
/// files it finds (BeamFormedFileWriter reopens them): a block sent again is written again,
/// its subbands not sent again taken from the file; what is on disk stays. durableBlock()
/// says what of a TAB's subband is in its files (every block up to it written, now or
/// before the restart, and synced to disk), which storage-sink tells the sender
/// (DurableReplies.h). The writer thread syncs the files it wrote into in batches
/// (BeamFormedFileWriter::sync: fdatasync of each file written since), at most syncSeconds
/// after it wrote a block and never per block, as the correlated path replies only after an
/// MS's flush: a block the sender forgets is on the disk, not only in the page cache. The
/// report at finish() counts blocks and losses from the files themselves
/// (BeamFormedHoldings.h).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "BeamFormedFileWriter.h"
#include "rtcp/AlignedBuffer.h"
#include "rtcp/BeamFormedBlock.h"
#include "rtcp/BeamFormedWire.h"
#include "rtcp/ObservationSettings.h"
#include "rtcp/Queue.h"

namespace rtcp::storage {

/// What happened to one beam-formed file.
struct BeamFormedFileReport {
  std::string path;    ///< the .h5
  uint64_t bytes = 0;  ///< samples and weights written by this writer
  int64_t blocks = 0;  ///< blocks in the file (from the file at finish(), a restart's included)
  /// (subband, block) pairs the file does not hold (zeros of weight 0: never came, came too
  /// late, or their block was never written); from the file at finish()
  int64_t subbandBlocksLost = 0;
  int64_t subbandBlocksLate = 0;  ///< arrived after their block was written: dropped
  int64_t rows = 0;               ///< time samples in the file
  double writeSeconds = 0;        ///< time writing its blocks, syncing them and finishing it, wall
  int64_t syncs = 0;              ///< batches synced to disk while written (not per block)
};

class BeamFormedWriter {
 public:
  /// A file of settings.beamFormed.files and the directory it goes to.
  struct Target {
    int file = 0;
    std::string directory;
  };

  /// written: called on the writer thread after each block is written (e.g. to see
  /// whether everything arrived). runId: the run the files belong to (RTCP_RUN_ID).
  /// syncSeconds: the longest a written block waits to be synced to disk (and so to count
  /// in durableBlock()).
  BeamFormedWriter(const ObservationSettings& settings, const std::vector<Target>& targets,
                   int blocksInFlight = 4, std::function<void()> written = {},
                   const std::string& runId = "", double syncSeconds = kBeamFormedSyncSeconds);
  ~BeamFormedWriter();
  BeamFormedWriter(const BeamFormedWriter&) = delete;
  BeamFormedWriter& operator=(const BeamFormedWriter&) = delete;

  /// Places one TAB's data of one subband and block into its files' blocks. False when no
  /// file here holds it. Throws std::invalid_argument when its shape is not the settings'.
  bool accept(const BeamFormedData& data);
  /// Writes every block begun (missing subbands as lost), waits for the writer thread and
  /// closes the files. Throws the writer thread's first error.
  void finish();
  std::vector<BeamFormedFileReport> reports() const;
  /// Blocks each file holds when the observation is complete: the blocks the ranks process
  /// (whole integrations, nrProcessedBlocks).
  int64_t blocksPerFile() const;
  /// Files written here.
  size_t nrFiles() const { return files_.size(); }
  /// Every block of every file written (nothing more to come), now or before a restart.
  bool complete() const;
  /// The newest block of SAP sap's TAB tab of subband index `subband` such that it and
  /// every block before it are in each of its files here, synced to disk (-1: none yet, or
  /// no file here).
  int64_t durableBlock(int sap, int tab, int subband) const;

 private:
  struct Block {
    int file = 0;  ///< index in files_
    int64_t number = 0;
    AlignedBuffer<float> samples;  ///< [sample][subband × channel]
    AlignedBuffer<float> weights;  ///< [sample][subband × channel]
    std::vector<bool> present;     ///< [subband of the file]
    int nrPresent = 0;
  };
  struct File {
    BeamFormedFile description;
    std::unique_ptr<BeamFormedFileWriter> writer;
    std::map<int64_t, Block> pending;  ///< blocks being filled, by number
    std::vector<Block> spare;          ///< written blocks' buffers, for reuse
    std::vector<bool> queued;          ///< [block]: went to the writer
    std::vector<bool> queuedWhole;     ///< [block]: ... with every subband
    std::vector<bool> written;         ///< [block]: in the file (now, or before a restart)
    bool unsynced = false;             ///< written into since its last sync (writer thread)
    int allocated = 0;
    BeamFormedFileReport report;
  };

  Block takeBlock(int file, int64_t number);
  void place(const BeamFormedData& data, int component, int file);
  void queue(File& file, std::map<int64_t, Block>::iterator block);
  void writeLoop();
  /// Writes one block into its file (the writer thread).
  void write(Block& block);
  /// Syncs the files written into since their last sync, and moves their durable marks
  /// over what they held then (the writer thread).
  void syncWritten();
  /// Moves file index's written mark over the blocks written since. Mutex held (or before
  /// the writer thread runs).
  void advanceWritten(const File& file, int index);

  const ObservationSettings& settings_;
  const int blocksInFlight_;
  std::vector<File> files_;
  std::map<int, int> fileOfSettings_;  ///< settings file index -> files_ index
  mutable std::mutex mutex_;           ///< files_' pending, spare, queued and reports
  std::condition_variable spareReturned_;
  Queue<Block> toWrite_;
  std::thread writer_;
  std::exception_ptr writeError_;
  bool finished_ = false;
  std::function<void()> written_;
  const std::chrono::steady_clock::duration syncInterval_;
  static constexpr int kSyncThreads = 8;  ///< files synced at once (syncWritten)
  /// [file]: the newest block such that it and all before it are written (complete()), and
  /// such that they are also synced to disk (durableBlock)
  std::unique_ptr<std::atomic<int64_t>[]> writtenThrough_, durable_;
};

}  // namespace rtcp::storage
