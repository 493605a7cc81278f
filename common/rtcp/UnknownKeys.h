#pragma once
/// \file UnknownKeys.h
/// The keys of a parset that rtcp did not use, summarised so that a production parset
/// (thousands of keys for LOFAR's other systems) gives a few lines, while a misspelt key
/// still stands out:
/// - every unknown key is counted under its top-level prefix (`Observation`, `PIC`,
///   `Cobalt`, ...), with the line of the first: one line for them all;
/// - a key close to one rtcp reads (same parent, a name an edit or two away:
///   `Observation.Beam[0].angel1` beside `Observation.Beam[0].angle1`, `sampleClok`) is
///   listed as misspelt, grouped by pattern (`Observation.Beam[*].angel1`);
/// - under LOFAR's own prefixes (`Observation`, `PIC`, `Cobalt`, `OLAP`, `ObsSW`, ...) any
///   other key is LOFAR's, for a system rtcp does not run (COBALT's node list
///   `PIC.Core.Cobalt.cbt001_0.cpu`, the scheduler, the archive): only counted;
/// - a key under another prefix beside keys rtcp reads is listed as unknown (not as
///   misspelt); under a parent rtcp never reads (`Sim.Source[1].*` without a second
///   source), only counted.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "rtcp/Parset.h"

namespace rtcp {

/// Unknown keys of one pattern: indices `[n]` become `[*]`, station and antenna-field
/// names (CS001, CS001HBA0) become `*`.
struct UnknownKeyGroup {
  std::string pattern;   ///< e.g. Observation.Beam[*].angel1
  std::string firstKey;  ///< the first such key in the parset
  std::string where;     ///< "file:line" of firstKey
  size_t count = 0;
  std::string nearKey;  ///< the key rtcp reads that it is close to (misspelt?); "" if none
};

/// The unknown keys under one top-level prefix.
struct UnknownPrefix {
  size_t count = 0;
  int firstLine = 0;  ///< the line of the first
};

struct UnknownKeys {
  size_t total = 0;
  std::map<std::string, UnknownPrefix> perPrefix;  ///< top-level prefix -> its unknown keys
  std::vector<UnknownKeyGroup> listed;  ///< misspelt or under no LOFAR prefix, in parset order

  bool empty() const { return total == 0; }
  /// Summarises the keys nothing read in a parset (call after every setting was read).
  static UnknownKeys of(const Parset& parset);
  /// Log lines: one with the counts per prefix, one per listed group.
  std::vector<std::string> describe() const;
};

/// Whether an unknown key's last name is close to one a program reads (an edit or two
/// away, transpositions counted once, or equal but for case): a likely misspelling.
bool isNearMiss(const std::string& name, const std::string& known);

/// The pattern of a key: `[n]` -> `[*]`, station / field names -> `*`.
std::string keyPattern(const std::string& key);

}  // namespace rtcp
