#include "TableRowCount.h"

#include <casacore/casa/Exceptions/Error.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <regex>
#include <stdexcept>
#include <vector>

#include "rtcp/Logger.h"

namespace rtcp::storage {

namespace {

// table.dat is casacore AipsIO, big-endian: magic 0xbebebebe, object length (uint32), the
// type "Table" (uint32 length, bytes), its version (uint32), then the row count: uint32
// up to version 2, uint64 from version 3.
constexpr size_t kTypeOffset = 8, kTypeSize = 4 + 5;
constexpr size_t kVersionOffset = kTypeOffset + kTypeSize, kRowsOffset = kVersionOffset + 4;

uint64_t getBigEndian(const std::vector<char>& bytes, size_t offset, size_t size) {
  uint64_t value = 0;
  for (size_t i = 0; i < size; ++i) value = value << 8 | uint8_t(bytes[offset + i]);
  return value;
}

void putBigEndian(std::vector<char>& bytes, size_t offset, size_t size, uint64_t value) {
  for (size_t i = size; i-- > 0; value >>= 8) bytes[offset + i] = char(value & 0xff);
}

std::vector<char> readTableDat(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.eof() && !in) throw std::runtime_error(file + ": cannot read");
  if (bytes.size() < kRowsOffset + 8 || getBigEndian(bytes, 0, 4) != 0xbebebebe ||
      getBigEndian(bytes, kTypeOffset, 4) != 5 ||
      std::string(bytes.data() + kTypeOffset + 4, 5) != "Table")
    throw std::runtime_error(file + ": not a casacore table.dat");
  return bytes;
}

/// Bytes of the row count for table.dat's version.
size_t rowCountSize(const std::vector<char>& bytes, const std::string& file) {
  const uint64_t version = getBigEndian(bytes, kVersionOffset, 4);
  if (version < 1 || version > 3)
    throw std::runtime_error(file + ": table.dat version " + std::to_string(version) +
                             " not known");
  return version <= 2 ? 4 : 8;
}

}  // namespace

std::optional<std::pair<uint64_t, uint64_t>> rowCountMismatch(const std::string& message) {
  static const std::regex pattern(R"(mismatch in #row; expected (\d+), found (\d+))");
  std::smatch match;
  if (!std::regex_search(message, match, pattern)) return std::nullopt;
  return std::pair{std::stoull(match[1]), std::stoull(match[2])};
}

uint64_t tableDatRowCount(const std::string& path) {
  const std::string file = path + "/table.dat";
  const std::vector<char> bytes = readTableDat(file);
  return getBigEndian(bytes, kRowsOffset, rowCountSize(bytes, file));
}

void setTableDatRowCount(const std::string& path, uint64_t rows) {
  const std::string file = path + "/table.dat";
  std::vector<char> bytes = readTableDat(file);
  const size_t size = rowCountSize(bytes, file);
  if (size == 4 && rows > 0xffffffffu)
    throw std::runtime_error(file + ": " + std::to_string(rows) + " rows do not fit version 2");
  putBigEndian(bytes, kRowsOffset, size, rows);
  const std::string temporary = file + ".rtcp-repair";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), std::streamsize(bytes.size()));
    if (!out.flush()) throw std::runtime_error(temporary + ": cannot write");
  }
  if (std::rename(temporary.c_str(), file.c_str()) != 0)
    throw std::runtime_error(file + ": cannot replace");
}

casacore::Table openRepairingRowCount(const std::string& path, const casacore::TableLock& lock,
                                      const casacore::TSMOption& tiles) {
  std::optional<uint64_t> before;  // table.dat's row count before a repair
  for (;;) {
    try {
      return casacore::Table(path, lock, casacore::Table::Update, tiles);
    } catch (const casacore::AipsError& e) {
      const auto counts = rowCountMismatch(e.what());
      if (before) {  // the storage managers disagree among themselves: as it was
        setTableDatRowCount(path, *before);
        throw std::runtime_error(path + ": its storage managers hold different row counts (" +
                                 e.what() + "); it cannot be reopened");
      }
      if (!counts || counts->first != tableDatRowCount(path)) throw;
      RTCP_LOG_WARN("storage", path << ": table.dat holds " << counts->first
                                    << " rows, its storage managers " << counts->second
                                    << " (its writer was killed inside a flush): set to "
                                    << counts->second);
      setTableDatRowCount(path, counts->second);
      before = counts->first;
    }
  }
}

}  // namespace rtcp::storage
