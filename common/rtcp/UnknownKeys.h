#pragma once
/// \file UnknownKeys.h
/// The keys of a parset that rtcp did not use, summarised so that a production parset
/// (thousands of keys for LOFAR's other systems) gives a few lines, while a misspelt key
/// still stands out: every unknown key is counted under its top-level prefix
/// (`Observation`, `PIC`, `Cobalt`, ...), and those that sit beside keys rtcp asks for
/// (same parent, `Observation.Beam[0].angel1` beside `Observation.Beam[0].angle1`) are
/// listed, grouped by pattern (`Observation.Beam[*].angel1`, `Cobalt.Correlator.nrChanels`),
/// except LOFAR's bookkeeping keys for its other systems (`Observation.Beam[*].target`,
/// `...Output_Correlated.mountpoints`, `Observation.claimPeriod`, ...), only counted.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "rtcp/Parset.h"

namespace rtcp {

/// Unknown keys of one pattern: indices `[n]` become `[*]`, station and antenna-field
/// names (CS001, CS001HBA0) become `*`.
struct UnknownKeyGroup {
  std::string pattern;   ///< e.g. Observation.Beam[*].target
  std::string firstKey;  ///< the first such key in the parset
  std::string where;     ///< "file:line" of firstKey
  size_t count = 0;
};

struct UnknownKeys {
  size_t total = 0;
  std::map<std::string, size_t> perPrefix;  ///< top-level prefix -> unknown keys under it
  std::vector<UnknownKeyGroup> listed;      ///< beside keys rtcp asks for, in parset order

  bool empty() const { return total == 0; }
  /// Summarises the keys nothing read in a parset (call after every setting was read).
  static UnknownKeys of(const Parset& parset);
  /// Log lines: one with the counts per prefix, one per listed group.
  std::vector<std::string> describe() const;
};

/// The pattern of a key: `[n]` -> `[*]`, station / field names -> `*`.
std::string keyPattern(const std::string& key);

}  // namespace rtcp
