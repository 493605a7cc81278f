#pragma once
/// \file TableRowCount.h
/// Reopening an MS whose writer was killed inside a flush. casacore flushes a table's
/// storage managers (each header holds the row count) before it replaces table.dat (which
/// holds the table's row count); killed in between, the table does not open ("mismatch in
/// #row; expected 1360, found 1496"). The storage managers that flushed hold their rows
/// whole, so when all of them agree, setting table.dat's row count to theirs makes the
/// table whole again with every row written.

#include <casacore/tables/DataMan/TSMOption.h>
#include <casacore/tables/Tables/Table.h>
#include <casacore/tables/Tables/TableLock.h>

#include <cstdint>
#include <optional>
#include <string>

namespace rtcp::storage {

/// Opens the table at path for update; repairs a row count left behind as above (logged
/// as a warning naming the table and both counts). Throws what casacore throws for any
/// other fault, or when the storage managers disagree among themselves.
casacore::Table openRepairingRowCount(const std::string& path, const casacore::TableLock& lock,
                                      const casacore::TSMOption& tiles = casacore::TSMOption());

/// The row counts in casacore's "mismatch in #row; expected X, found Y": {X, Y}.
std::optional<std::pair<uint64_t, uint64_t>> rowCountMismatch(const std::string& message);

/// The row count table.dat of the table at path holds; sets it (the file is replaced by
/// a renamed copy).
uint64_t tableDatRowCount(const std::string& path);
void setTableDatRowCount(const std::string& path, uint64_t rows);

}  // namespace rtcp::storage
