#include "NightlyConsole.h"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "rtcp/Files.h"
#include "rtcp/Logger.h"
#include "rtcp/ObservationSummary.h"
#include "rtcp/SampleTime.h"
#include "rtcp/WallClock.h"

namespace rtcp::nightly {
namespace {

namespace fs = std::filesystem;

constexpr uintmax_t kMaxFileBytes = uintmax_t(64) << 20;

const std::map<std::string, std::string>& contentTypes() {
  static const std::map<std::string, std::string> types{{".html", "text/html; charset=utf-8"},
                                                        {".txt", "text/plain; charset=utf-8"},
                                                        {".log", "text/plain; charset=utf-8"},
                                                        {".json", "application/json"},
                                                        {".png", "image/png"}};
  return types;
}

std::string firstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

}  // namespace

NightlyConsole::NightlyConsole(const console::ConsoleAddress& address, const Schedule& schedule,
                               std::string reportDirectory)
    : host_(address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host),
      scheduleName_(schedule.name()),
      reportDirectory_(std::move(reportDirectory)) {
  for (const ScheduleEntry& entry : schedule.entries())
    observations_.push_back(Observation{entry, "waiting", "", "", ""});
  server_ = std::make_unique<console::ConsoleServer>(
      address, [this](const std::string& path) { return respond(path); });
  RTCP_LOG_INFO("nightly", "console at " << server_->url());
}

NightlyConsole::~NightlyConsole() { server_.reset(); }

void NightlyConsole::running(int index, const std::string& directory) {
  std::lock_guard lock(mutex_);
  Observation& o = observations_.at(size_t(index - 1));
  o.state = "running";
  o.directory = directory;
}

void NightlyConsole::finished(const ObservationResult& result) {
  std::lock_guard lock(mutex_);
  Observation& o = observations_.at(size_t(result.index - 1));
  o.directory = result.directory;
  o.state = result.skipped ? "not run" : result.ok ? "done" : "failed";
  o.reason = result.ok ? "" : result.reason;
  if (result.summary) {
    std::ostringstream outcome;
    outcome << toString(result.summary->status()) << ", " << result.summary->integrationsStored
            << " of " << result.summary->integrationsExpected << " integrations stored, "
            << result.summary->measurementSets.size() << " MSs";
    o.outcome = outcome.str();
  }
}

void NightlyConsole::nightFinished() {
  std::lock_guard lock(mutex_);
  finished_ = true;
}

std::string NightlyConsole::json(double now) const {
  std::lock_guard lock(mutex_);
  std::ostringstream out;
  out << std::setprecision(15) << "{\n  \"time\": " << now
      << ",\n  \"schedule\": " << jsonString(scheduleName_)
      << ",\n  \"reportDirectory\": " << jsonString(reportDirectory_)
      << ",\n  \"finished\": " << (finished_ ? "true" : "false") << ",\n  \"observations\": [";
  for (size_t i = 0; i < observations_.size(); ++i) {
    const Observation& o = observations_[i];
    // A running observation's console, as its observe wrote it once it listened.
    const std::string console =
        o.state == "running" && !o.directory.empty() ? firstLine(o.directory + "/console.url") : "";
    out << (i ? ",\n    " : "\n    ") << "{\"index\": " << i + 1
        << ", \"parset\": " << jsonString(o.entry.parset) << ", \"line\": " << o.entry.line
        << ", \"plannedStart\": " << jsonString(formatUtc(o.entry.plannedStart))
        << ", \"state\": " << jsonString(o.state) << ", \"directory\": " << jsonString(o.directory)
        << ", \"console\": " << (console.empty() ? "null" : jsonString(console))
        << ", \"reason\": " << jsonString(o.reason) << ", \"outcome\": " << jsonString(o.outcome)
        << "}";
  }
  out << "]\n}\n";
  return out.str();
}

std::optional<console::ConsoleResponse> NightlyConsole::reportFile(const std::string& path) const {
  const std::string prefix = "/report/";
  if (!path.starts_with(prefix)) return std::nullopt;
  const fs::path relative = fs::path(path.substr(prefix.size())).lexically_normal();
  if (relative.empty() || relative.is_absolute() || *relative.begin() == "..") return std::nullopt;
  const auto type = contentTypes().find(relative.extension().string());
  if (type == contentTypes().end()) return std::nullopt;
  std::error_code error;
  const fs::path root = fs::canonical(reportDirectory_, error);
  if (error) return std::nullopt;
  const fs::path file = fs::canonical(root / relative, error);  // symbolic links resolved
  if (error || !fs::is_regular_file(file, error)) return std::nullopt;
  const auto [end, rest] = std::mismatch(root.begin(), root.end(), file.begin(), file.end());
  if (end != root.end()) return std::nullopt;  // outside the report directory
  if (fs::file_size(file, error) > kMaxFileBytes || error) return std::nullopt;
  std::optional<std::string> body = tryReadFile(file.string());
  if (!body) return std::nullopt;
  return console::ConsoleResponse{200, type->second, std::move(*body)};
}

std::optional<console::ConsoleResponse> NightlyConsole::respond(const std::string& path) const {
  if (path == "/schedule.json")
    return console::ConsoleResponse{200, "application/json", json(wallClock())};
  if (path == "/" || path == "/index.html") {
    return console::ConsoleResponse{
        200, "text/html; charset=utf-8",
        console::pageWithDocument(console::schedulePage(), json(wallClock()))};
  }
  return reportFile(path);
}

}  // namespace rtcp::nightly
