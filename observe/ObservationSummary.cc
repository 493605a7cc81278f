#include "ObservationSummary.h"

#include <cstdio>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace rtcp::observe {
namespace {

std::string jsonNumber(double value) {
  std::ostringstream out;
  out << std::setprecision(12) << value;
  return out.str();
}

std::string jsonList(const std::vector<std::string>& items, const std::string& indent) {
  if (items.empty()) return "[]";
  std::string text = "[\n";
  for (size_t i = 0; i < items.size(); ++i)
    text += indent + "  " + jsonString(items[i]) + (i + 1 < items.size() ? ",\n" : "\n");
  return text + indent + "]";
}

std::string stationJson(const StationSummary& s) {
  return "{\"name\": " + jsonString(s.name) + ", \"packetsReceived\": " + std::to_string(s.packetsReceived) +
         ", \"packetsExpected\": " + std::to_string(s.packetsExpected) +
         ", \"packetsLost\": " + std::to_string(s.packetsLost) + ", \"lossFraction\": " + jsonNumber(s.lossFraction) +
         "}";
}

}  // namespace

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string ObservationSummary::toJson() const {
  std::ostringstream j;
  j << "{\n"
    << "  \"observationId\": " << observationId << ",\n"
    << "  \"parset\": " << jsonString(parset) << ",\n"
    << "  \"status\": " << jsonString(ok ? "ok" : "failed") << ",\n"
    << "  \"reason\": " << jsonString(reason) << ",\n"
    << "  \"start\": " << jsonString(start) << ",\n"
    << "  \"stop\": " << jsonString(stop) << ",\n"
    << "  \"durationSeconds\": " << jsonNumber(durationSeconds) << ",\n"
    << "  \"wallSeconds\": " << jsonNumber(wallSeconds) << ",\n"
    << "  \"realTimeFactor\": " << jsonNumber(realTimeFactor) << ",\n"
    << "  \"bytesWritten\": " << bytesWritten << ",\n"
    << "  \"measurementSets\": " << jsonList(measurementSets, "  ") << ",\n"
    << "  \"stations\": [";
  for (size_t i = 0; i < stations.size(); ++i)
    j << (i ? ",\n    " : "\n    ") << stationJson(stations[i]);
  j << (stations.empty() ? "],\n" : "\n  ],\n")
    << "  \"blocksDropped\": " << blocksDropped << ",\n"
    << "  \"integrationsDropped\": " << integrationsDropped << ",\n"
    << "  \"exitCodes\": {";
  size_t n = 0;
  for (const auto& [part, code] : exitCodes) j << (n++ ? ", " : "") << jsonString(part) << ": " << code;
  j << "},\n"
    << "  \"cpuSeconds\": {";
  n = 0;
  for (const auto& [part, seconds] : cpuSeconds) j << (n++ ? ", " : "") << jsonString(part) << ": " << jsonNumber(seconds);
  j << "},\n"
    << "  \"plots\": " << jsonList(plots, "  ") << ",\n"
    << "  \"warnings\": " << jsonList(warnings, "  ") << "\n"
    << "}\n";
  return j.str();
}

std::string ObservationSummary::toText() const {
  std::ostringstream t;
  t << "observation " << observationId << ": " << (ok ? "ok" : "FAILED") << (reason.empty() ? "" : " (" + reason + ")")
    << "\n  parset        " << parset << "\n  time          " << start << " .. " << stop << " UTC ("
    << durationSeconds << " s; " << std::setprecision(3) << wallSeconds << " s wall, real-time factor "
    << realTimeFactor << ")\n  written       " << bytesWritten << " bytes in " << measurementSets.size()
    << " MeasurementSet(s)\n";
  for (const std::string& ms : measurementSets) t << "    " << ms << "\n";
  t << "  dropped       " << blocksDropped << " blocks (ranks behind), " << integrationsDropped
    << " integrations (not stored)\n  stations      packets received / expected, lost\n";
  for (const StationSummary& s : stations)
    t << "    " << std::left << std::setw(8) << s.name << std::right << " " << s.packetsReceived << " / "
      << s.packetsExpected << ", " << s.packetsLost << " (" << std::setprecision(3) << 100 * s.lossFraction << " %)\n";
  t << "  exit codes   ";
  for (const auto& [part, code] : exitCodes) t << " " << part << "=" << code;
  t << "\n";
  if (!cpuSeconds.empty()) {
    t << "  cpu seconds  ";
    for (const auto& [part, seconds] : cpuSeconds) t << " " << part << "=" << std::setprecision(3) << seconds;
    t << "\n";
  }
  for (const std::string& plot : plots) t << "  plot          " << plot << "\n";
  for (const std::string& warning : warnings) t << "  warning       " << warning << "\n";
  return t.str();
}

void ObservationSummary::write(const std::string& directory) const {
  for (const auto& [name, text] : {std::pair{"summary.txt", toText()}, std::pair{"summary.json", toJson()}}) {
    const std::string path = directory + "/" + name;
    std::ofstream file(path);
    file << text;
    file.close();
    if (!file) throw std::runtime_error("cannot write " + path);
  }
}

}  // namespace rtcp::observe
