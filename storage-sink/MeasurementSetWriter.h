#pragma once
/// \file MeasurementSetWriter.h
/// Writes one subband's correlated blocks into its MeasurementSet on a complete time
/// grid: integration i occupies rows [i * nrBaselines, (i + 1) * nrBaselines), one row
/// per baseline in the order of DESIGN §2.3, with mid time start + (i + 0.5) * T.
/// Integrations that never arrive stay as flagged rows. An existing MS of the same
/// observation is reopened, its gaps filled and its grid extended (restart).
///
/// The casacore parts live behind a pointer, so users of this header need no casacore.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "MeasurementSetDescription.h"

namespace rtcp::storage {

/// How the main table's tiled columns (DATA, FLAG, WEIGHT_SPECTRUM, UVW, WEIGHT, SIGMA)
/// are written:
/// - direct: straight into their tile files (TiledColumnFile.h), in a build with the fast
///   path (TiledColumnFile::enabled) and an MS that allows it; casacore's put otherwise;
/// - casacore: casacore's put, its public API, through a tile cache of one tile per column
///   (the reference the direct writes are tested against);
/// - buffered: casacore's put with its buffered tile access (TSMOption::Buffer, 1 MiB), no
///   tile cache.
/// rtcp-bench storage --tile-writes compares them (docs/PERFORMANCE.md §5).
enum class TileWrites { direct, casacore, buffered };

class MeasurementSetWriter {
 public:
  /// Creates the MS at path, or reopens it when it exists (it must hold the same
  /// observation, stations and channels; std::runtime_error naming the file if not).
  /// justCreated: this process has just made it from the description
  /// (createMeasurementSets), so it is opened without reading its subtables to check it.
  MeasurementSetWriter(const MeasurementSetDescription& description, const std::string& path,
                       bool justCreated = false, TileWrites tileWrites = TileWrites::direct);
  ~MeasurementSetWriter();
  MeasurementSetWriter(const MeasurementSetWriter&) = delete;
  MeasurementSetWriter& operator=(const MeasurementSetWriter&) = delete;

  /// Writes one verified block of an integration; payload (DESIGN §2.4) is
  /// visibilities[baseline][channel][pol] (complex float32) then
  /// nrValidSamples[baseline][channel] (uint32). Stored as conj(sum) / nrValid with
  /// WEIGHT_SPECTRUM nrValid / samplesPerIntegration, WEIGHT and SIGMA 1 (DESIGN §2.5). Returns
  /// false, writing nothing, when that integration is already written. Integrations arriving in
  /// order are converted right away but put into the MS a DATA tile's worth at a time (or at
  /// flush()).
  bool write(int64_t integration, const uint8_t* payload);
  /// Extends the time grid with flagged rows to nrIntegrations integrations.
  void extendTo(int64_t nrIntegrations);
  /// Puts what is pending into the MS and flushes it to the file system; with sync,
  /// also to the disk (fsync).
  void flush(bool sync = false);

  const std::string& path() const { return path_; }
  /// Whether the tiled columns go straight into their tile files (TileWrites::direct, in a
  /// build and an MS that allow it: TiledColumnFile::canWrite) rather than through casacore.
  bool writesTilesDirectly() const;
  bool reopened() const;
  /// Integrations the grid holds, and how many of them were written (not gaps). Safe to
  /// call from any thread while another writes (as of the last write or extendTo).
  int64_t gridSize() const { return gridSize_; }
  int64_t nrWritten() const { return nrWritten_; }
  int64_t nrMissing() const { return gridSize() - nrWritten(); }
  /// Bytes of DATA, FLAG and WEIGHT_SPECTRUM cells written by this process.
  uint64_t bytesWritten() const;

 private:
  struct Impl;
  void updateCounts();
  std::string path_;
  std::unique_ptr<Impl> impl_;
  std::atomic<int64_t> gridSize_{0}, nrWritten_{0};
};

}  // namespace rtcp::storage
