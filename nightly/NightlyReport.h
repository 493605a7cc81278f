#pragma once
/// \file NightlyReport.h
/// The report of a night: per observation its status, start, duration, data written,
/// packet loss per station, blocks dropped, MeasurementSets and inspection plots, and
/// for a failure the reason; as report.txt and report.html (thumbnails of the plots).

#include <string>
#include <vector>

#include "ObservationRunner.h"

namespace rtcp::nightly {

class NightlyReport {
 public:
  NightlyReport(std::string directory, std::string scheduleName, double started);

  /// Adds an observation's outcome and rewrites both files (so that a report exists
  /// even when the night is cut short).
  void add(ObservationResult result);
  void write() const;

  const std::vector<ObservationResult>& results() const { return results_; }
  int nrFailed() const;
  std::string textPath() const { return directory_ + "/report.txt"; }
  std::string htmlPath() const { return directory_ + "/report.html"; }

 private:
  std::string text() const;
  std::string html() const;
  /// A path as the report links it: relative to the report directory when inside it.
  std::string link(const std::string& path) const;

  std::string directory_;
  std::string scheduleName_;
  double started_;
  std::vector<ObservationResult> results_;
};

/// Bytes as "1.23 MB".
std::string formatBytes(double bytes);

}  // namespace rtcp::nightly
