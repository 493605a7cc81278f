#include "rtcp/TriggerProtocol.h"

#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace rtcp {
namespace {

constexpr const char* kRequestTag = "rtcp-trigger-request 1";
constexpr const char* kAnswerTag = "rtcp-trigger-answer 1";

/// The lines of a message after its first (which must be `tag`), up to `end`.
std::vector<std::string> bodyLines(const std::string& text, const std::string& tag) {
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != tag)
    throw std::runtime_error("line 1: expected '" + tag + "', got '" + line + "'");
  std::vector<std::string> lines;
  while (std::getline(in, line)) {
    if (line == "end") return lines;
    lines.push_back(line);
  }
  throw std::runtime_error("no 'end' line");
}

/// The word before the first blank, and the rest.
std::pair<std::string, std::string> split(const std::string& line) {
  const size_t blank = line.find(' ');
  if (blank == std::string::npos) return {line, ""};
  return {line.substr(0, blank), line.substr(blank + 1)};
}

[[noreturn]] void malformed(size_t index, const std::string& line, const std::string& why) {
  throw std::runtime_error("line " + std::to_string(index + 2) + " '" + line + "': " + why);
}

}  // namespace

std::string TriggerRequest::format() const {
  std::ostringstream out;
  out << std::setprecision(17) << kRequestTag << "\nfrom " << from << "\nto " << to << "\n";
  for (const std::string& station : stations) out << "station " << station << "\n";
  out << "directory " << directory << "\nend\n";
  return out.str();
}

TriggerRequest TriggerRequest::parse(const std::string& text) {
  TriggerRequest r;
  bool from = false, to = false;
  const std::vector<std::string> lines = bodyLines(text, kRequestTag);
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto [key, value] = split(lines[i]);
    std::istringstream in(value);
    if (key == "from" || key == "to") {
      double t = 0;
      if (!(in >> t) || !(in >> std::ws).eof()) malformed(i, lines[i], "not a time");
      (key == "from" ? r.from : r.to) = t;
      (key == "from" ? from : to) = true;
    } else if (key == "station") {
      if (value.empty() || value.find(' ') != std::string::npos)
        malformed(i, lines[i], "not a station name");
      r.stations.push_back(value);
    } else if (key == "directory") {
      r.directory = value;
    } else {
      malformed(i, lines[i], "unknown item");
    }
  }
  if (!from || !to || r.directory.empty())
    throw std::runtime_error("a request needs 'from', 'to' and 'directory'");
  if (r.directory[0] != '/') throw std::runtime_error("the directory must be absolute");
  return r;
}

std::string TriggerAnswer::format() const {
  std::ostringstream out;
  out << kAnswerTag << "\nstatus " << status << "\n";
  if (!error.empty()) {
    std::string oneLine = error;
    for (char& c : oneLine)
      if (c == '\n') c = ' ';
    out << "error " << oneLine << "\n";
  }
  if (status != "refused") {
    out << "blocks " << firstBlock << " " << nrBlocks << "\nleadin " << leadInBlocks << "\nsamples "
        << firstSample << " " << endSample << "\n";
    for (const Recording& r : recordings)
      out << "recording " << r.station << " " << r.stream << " " << r.packets << " " << r.bytes
          << " " << r.notRecorded << " " << r.path << "\n";
    for (const Gap& g : gaps)
      out << "gap " << g.station << " " << g.stream << " " << g.firstSample << " " << g.endSample
          << " " << g.why << "\n";
  }
  out << "end\n";
  return out.str();
}

TriggerAnswer TriggerAnswer::parse(const std::string& text) {
  TriggerAnswer a;
  const std::vector<std::string> lines = bodyLines(text, kAnswerTag);
  for (size_t i = 0; i < lines.size(); ++i) {
    const auto [key, value] = split(lines[i]);
    std::istringstream in(value);
    bool ok = true;
    if (key == "status") {
      a.status = value;
      ok = value == "complete" || value == "partial" || value == "refused";
    } else if (key == "error") {
      a.error = value;
    } else if (key == "blocks") {
      ok = bool(in >> a.firstBlock >> a.nrBlocks);
    } else if (key == "leadin") {
      ok = bool(in >> a.leadInBlocks) && a.leadInBlocks >= 0;
    } else if (key == "samples") {
      ok = bool(in >> a.firstSample >> a.endSample);
    } else if (key == "recording") {
      Recording r;
      ok = bool(in >> r.station >> r.stream >> r.packets >> r.bytes >> r.notRecorded >> std::ws);
      std::getline(in, r.path);
      ok = ok && !r.path.empty();
      a.recordings.push_back(r);
    } else if (key == "gap") {
      Gap g;
      ok = bool(in >> g.station >> g.stream >> g.firstSample >> g.endSample >> std::ws);
      std::getline(in, g.why);
      a.gaps.push_back(g);
    } else {
      ok = false;
    }
    if (!ok) malformed(i, lines[i], "malformed");
  }
  return a;
}

std::string TriggerAnswer::Gap::describe(const SampleClock& clock) const {
  return station + " stream " + std::to_string(stream) + " " +
         formatUtc(clock.unixTime(firstSample)) + " .. " + formatUtc(clock.unixTime(endSample)) +
         " UTC: " + why;
}

std::string readTriggerMessage(Stream& stream) {
  std::string text;
  char buffer[4096];
  while (text.size() < 4 || text.compare(text.size() - 4, 4, "end\n") != 0 ||
         (text.size() > 4 && text[text.size() - 5] != '\n')) {
    if (text.size() > kMaxTriggerMessageBytes)
      throw StreamError("a trigger message longer than " + std::to_string(kMaxTriggerMessageBytes) +
                        " bytes");
    const size_t n = stream.read(buffer, sizeof buffer);
    if (n == 0) throw StreamError("the trigger connection ended inside a message");
    text.append(buffer, n);
  }
  return text;
}

}  // namespace rtcp
