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
  /// Whether column of table is a column this class can write (else use casacore's put).
  static bool canWrite(const casacore::Table& table, const std::string& column);

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
