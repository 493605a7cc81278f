#pragma once
/// \file Schedule.h
/// A night's schedule: the parsets to observe, in order, each with the time it starts.

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rtcp::nightly {

/// An error in a schedule file, naming the file and line.
class ScheduleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One line of a schedule.
struct ScheduleEntry {
  std::string parset;                    ///< absolute (or as given when absolute) parset path
  int line = 0;                          ///< line in the schedule file
  std::optional<double> scheduledStart;  ///< Unix seconds UTC given on the line
  std::optional<double> parsetStart;     ///< the parset's Observation.startTime, when readable
  std::optional<double> parsetStop;      ///< the parset's Observation.stopTime, when readable
  double plannedStart = 0;               ///< when nightly starts it (after any --now shift)
  bool startNow = false;                 ///< run observe with --now (its own start time moves)

  /// The observation's length from the parset, 0 when unknown.
  double duration() const { return parsetStart && parsetStop ? *parsetStop - *parsetStart : 0.0; }
};

/// The schedule file format: one observation per line, `[START] PARSET`, where START is
/// an optional UTC time 'YYYY-MM-DD HH:MM:SS' (or with T, quotes allowed) and PARSET a
/// path relative to the schedule file; `#` starts a comment. Without START the parset's
/// Observation.startTime is used.
class Schedule {
 public:
  /// Reads and checks a schedule; throws ScheduleError naming file:line.
  static Schedule fromFile(const std::string& path);
  static Schedule fromString(const std::string& text, const std::string& baseDirectory,
                             const std::string& name = "<schedule>");

  /// Plans the start times. now = false: each entry at its own start time. now = true:
  /// the whole schedule shifted so that the first entry starts at `nowTime` (every entry
  /// then runs observe with --now). An entry without a known start follows the one
  /// before it.
  void plan(bool now, double nowTime);

  const std::vector<ScheduleEntry>& entries() const { return entries_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<ScheduleEntry> entries_;
};

}  // namespace rtcp::nightly
