#include "MeasurementSetHoldings.h"

#include <casacore/casa/Arrays/Vector.h>
#include <casacore/tables/Tables/ScalarColumn.h>
#include <casacore/tables/Tables/Table.h>

#include <stdexcept>

#include "CasacoreLock.h"

namespace rtcp::storage {

MeasurementSetHoldings readHoldings(const std::string& path, int nrBaselines) {
  try {
    std::lock_guard lock(casacoreMutex());
    const casacore::Table table(path, casacore::TableLock(casacore::TableLock::AutoNoReadLocking),
                                casacore::Table::Old);
    const uint64_t rows = table.nrow();
    if (nrBaselines <= 0 || rows % uint64_t(nrBaselines) != 0)
      throw std::runtime_error(std::to_string(rows) + " rows are not whole integrations of " +
                               std::to_string(nrBaselines) + " baselines");
    const casacore::Vector<bool> flagRow =
        casacore::ScalarColumn<bool>(table, "FLAG_ROW").getColumn();
    MeasurementSetHoldings holdings;
    holdings.integrations = int64_t(rows / uint64_t(nrBaselines));
    for (uint64_t first = 0; first < rows; first += uint64_t(nrBaselines)) {
      bool gap = true;  // every row flagged (a baseline without valid samples is one row)
      for (uint64_t row = first; gap && row < first + uint64_t(nrBaselines); ++row)
        gap = flagRow[row];
      holdings.flagged += gap ? 1 : 0;
    }
    return holdings;
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": cannot be read back: " + e.what());
  }
}

}  // namespace rtcp::storage
