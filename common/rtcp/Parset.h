#pragma once
/// \file Parset.h
/// LOFAR parameter sets: `key = value` lines, `#` comments, quoted strings,
/// vectors `[a, b]` with ranges `[100..107]`, repeats `[4*0]` and nesting. As in LOFAR's
/// ParameterSet, a value continues over the following lines while its brackets are open
/// (`Cobalt.Nodes = [` ... `]`) or after a line that ends in a backslash; continuation
/// lines are joined with a blank. SAS task specifications' `ObsSW.` prefix is removed from
/// every key, and the OnlineControl copies of COBALT's and BG/P's keys
/// (`Observation.ObservationControl.OnlineControl.Cobalt.X`, `...OLAP.X`) also answer as
/// `Cobalt.X` / `OLAP.X` where the parset does not give those itself (as MAC's
/// OnlineControl hands them to the correlator).

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rtcp {

/// An error in a parset, naming the file, line and key where it lies.
class ParsetError : public std::runtime_error {
 public:
  ParsetError(const std::string& file, int line, const std::string& key,
              const std::string& problem);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }

 private:
  std::string file_;
  int line_;
  std::string key_;

 protected:
  /// A ParsetError with the place of `first` and its own message.
  ParsetError(const ParsetError& first, const std::string& message);
};

/// Several problems found at once (a parset's syntax errors, or every bad setting of an
/// observation). what() lists them one per line; file(), line() and key() are the first's.
class ParsetErrors : public ParsetError {
 public:
  explicit ParsetErrors(std::vector<ParsetError> errors);
  const std::vector<ParsetError>& errors() const { return errors_; }

 private:
  std::vector<ParsetError> errors_;
};

/// What reading a parset does with a syntax error.
enum class SyntaxErrors {
  kThrow,  ///< throw ParsetErrors naming every bad line
  kKeep,   ///< skip the bad line and keep the error in Parset::syntaxErrors()
};

/// A parsed parameter set. Values are kept as text and converted by typed getters,
/// which remember which keys were read so that unread (unknown or misspelled) keys
/// can be reported.
class Parset {
 public:
  Parset() = default;
  static Parset fromFile(const std::string& path, SyntaxErrors mode = SyntaxErrors::kThrow);
  static Parset fromString(const std::string& text, const std::string& name = "<string>",
                           SyntaxErrors mode = SyntaxErrors::kThrow);
  /// The syntax errors of a parset read with SyntaxErrors::kKeep, in line order.
  const std::vector<ParsetError>& syntaxErrors() const { return syntaxErrors_; }

  /// Adds or replaces a key (line 0: set by a program, not read from a file).
  void set(const std::string& key, const std::string& value);
  /// Whether the key is given (the key counts as asked for, see askedKeys()).
  bool isDefined(const std::string& key) const;

  std::string getString(const std::string& key) const;
  std::string getString(const std::string& key, const std::string& fallback) const;
  bool getBool(const std::string& key) const;
  bool getBool(const std::string& key, bool fallback) const;
  int64_t getInt(const std::string& key) const;
  int64_t getInt(const std::string& key, int64_t fallback) const;
  double getDouble(const std::string& key) const;
  double getDouble(const std::string& key, double fallback) const;
  std::vector<std::string> getStringVector(const std::string& key) const;
  std::vector<std::string> getStringVector(const std::string& key,
                                           const std::vector<std::string>& fallback) const;
  std::vector<int64_t> getIntVector(const std::string& key) const;
  std::vector<int64_t> getIntVector(const std::string& key,
                                    const std::vector<int64_t>& fallback) const;
  std::vector<double> getDoubleVector(const std::string& key) const;
  std::vector<double> getDoubleVector(const std::string& key,
                                      const std::vector<double>& fallback) const;
  /// Nested vectors `[[1,2],[3,4]]`: each inner vector's elements as strings.
  std::vector<std::vector<std::string>> getNestedStringVector(const std::string& key) const;
  /// A UTC time string ('2026-11-22 20:00:00', optional fractional seconds, or ISO 'T')
  /// as Unix seconds.
  double getTime(const std::string& key) const;
  /// The times getTime() accepts (Unix seconds): what an RSP packet's unsigned 32-bit
  /// timestamp can stamp, 1970-01-01 .. 2106-02-07 06:28:15 UTC.
  static constexpr double kEarliestTime = 0;
  static constexpr double kLatestTime = 4294967295.0;

  /// Keys that no getter has read, in file order (for "unknown key" reports).
  std::vector<std::string> unusedKeys() const;
  /// Keys that a getter or isDefined() asked for, given or not (the keys a program
  /// knows), sorted.
  std::vector<std::string> askedKeys() const;
  /// "file:line" of a key, for messages.
  std::string where(const std::string& key) const;
  int lineOf(const std::string& key) const;
  const std::string& name() const { return name_; }
  /// All keys with the given prefix (marks nothing as read).
  std::vector<std::string> keysWithPrefix(const std::string& prefix) const;
  /// The parset as text, one `key = value` line per key (for HISTORY and logs).
  std::string toString() const;

  /// Throws a ParsetError for this key.
  [[noreturn]] void fail(const std::string& key, const std::string& problem) const;

 private:
  struct Entry {
    std::string value;
    int line = 0;
    int order = 0;
  };
  const Entry& entry(const std::string& key) const;
  void markRead(const std::string& key) const;
  /// Records the key as asked for; true when it is defined.
  bool ask(const std::string& key) const;
  /// A key given twice: the later value wins (summarised in one log line per parset).
  struct RepeatedKey {
    std::string key;
    int line = 0, firstLine = 0;
  };
  void add(const std::string& key, std::string value, int line, std::vector<RepeatedKey>& repeats);
  void adoptLofarKeys(std::vector<RepeatedKey>& repeats);
  void logRepeats(const std::vector<RepeatedKey>& repeats) const;

  std::string name_ = "<parset>";
  std::map<std::string, Entry> entries_;
  std::vector<ParsetError> syntaxErrors_;
  mutable std::set<std::string> read_;
  mutable std::set<std::string> asked_;
  mutable std::mutex readMutex_;
  int nextOrder_ = 0;

 public:
  Parset(const Parset& other);
  Parset& operator=(const Parset& other);
  Parset(Parset&&) noexcept;
  Parset& operator=(Parset&&) noexcept;
};

/// Expands a parset vector text (`[1..3, 2*5]`) into its element strings.
/// Throws std::invalid_argument with the reason on a syntax error.
std::vector<std::string> expandVector(const std::string& text);

}  // namespace rtcp
