#include "NightlyReport.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rtcp/SampleTime.h"

namespace rtcp::nightly {
namespace {

std::string status(const ObservationResult& r) {
  if (r.skipped) return "NOT RUN";
  if (!r.ok) return "FAILED";
  return r.summary && r.summary->status() == ObservationStatus::kDegraded ? "DEGRADED" : "OK";
}

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

std::string escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

/// "CS001 12/1000 lost (1.20 %)" per station.
std::vector<std::string> lossLines(const ObservationSummary& s) {
  std::vector<std::string> lines;
  for (const StationSummary& st : s.stations)
    lines.push_back(st.name + ": " + std::to_string(st.packetsLost) + " of " +
                    std::to_string(st.packetsExpected) + " packets lost (" +
                    fixed(100 * st.lossFraction, 2) + " %), " + std::to_string(st.packetsReceived) +
                    " received");
  return lines;
}

std::string duration(const ObservationResult& r) {
  const double seconds = r.summary && r.summary->durationSeconds > 0 ? r.summary->durationSeconds
                                                                     : r.ended - r.started;
  std::string text = fixed(seconds, 1) + " s";
  if (r.summary && r.summary->realTimeFactor > 0)
    text += " (real-time factor " + fixed(r.summary->realTimeFactor, 2) + ")";
  return text;
}

std::string startOf(const ObservationResult& r) {
  if (r.summary && !r.summary->start.empty()) return r.summary->start;
  return r.started > 0 ? formatUtc(r.started) + " UTC" : "-";
}

}  // namespace

std::string formatBytes(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) bytes /= 1000, ++unit;
  return fixed(bytes, unit == 0 ? 0 : 2) + " " + units[unit];
}

/// A beam-formed file's figures: "PATH: W / E blocks, L subband-blocks lost, B".
std::string beamFormedLine(const BeamFormedFileSummary& f) {
  return f.path + ": " + std::to_string(f.blocksWritten) + " / " +
         std::to_string(f.blocksExpected) + " blocks, " + std::to_string(f.subbandBlocksLost) +
         " subband-blocks lost, " + formatBytes(double(f.bytes));
}

NightlyReport::NightlyReport(std::string directory, std::string scheduleName, double started)
    : directory_(std::move(directory)), scheduleName_(std::move(scheduleName)), started_(started) {}

void NightlyReport::add(ObservationResult result) {
  results_.push_back(std::move(result));
  write();
}

int NightlyReport::nrFailed() const {
  int failed = 0;
  for (const ObservationResult& r : results_) failed += !r.ok;
  return failed;
}

void NightlyReport::write() const {
  std::filesystem::create_directories(directory_);
  std::ofstream(textPath()) << text();
  std::ofstream(htmlPath()) << html();
}

std::string NightlyReport::link(const std::string& path) const {
  const auto absolute = std::filesystem::weakly_canonical(std::filesystem::absolute(path));
  const auto base = std::filesystem::weakly_canonical(std::filesystem::absolute(directory_));
  const auto relative = absolute.lexically_relative(base);
  if (!relative.empty() && *relative.begin() != "..") return relative.string();
  return absolute.string();
}

std::string NightlyReport::text() const {
  std::ostringstream out;
  out << "rtcp nightly report\nschedule: " << scheduleName_ << "\nstarted:  " << formatUtc(started_)
      << " UTC\nobservations: " << results_.size() << ", failed: " << nrFailed() << "\n";
  for (const ObservationResult& r : results_) {
    out << "\n[" << r.index << "] " << std::filesystem::path(r.entry.parset).filename().string()
        << "  " << status(r) << "\n";
    out << "  parset:          " << r.entry.parset << " (schedule line " << r.entry.line << ")\n";
    if (!r.ok) out << "  reason:          " << r.reason << "\n";
    if (r.skipped) continue;
    out << "  directory:       " << r.directory << "\n";
    out << "  start:           " << startOf(r) << "\n";
    out << "  duration:        " << duration(r) << "\n";
    if (r.exitCode != 0) out << "  observe stderr:  " << r.stderrPath << "\n";
    if (!r.summary) continue;
    const ObservationSummary& s = *r.summary;
    for (const std::string& d : s.degradations) out << "  degraded:        " << d << "\n";
    out << "  data written:    " << formatBytes(double(s.bytesWritten)) << "\n";
    for (const std::string& line : lossLines(s)) out << "  packet loss:     " << line << "\n";
    out << "  blocks dropped:  " << s.blocksDropped
        << " (integrations dropped: " << s.integrationsDropped << ")\n";
    for (const std::string& ms : s.measurementSets) out << "  MeasurementSet:  " << ms << "\n";
    for (const BeamFormedFileSummary& f : s.beamFormedFiles)
      out << "  beam-formed:     " << beamFormedLine(f) << "\n";
    if (!s.beamFormedFiles.empty())
      out << "  beam-formed sent: " << s.beamFormedBlocks.line() << "\n";
    if (!s.recording.directory.empty()) out << "  recording:       " << s.recording.line() << "\n";
    for (const StationDataSummary& d : s.dumps) out << "  dump:            " << d.line() << "\n";
    for (const std::string& png : s.plots) out << "  plot:            " << png << "\n";
  }
  return out.str();
}

std::string NightlyReport::html() const {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>rtcp nightly "
      << escape(formatUtc(started_)) << "</title>\n<style>body{font-family:sans-serif}"
      << "table{border-collapse:collapse}td,th{border:1px solid #aaa;padding:2px 6px}"
      << ".OK{color:green}.FAILED{color:#c00}.NOT{color:#888}img{margin:4px;border:1px solid #ccc}"
      << "</style></head><body>\n<h1>rtcp nightly report</h1>\n<p>schedule "
      << escape(scheduleName_) << ", started " << escape(formatUtc(started_))
      << " UTC: " << results_.size() << " observations, " << nrFailed() << " failed.</p>\n";
  out << "<table><tr><th>#</th><th>parset</th><th>status</th><th>start</th><th>duration</th>"
         "<th>data written</th><th>blocks dropped</th><th>reason</th></tr>\n";
  for (const ObservationResult& r : results_)
    out << "<tr><td><a href=\"#obs" << r.index << "\">" << r.index << "</a></td><td>"
        << escape(std::filesystem::path(r.entry.parset).filename().string()) << "</td><td class=\""
        << status(r).substr(0, status(r).find(' ')) << "\">" << status(r) << "</td><td>"
        << escape(r.skipped ? "-" : startOf(r)) << "</td><td>" << (r.skipped ? "-" : duration(r))
        << "</td><td>" << (r.summary ? formatBytes(double(r.summary->bytesWritten)) : "-")
        << "</td><td>" << (r.summary ? std::to_string(r.summary->blocksDropped) : "-")
        << "</td><td>" << escape(r.ok ? "" : r.reason) << "</td></tr>\n";
  out << "</table>\n";
  for (const ObservationResult& r : results_) {
    out << "<h2 id=\"obs" << r.index << "\">" << r.index << ". "
        << escape(std::filesystem::path(r.entry.parset).filename().string()) << " — " << status(r)
        << "</h2>\n<ul><li>parset: " << escape(r.entry.parset) << "</li>\n";
    if (!r.ok) out << "<li>reason: <b>" << escape(r.reason) << "</b></li>\n";
    if (!r.skipped)
      out << "<li>directory: <a href=\"" << escape(link(r.directory)) << "\">"
          << escape(r.directory) << "</a></li>\n<li>start: " << escape(startOf(r))
          << "</li>\n<li>duration: " << duration(r) << "</li>\n";
    if (r.summary) {
      const ObservationSummary& s = *r.summary;
      out << "<li>data written: " << formatBytes(double(s.bytesWritten)) << "</li>\n";
      out << "<li>blocks dropped: " << s.blocksDropped
          << ", integrations dropped: " << s.integrationsDropped << "</li>\n";
      for (const std::string& line : lossLines(s))
        out << "<li>packet loss " << escape(line) << "</li>\n";
      for (const std::string& ms : s.measurementSets) out << "<li>MS: " << escape(ms) << "</li>\n";
      for (const BeamFormedFileSummary& f : s.beamFormedFiles)
        out << "<li>beam-formed: " << escape(beamFormedLine(f)) << "</li>\n";
      if (!s.beamFormedFiles.empty())
        out << "<li>beam-formed sent by ionproc: " << escape(s.beamFormedBlocks.line())
            << "</li>\n";
      if (!s.recording.directory.empty())
        out << "<li>recording: " << escape(s.recording.line()) << "</li>\n";
      for (const StationDataSummary& d : s.dumps)
        out << "<li>dump: " << escape(d.line()) << "</li>\n";
    }
    out << "</ul>\n";
    if (r.summary)
      for (const std::string& png : r.summary->plots) {
        if (!splitHostPath(png).first.empty()) {
          out << "<p>plot on " << escape(png) << "</p>\n";  // not reachable from here
          continue;
        }
        out << "<a href=\"" << escape(link(png)) << "\"><img src=\"" << escape(link(png))
            << "\" width=\"320\" alt=\"" << escape(std::filesystem::path(png).filename().string())
            << "\"></a>\n";
      }
  }
  out << "</body></html>\n";
  return out.str();
}

}  // namespace rtcp::nightly
