#include "TiledColumnFile.h"

#include <casacore/casa/IO/BucketCache.h>
#include <casacore/casa/IO/BucketFile.h>
#include <casacore/tables/DataMan/TSMCube.h>
#include <casacore/tables/DataMan/TSMFile.h>
#include <casacore/tables/DataMan/TiledColumnStMan.h>
#include <casacore/tables/Tables/BaseTable.h>
#include <casacore/tables/Tables/TableDesc.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace rtcp::storage {

#if RTCP_DIRECT_TILE_WRITES
// casacore has no public way to say "these tiles are in the file" (so that its flush
// does not write zeroed tiles over them), nor to close a table without writing its files
// again. A pointer to such a member is taken in an explicit instantiation, where access
// is not checked (C++20 [temp.spec.general]/6): Reach<Tag, &Class::member> defines the
// friend memberOf(Tag). The members are casacore 3.5's (CMakeLists.txt builds this only
// with the releases it was verified with); TiledColumnFileTest compares every byte with
// what casacore's own put writes.
template <typename Tag, typename Tag::Type Member>
struct Reach {
  friend typename Tag::Type memberOf(Tag) { return Member; }
};
struct CubeCache {
  using Type = casacore::BucketCache* casacore::TSMCube::*;
  friend Type memberOf(CubeCache);
};
/// BucketCache's count of the buckets (tiles) that are in the file; it writes zeroed
/// ones from there up to its count of buckets at its flush.
struct BucketsInFile {
  using Type = casacore::uInt casacore::BucketCache::*;
  friend Type memberOf(BucketsInFile);
};
struct TableBase {
  using Type = casacore::BaseTable* (casacore::Table::*)() const;
  friend Type memberOf(TableBase);
};
template struct Reach<CubeCache, &casacore::TSMCube::cache_p>;
template struct Reach<BucketsInFile, &casacore::BucketCache::its_CurNrOfBuckets>;
template struct Reach<TableBase, &casacore::Table::baseTablePtr>;
#endif

namespace {

casacore::TiledColumnStMan* singleCubeManager(const casacore::Table& table,
                                              const std::string& column) {
  auto* stman = dynamic_cast<casacore::TiledColumnStMan*>(table.findDataManager(column, true));
  return stman != nullptr && stman->nhypercubes() == 1 ? stman : nullptr;
}

casacore::TSMCube* singleCube(const casacore::Table& table, const std::string& column) {
  casacore::TiledColumnStMan* stman = singleCubeManager(table, column);
  return stman == nullptr ? nullptr : stman->getTSMCube(0);
}

/// Tiles of a cube: its shape over its tile shape, rounded up on every axis.
uint64_t nrTiles(const casacore::TSMCube& cube) {
  uint64_t tiles = 1;
  for (size_t axis = 0; axis < cube.cubeShape().size(); ++axis)
    tiles *=
        uint64_t((cube.cubeShape()[axis] + cube.tileShape()[axis] - 1) / cube.tileShape()[axis]);
  return tiles;
}

size_t storedValueSize(casacore::DataType type) {
  switch (type) {
    case casacore::TpComplex:
      return sizeof(casacore::Complex);
    case casacore::TpFloat:
      return sizeof(float);
    case casacore::TpDouble:
      return sizeof(double);
    default:
      return 0;
  }
}

/// Eight bools (0 or 1) as the bits of a byte, the first the least significant.
uint8_t packEight(const bool* values) {
  uint64_t bytes;
  std::memcpy(&bytes, values, 8);
  return uint8_t((bytes * 0x0102040810204080ULL) >> 56);
}

}  // namespace

bool TiledColumnFile::enabled() { return RTCP_DIRECT_TILE_WRITES; }

bool TiledColumnFile::canWrite(const casacore::Table& table, const std::string& column) {
  if (!enabled() || !table.tableDesc().isColumn(column)) return false;
  const casacore::ColumnDesc& desc = table.tableDesc()[column];
  const bool isBool = desc.dataType() == casacore::TpBool;
  if (!isBool && storedValueSize(desc.dataType()) == 0) return false;
  // Stored as in memory only in this machine's byte order.
  const bool bigEndianTable = table.endianFormat() == casacore::Table::BigEndian;
  if (bigEndianTable != (std::endian::native == std::endian::big)) return false;
  const casacore::TSMCube* cube = singleCube(table, column);
  if (cube == nullptr) return false;
  const casacore::IPosition& shape = cube->cubeShape();
  const casacore::IPosition& tile = cube->tileShape();
  const size_t last = shape.size() - 1;
  for (size_t axis = 0; axis < last; ++axis)
    if (tile[axis] != shape[axis]) return false;  // a tile must span whole cells
  // and hold nothing but its rows' values (bits for Bool)
  const uint64_t tileValues = uint64_t(tile.product());
  return cube->bucketSize() ==
         (isBool ? (tileValues + 7) / 8 : tileValues * storedValueSize(desc.dataType()));
}

TiledColumnFile::TiledColumnFile(const casacore::Table& table, const std::string& column,
                                 DirectIo directIo)
    : table_(table), column_(column) {
  if (!canWrite(table, column))
    throw std::runtime_error(std::string(table.tableName()) + ": column " + column +
                             " is not one tiled column with tiles of whole cells");
  cube_ = singleCube(table, column);
  const casacore::TSMCube* cube = cube_;
  const casacore::IPosition& shape = cube->cubeShape();
  const size_t last = shape.size() - 1;
  valuesPerRow_ = size_t(shape.getFirst(last).product());
  valueSize_ = storedValueSize(table.tableDesc()[column].dataType());
  rowsPerTile_ = uint64_t(cube->tileShape()[last]);
  bucketSize_ = cube->bucketSize();
  // A TiledColumnStMan keeps its one cube in its file 0, which ends with the cube's tiles.
  casacore::TSMFile* file = singleCubeManager(table, column)->getFile(0);
  fileOffset_ = uint64_t(file->length()) - nrTiles(*cube) * bucketSize_;
  path_ = file->bucketFile()->name();
  fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
  if (fd_ < 0) throw std::runtime_error(path_ + ": cannot open: " + std::strerror(errno));
  const off_t size = ::lseek(fd_, 0, SEEK_END);
  fileSize_ = size > 0 ? uint64_t(size) : 0;
  if (valueSize_ == 0) bits_.resize(bucketSize_);  // grows to the longest run written
  if (directIo == DirectIo::when_aligned && valueSize_ != 0) openDirect();
}

void TiledColumnFile::openDirect() {
  struct statx alignment {};
  if (::statx(fd_, "", AT_EMPTY_PATH, STATX_DIOALIGN, &alignment) != 0 ||
      !(alignment.stx_mask & STATX_DIOALIGN) || alignment.stx_dio_offset_align == 0 ||
      alignment.stx_dio_mem_align == 0)
    return;  // the file system cannot say (or does not do direct I/O): buffered
  directFd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC | O_DIRECT);
  directOffsetAlign_ = alignment.stx_dio_offset_align;
  directMemoryAlign_ = alignment.stx_dio_mem_align;
}

TiledColumnFile::~TiledColumnFile() {
  if (fd_ >= 0) ::close(fd_);
  if (directFd_ >= 0) ::close(directFd_);
}

void TiledColumnFile::writeRows(uint64_t firstRow, uint64_t nrRows, const void* cells) {
  if (nrRows == 0) return;
  if (valueSize_ == 0) {
    writeBits(firstRow, nrRows, static_cast<const bool*>(cells));
  } else {
    // Rows lie one after another across tiles: bucketSize = R rows' bytes.
    const size_t rowBytes = valuesPerRow_ * valueSize_;
    writeBytes(fileOffset_ + firstRow * rowBytes, cells, nrRows * rowBytes);
  }
  markTilesInFile();
}

void TiledColumnFile::writeBits(uint64_t firstRow, uint64_t nrRows, const bool* cells) {
  // Each tile's bits are packed into bits_ after those of the tiles before it; the bytes
  // of tiles that follow one another in the file go out in one write.
  const uint64_t endRow = firstRow + nrRows;
  uint64_t spanOffset = 0;  // the file offset of bits_[0]
  size_t spanSize = 0;      // bytes packed into bits_ and not yet written
  for (uint64_t row = firstRow; row < endRow;) {
    const uint64_t tile = row / rowsPerTile_;
    const uint64_t tileEnd = std::min(endRow, (tile + 1) * rowsPerTile_);
    const uint64_t firstBit = (row - tile * rowsPerTile_) * valuesPerRow_;
    const uint64_t nrBits = (tileEnd - row) * valuesPerRow_;
    const uint64_t firstByte = firstBit / 8, endByte = (firstBit + nrBits + 7) / 8;
    const uint64_t offset = fileOffset_ + tile * bucketSize_ + firstByte;
    if (spanSize > 0 && spanOffset + spanSize != offset) {
      writeBytes(spanOffset, bits_.data(), spanSize);
      spanSize = 0;
    }
    if (spanSize == 0) spanOffset = offset;
    if (bits_.size() < spanSize + (endByte - firstByte)) bits_.resize(spanSize + bucketSize_);
    uint8_t* bytes = bits_.data() + spanSize;
    // Bits of other rows in the first and last byte are kept.
    const uint64_t lastByte = endByte - firstByte - 1;
    if (firstBit % 8 != 0) readBytes(offset, &bytes[0], 1);
    if ((firstBit + nrBits) % 8 != 0) readBytes(offset + lastByte, &bytes[lastByte], 1);
    const bool* values = cells + (row - firstRow) * valuesPerRow_;
    auto setBit = [&](uint64_t bit) {
      uint8_t& byte = bytes[(firstBit + bit) / 8 - firstByte];
      const uint8_t mask = uint8_t(1u << ((firstBit + bit) % 8));
      byte = values[bit] ? (byte | mask) : (byte & ~mask);
    };
    uint64_t bit = 0;
    for (; bit < nrBits && (firstBit + bit) % 8 != 0; ++bit) setBit(bit);
    for (; bit + 8 <= nrBits; bit += 8)
      bytes[(firstBit + bit) / 8 - firstByte] = packEight(values + bit);
    for (; bit < nrBits; ++bit) setBit(bit);
    spanSize += endByte - firstByte;
    row = tileEnd;
  }
  if (spanSize > 0) writeBytes(spanOffset, bits_.data(), spanSize);
}

size_t TiledColumnFile::writeDirect(uint64_t offset, const void* bytes, size_t size) {
  if (directFd_ < 0 || offset % directOffsetAlign_ != 0 || size % directOffsetAlign_ != 0 ||
      reinterpret_cast<uintptr_t>(bytes) % directMemoryAlign_ != 0)
    return 0;
  ssize_t n;
  do n = ::pwrite(directFd_, bytes, size, off_t(offset));
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EINVAL) ::close(std::exchange(directFd_, -1));  // buffered from now on
  if (n <= 0) return 0;  // buffered writes try again and report what fails (a full disk)
  fileSize_ = std::max(fileSize_, offset + uint64_t(n));
  directBytes_ += uint64_t(n);
  return size_t(n);
}

void TiledColumnFile::writeBytes(uint64_t offset, const void* bytes, size_t size) {
  const size_t direct = writeDirect(offset, bytes, size);
  offset += direct;
  size -= direct;
  const char* from = static_cast<const char*>(bytes) + direct;
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, from, size, off_t(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      throw std::runtime_error(path_ + ": writing " + column_ +
                               " failed: " + std::strerror(n < 0 ? errno : ENOSPC));
    from += n;
    offset += uint64_t(n);
    size -= size_t(n);
    fileSize_ = std::max(fileSize_, offset);
  }
  unsynced_ = true;  // direct writes too: the file's size and blocks are metadata
}

void TiledColumnFile::readBytes(uint64_t offset, void* bytes, size_t size) const {
  std::memset(bytes, 0, size);  // beyond the end of the file: a tile not yet written
  if (offset >= fileSize_) return;
  if (::pread(fd_, bytes, std::min<uint64_t>(size, fileSize_ - offset), off_t(offset)) < 0)
    throw std::runtime_error(path_ + ": reading " + column_ + " failed: " + std::strerror(errno));
}

void TiledColumnFile::markTilesInFile() {
  const uint64_t nrRows = table_.nrow();
  const uint64_t tilesEnd = fileOffset_ + (nrRows + rowsPerTile_ - 1) / rowsPerTile_ * bucketSize_;
  if (fileSize_ < tilesEnd) {  // the last tile is partly written: the rest reads as zeros
    if (::ftruncate(fd_, off_t(tilesEnd)) != 0)
      throw std::runtime_error(path_ + ": extending failed: " + std::strerror(errno));
    fileSize_ = tilesEnd;
  }
#if RTCP_DIRECT_TILE_WRITES
  if (casacore::BucketCache* cache = cube_->*memberOf(CubeCache{}))
    cache->*memberOf(BucketsInFile{}) = cache->nBucket();
#endif
}

void TiledColumnFile::skipWritingAtClose(casacore::Table& table) {
#if RTCP_DIRECT_TILE_WRITES
  (table.*memberOf(TableBase{}))()->doNotWrite();
#else
  (void)table;
#endif
}

void TiledColumnFile::sync() {
  if (!unsynced_) return;
  if (::fsync(fd_) != 0)
    throw std::runtime_error(path_ + ": fsync failed: " + std::strerror(errno));
  unsynced_ = false;
}

}  // namespace rtcp::storage
