#pragma once
/// \file DiskSpace.h
/// Keeps storage-sink from filling the file systems its MeasurementSets are on. A full
/// disk must not leave an MS casacore cannot open (a table whose storage managers were
/// half written), so:
/// - a reserve file (`.L<obsid>.storage-reserve`, fallocated) is kept in the directory of
///   the MSs on each file system from before the MSs are made; it is freed only to flush
///   and close the MSs after the file system filled up anyway (another writer, or an
///   estimate too low);
/// - before an integration is written, admit() checks that the file system holds it
///   besides what every MS there wrote since its last flush: every such integration and
///   one tile per column (tiles are whole on disk). The writer puts a run of whole tiles
///   at once (MainTableTiling) and casacore writes each tile when the next is started (a
///   one-tile cache per column), so only the run being collected, the last tile put and
///   the small columns' buckets wait for the flush; counting the runs already put
///   again, until the flush makes statvfs the only measure, errs on the safe side;
/// - when it does not, the file system is full: admit() says no from then on, and
///   fullReason() says which directory and how many bytes were free.
/// Thread-safe.

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace rtcp::storage {

/// Bytes one integration of an MS takes on disk (an upper bound: every column of the main
/// table), and the bytes a partly filled tile of every tiled column adds (tiles of the
/// same rows in every column: mainTableTiling).
uint64_t msIntegrationBytes(int nrStations, int nrChannels);
uint64_t msTileBytes(int nrStations, int nrChannels);

/// Whether an exception's text says the disk was full (casacore passes errno on as text,
/// and on a short write gives no errno at all).
bool isDiskFullError(const std::string& what);

class DiskSpace {
 public:
  /// msPaths: the MS of each output. Makes a reserve file of reserveBytes on every file
  /// system they are on (nothing with 0); throws std::runtime_error naming the file when
  /// it cannot (the disk is already too full).
  DiskSpace(const std::vector<std::string>& msPaths, int64_t observationId,
            uint64_t integrationBytes, uint64_t tileBytes, uint64_t reserveBytes);
  ~DiskSpace();  ///< removes the reserve files
  DiskSpace(const DiskSpace&) = delete;
  DiskSpace& operator=(const DiskSpace&) = delete;

  /// Whether one more integration of output o fits; counts it as unflushed when it does.
  /// False once its file system was found full (and from then on).
  bool admit(int output);
  /// Output o was flushed: what it kept in memory is on disk (and in statvfs) now.
  void flushed(int output);
  /// After a write to output o failed: whether that was for lack of space (the error
  /// says so, or its file system has less free than one more integration and tile: a
  /// short write leaves casacore's message with a stale errno). Marks it full if so.
  bool checkFull(int output, const std::string& error);
  /// Frees the reserve files, to flush and close the MSs after a file system filled up.
  void releaseReserves();
  /// Why writing stopped ("" while no file system is full): the directory and its free bytes.
  std::string fullReason() const;
  bool anyFull() const;

 private:
  struct FileSystem {
    std::string directory;    ///< the first MS directory on it
    std::string reservePath;  ///< "" without a reserve
    uint64_t freeBytes = 0;   ///< statvfs, at lastCheck
    double lastCheck = -1e30;
    bool full = false;
    std::string fullReason;
    /// What its MSs wrote since their flushes: each such integration, and a tile per MS
    /// with any (kept as a sum, not summed over the outputs at every admit).
    uint64_t pendingBytes = 0;
  };
  void refresh(FileSystem& fs, double now);

  uint64_t integrationBytes_, tileBytes_;
  std::vector<int> fileSystemOf_;        ///< [output]
  std::vector<uint64_t> unflushed_;      ///< [output]: integrations admitted since its flush
  std::vector<FileSystem> fileSystems_;  ///< one per device
  mutable std::mutex mutex_;
};

}  // namespace rtcp::storage
