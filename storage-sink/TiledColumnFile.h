#pragma once
/// \file TiledColumnFile.h
/// Writes the cells of one TiledColumnStMan column straight into its tile file.
///
/// A column as MeasurementSetCreator makes it (one column per TiledColumnStMan, tiles that
/// span whole cells and a number of rows, the table in this machine's byte order) keeps its
/// rows one after another in `table.f<N>_TSM0`: tile t holds rows [t R, (t + 1) R) and
/// starts at byte t * bucketSize. A run of rows is then one pwrite of the writer's own
/// buffer, where casacore's put copies each byte into a tile it allocated and zeroed, then
/// into its write buffer, then writes a tile at a time. The files stay casacore's: every
/// reader (casacore, DP3, WSClean) reads them unchanged. Bool cells are stored as bits
/// (LSB first, as casacore's Conversion::boolToBit).
///
/// Rows must be added to the table (addRow) before they are written here, and every row
/// added must be written before casacore flushes the table: casacore's tile cache counts
/// the tiles that exist in the file and writes zeroed tiles for the others at its flush;
/// writeRows tells it that all tiles are in the file. casacore itself must not put cells
/// into such a column while this writes it.
///
/// Why not casacore's public API: casacore's put (ArrayColumn::putColumnRange over a run
/// of whole tiles, a tile cache of one tile per column; TileWrites::casacore) copies each
/// byte into a zeroed tile, then into its write buffer, then through the page cache; its
/// buffered tile access (TSMOption::Buffer, 1 MiB; TileWrites::buffered) is slower still.
/// Three rounds on 28 Nov 2026, 08:26-08:30 UTC (2 cores, AMD EPYC with AVX-512, load 6-7
/// from other builds), `rtcp-bench storage --stations 24 --channels 64 --subbands 48
/// --integrations 40 --sink-only --tile-writes direct|casacore|buffered` alternating, the
/// whole sink's CPU seconds: direct 1.55, 1.80, 1.19; casacore 2.73, 2.24, 2.21 (1.24-1.87
/// times direct in the same round); buffered 5.04, 5.25, 4.07 (2.9-3.4 times). No public
/// path comes within 20 %, so this class stays. Writing the files directly needs two
/// members casacore keeps private (the tile cache's count of tiles in the file, so that
/// its flush writes no zeroed tiles over them; Table::baseTablePtr, so that closing an MS
/// just flushed writes nothing again), so the fast path is built only with the casacore
/// releases it was verified with (storage-sink/CMakeLists.txt) and enabled() says whether
/// it was; with any other release every column goes through casacore's put (the default
/// path). TiledColumnFileTest checks that both paths leave byte-identical tables.

#include <casacore/tables/Tables/Table.h>

#include <cstdint>
#include <string>
#include <vector>

namespace casacore {
class TSMCube;
}

namespace rtcp::storage {

/// Whether a column's writes that the device can take directly (offset, size and address
/// aligned as statx's STATX_DIOALIGN says) go by O_DIRECT, past the page cache: the
/// kernel's copy into freshly allocated page-cache pages was half of the writer's CPU.
enum class DirectIo { never, when_aligned };

class TiledColumnFile {
 public:
  /// Whether this build writes tiles directly: only with the casacore releases whose
  /// private members it was verified with (storage-sink/CMakeLists.txt); else false, and
  /// every column goes through casacore's put.
  static bool enabled();
  /// Whether column of table is a column this class can write (else use casacore's put);
  /// false for every column when !enabled().
  static bool canWrite(const casacore::Table& table, const std::string& column);
  /// Keeps casacore from writing every file of the table again as it closes it (its
  /// writer has just flushed it, so nothing is left to write): part of the same fast path,
  /// nothing when !enabled().
  static void skipWritingAtClose(casacore::Table& table);

  /// std::runtime_error naming the column when !canWrite(table, column).
  TiledColumnFile(const casacore::Table& table, const std::string& column,
                  DirectIo directIo = DirectIo::never);
  ~TiledColumnFile();
  TiledColumnFile(const TiledColumnFile&) = delete;
  TiledColumnFile& operator=(const TiledColumnFile&) = delete;

  /// Writes rows [firstRow, firstRow + nrRows), which the table holds, from cells in
  /// casacore's in-memory order ([row][cell], the cell's first axis fastest; Bool one byte
  /// per value). std::runtime_error naming the file when the write fails (a full disk).
  void writeRows(uint64_t firstRow, uint64_t nrRows, const void* cells);
  /// fsync of the tile file when anything was written since the last sync.
  void sync();

  const std::string& path() const { return path_; }
  /// Bytes written by direct I/O so far.
  uint64_t directBytes() const { return directBytes_; }

 private:
  void writeBits(uint64_t firstRow, uint64_t nrRows, const bool* cells);
  void writeBytes(uint64_t offset, const void* bytes, size_t size);
  /// Writes by direct I/O what it can; returns the bytes written (0: not aligned, not
  /// supported, or failed).
  size_t writeDirect(uint64_t offset, const void* bytes, size_t size);
  void openDirect();
  void readBytes(uint64_t offset, void* bytes, size_t size) const;
  /// Makes the file hold every tile of the table's rows and casacore's cache count them.
  void markTilesInFile();

  casacore::Table table_;
  std::string column_, path_;
  casacore::TSMCube* cube_ = nullptr;  // the column's hypercube
  uint64_t rowsPerTile_ = 0, bucketSize_ = 0, fileOffset_ = 0;
  size_t valuesPerRow_ = 0, valueSize_ = 0;  // valueSize_ 0: Bool, stored as bits
  uint64_t fileSize_ = 0;
  int fd_ = -1;
  int directFd_ = -1;  // O_DIRECT, or -1
  uint64_t directOffsetAlign_ = 0, directMemoryAlign_ = 0, directBytes_ = 0;
  bool unsynced_ = false;
  std::vector<uint8_t> bits_;  // the bits of a run's tiles being packed
};

}  // namespace rtcp::storage
