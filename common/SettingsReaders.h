#pragma once
/// \file SettingsReaders.h
/// The parts of ObservationSettings::fromParset (private to rtcp_common): each reads one
/// group of keys into the settings. Problems are collected, not thrown one at a time, so
/// that a parset's every problem is reported at once.

#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "rtcp/ObservationSettings.h"
#include "rtcp/Parset.h"
#include "rtcp/StationTable.h"

namespace rtcp::settings {

/// Errors and warnings found while reading a parset.
class Problems {
 public:
  Problems(const Parset& parset, std::vector<ParsetWarning>& warnings)
      : parset_(parset), warnings_(warnings) {
    for (const ParsetWarning& w : warnings_) warned_.insert(w.message);
  }

  /// Runs `read`; a ParsetError (or each of ParsetErrors) it throws is recorded. True when
  /// it ran without one.
  template <typename Read>
  bool guard(Read&& read) {
    try {
      read();
      return true;
    } catch (const ParsetErrors& e) {
      errors_.insert(errors_.end(), e.errors().begin(), e.errors().end());
    } catch (const ParsetError& e) {
      errors_.push_back(e);
    }
    return false;
  }
  /// Records an error about a key (at the key's line).
  void error(const std::string& key, const std::string& problem);
  /// Records and logs a warning about a key.
  void warn(const std::string& key, const std::string& problem);
  bool hasErrors() const { return !errors_.empty(); }
  /// Every recorded error, each once.
  std::vector<ParsetError> errors() const;
  /// Throws ParsetErrors with every recorded error, if any.
  void raise() const;

 private:
  const Parset& parset_;
  std::vector<ParsetWarning>& warnings_;
  std::unordered_set<std::string> warned_;  ///< messages in warnings_: linear de-duplication
  std::vector<ParsetError> errors_;
};

/// A value given by the first defined of several keys, and the key.
template <typename T>
struct Given {
  T value{};
  std::string key;
};

/// The first defined key's value; each later defined key whose value (as `same` compares)
/// differs is a warning naming both.
template <typename T, typename Read, typename Same>
std::optional<Given<T>> firstOf(const Parset& p, Problems& problems,
                                const std::vector<std::string>& keys, Read read, Same same) {
  std::optional<Given<T>> first;
  for (const std::string& key : keys) {
    if (!p.isDefined(key)) continue;
    const T value = read(key);
    if (!first) {
      first = Given<T>{value, key};
    } else if (!same(first->value, value)) {
      problems.warn(key, "says " + p.getString(key) + ", but " + first->key + " says " +
                             p.getString(first->key) + ": using " + first->key +
                             " (COBALT's keys win)");
    }
  }
  return first;
}

/// An integer key within [low, high]; fallback when absent.
int intInRange(const Parset& p, const std::string& key, int64_t fallback, int64_t low,
               int64_t high);
/// firstOf for integers within [low, high].
inline std::optional<Given<int64_t>> firstInt(const Parset& p, Problems& problems,
                                              const std::vector<std::string>& keys, int64_t low,
                                              int64_t high) {
  return firstOf<int64_t>(
      p, problems, keys,
      [&](const std::string& key) { return int64_t(intInRange(p, key, 0, low, high)); },
      [](int64_t a, int64_t b) { return a == b; });
}

/// Three ITRF coordinates.
std::array<double, 3> readPosition(const Parset& p, const std::string& key);

/// J2000, AZELGEO or one of casacore's solar-system bodies (SUN, MOON, JUPITER, ...).
bool isDirectionType(const std::string& type);
std::string directionTypeList();

/// Observation id, start and stop time.
void readTimes(const Parset& p, Problems& problems, ObservationSettings& s);
/// Clock, bits, antenna set, band filter.
void readInstrument(const Parset& p, Problems& problems, ObservationSettings& s);
/// Beams (SAPs), their directions and subbands.
void readBeams(const Parset& p, Problems& problems, ObservationSettings& s);
/// What LOFAR records beyond what rtcp processes: campaign, beam targets, analog beam.
void readDescription(const Parset& p, ObservationSettings& s);
/// COBALT's compute nodes: Cobalt.Nodes names them, PIC.Core.Cobalt.<node>.host places each.
void readComputeNodes(const Parset& p, ObservationSettings& s);
/// Antenna fields: positions, ports, beamlets, corrections (needs instrument and beams).
void readStations(const Parset& p, const StationTable& table, Problems& problems,
                  ObservationSettings& s);
/// Channels, block size, integration and the switches, from both generations of keys.
void readProcessing(const Parset& p, Problems& problems, ObservationSettings& s);
/// Superstations (needs the stations).
void readTiedArray(const Parset& p, ObservationSettings& s);
/// Correlated output.
void readOutput(const Parset& p, Problems& problems, ObservationSettings& s);
/// Beam-formed outputs: Stokes settings, TABs and files (needs stations, subbands and the
/// block size). ReadBeamFormed.cc.
void readBeamFormed(const Parset& p, Problems& problems, ObservationSettings& s);
/// A location `HOST:DIR` of `key` split into host and directory; fails naming the key.
std::pair<std::string, std::string> splitLocation(const Parset& p, const std::string& key,
                                                  const std::string& location);
void readSim(const Parset& p, Problems& problems, ObservationSettings& s);
/// Online flagging: BG/P's OLAP.CNProc.online* keys, rtcp's Rtcp.Flagging.* (needs the
/// block size). ReadFlagging.cc.
void readFlagging(const Parset& p, Problems& problems, ObservationSettings& s);

// Writing settings back as parset text.
/// The beam-formed keys (COBALT's generation; WriteBeamFormed.cc).
void writeBeamFormed(const ObservationSettings& s, Parset& p);
std::string formatNumber(double value);
std::string formatBool(bool value);
/// A string as a parset value: quoted when the syntax would read it otherwise.
std::string quoted(const std::string& text);
std::string formatPosition(const std::array<double, 3>& xyz);
std::string formatStrings(const std::vector<std::string>& values);
std::string formatInts(const std::vector<int>& values);

// Key names.
std::string beamKey(size_t beam, const std::string& name);
std::string fieldKey(const std::string& field, const std::string& name);
std::string sourceKey(size_t source, const std::string& name);

}  // namespace rtcp::settings
