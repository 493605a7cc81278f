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

#include <atomic>
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
#include "rtcp/ObservationSettings.h"
#include "rtcp/Queue.h"

namespace rtcp::storage {

/// What happened to one beam-formed file.
struct BeamFormedFileReport {
  std::string path;               ///< the .h5
  uint64_t bytes = 0;             ///< samples and weights written
  int64_t blocks = 0;             ///< blocks written
  int64_t subbandBlocksLost = 0;  ///< (subband, block) pairs written as zeros of weight 0
  int64_t subbandBlocksLate = 0;  ///< arrived after their block was written: dropped
  int64_t rows = 0;               ///< time samples in the file
  double writeSeconds = 0;        ///< time writing its blocks and finishing it (its sync), wall
};

class BeamFormedWriter {
 public:
  /// A file of settings.beamFormed.files and the directory it goes to.
  struct Target {
    int file = 0;
    std::string directory;
  };

  /// written: called on the writer thread after each block is written (e.g. to see
  /// whether everything arrived).
  BeamFormedWriter(const ObservationSettings& settings, const std::vector<Target>& targets,
                   int blocksInFlight = 4, std::function<void()> written = {});
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
  /// Every block of every file written (nothing more to come).
  bool complete() const;

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
    int allocated = 0;
    BeamFormedFileReport report;
  };

  Block takeBlock(int file, int64_t number);
  void place(const BeamFormedData& data, int component, int file);
  void queue(File& file, std::map<int64_t, Block>::iterator block);
  void writeLoop();

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
  std::atomic<int64_t> blocksWritten_{0};
};

}  // namespace rtcp::storage
