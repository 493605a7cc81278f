#include "HydraLaunch.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "Executables.h"

namespace rtcp::observe {
namespace {

/// Runs "$@", reporting its start and exit code on standard output. The trap keeps the
/// wrapper alive through the SIGINT that mpiexec forwards to the part's process group,
/// so that it can report how the part ended (a trap, not an ignored signal: the part
/// must still receive SIGINT). The trap comes before the started line: once observe has
/// read that line, a SIGINT no longer ends the wrapper without a report.
const char* kWrapper =
    "trap : INT TERM; echo rtcp-part-started; \"$@\"; code=$?; echo \"rtcp-part-exit $code\"; exit "
    "$code";

constexpr std::string_view kStarted = "rtcp-part-started";
constexpr std::string_view kExit = "rtcp-part-exit ";
constexpr std::string_view kWritten = "rtcp-ms ";
constexpr std::string_view kQuickLook = "rtcp-quicklook ";  ///< ionproc --quicklook -
constexpr std::string_view kWrittenBeamFormed = "rtcp-bf ";

/// The value of key=VALUE in a line of space-separated entries ("" when absent); "path"
/// takes the rest of the line.
std::string field(const std::string& line, const std::string& key) {
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 2;
  if (key == "path") return line.substr(begin);
  return line.substr(begin, line.find(' ', begin) - begin);
}

/// Adds `item`, or replaces the one of its path: a restarted storage-sink reports again
/// what it reopened, and its newest state counts.
template <typename Item>
void keepNewest(std::vector<Item>& items, Item item) {
  const auto same =
      std::find_if(items.begin(), items.end(), [&](const Item& i) { return i.path == item.path; });
  if (same == items.end())
    items.push_back(std::move(item));
  else
    *same = std::move(item);
}

}  // namespace

std::vector<std::string> hydraCommand(const LauncherOptions& options, const std::string& hosts,
                                      int processes, const std::vector<std::string>& command,
                                      bool stopSignalsBlocked) {
  std::vector<std::string> arguments{mpirunExecutable(), "-launcher", options.launcher};
  if (!options.launcherExec.empty())
    arguments.insert(arguments.end(), {"-launcher-exec", options.launcherExec});
  arguments.insert(arguments.end(), {"-hosts", hosts, "-n", std::to_string(processes), "-wdir", "/",
                                     "sh", "-c", kWrapper, "sh"});
  // coreutils' env blocks them and execs the part (ChildStreams::stopSignalsBlocked).
  if (stopSignalsBlocked) arguments.insert(arguments.end(), {"env", "--block-signal=INT,TERM,HUP"});
  arguments.insert(arguments.end(), command.begin(), command.end());
  return arguments;
}

PartOutput::PartOutput(std::string path, int processes)
    : path_(std::move(path)), processes_(processes) {}

bool PartOutput::update() {
  std::ifstream file(path_, std::ios::binary);
  if (!file) return false;
  file.seekg(std::streamoff(offset_));
  std::string added((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  offset_ += added.size();
  partial_ += added;
  const std::optional<ion::IonStatus> before = status_;
  const std::optional<storage::StorageStatus> storageBefore = storageStatus_;
  size_t begin = 0;
  for (size_t end; (end = partial_.find('\n', begin)) != std::string::npos; begin = end + 1)
    take(partial_.substr(begin, end - begin));
  partial_.erase(0, begin);
  return status_ != before || storageStatus_ != storageBefore;
}

void PartOutput::follow(std::string path) {
  update();
  path_ = std::move(path);
  offset_ = 0;
  partial_.clear();
  started_ = 0;
  exitCodes_.clear();
}

void PartOutput::take(const std::string& line) {
  if (line == kStarted) {
    ++started_;
  } else if (line.starts_with(kExit)) {
    exitCodes_.push_back(std::atoi(line.c_str() + kExit.size()));
  } else if (line.starts_with(kWritten)) {
    std::string entries(1, ' ');  // every entry after a space, the first too
    entries.append(line, kWritten.size());
    keepNewest(written_, WrittenMeasurementSet{
                             field(entries, "path"), std::atoi(field(entries, "subband").c_str()),
                             std::atoll(field(entries, "integrations").c_str()),
                             std::atoll(field(entries, "missing").c_str()),
                             std::strtoull(field(entries, "bytes").c_str(), nullptr, 10)});
  } else if (line.starts_with(kQuickLook)) {
    quickLook_ = line.substr(kQuickLook.size());
  } else if (line.starts_with(kWrittenBeamFormed)) {
    std::string entries(1, ' ');
    entries.append(line, kWrittenBeamFormed.size());
    keepNewest(
        beamFormed_,
        WrittenBeamFormedFile{field(entries, "path"), std::atoll(field(entries, "blocks").c_str()),
                              std::atoll(field(entries, "expected").c_str()),
                              std::atoll(field(entries, "lost").c_str()),
                              std::strtoull(field(entries, "bytes").c_str(), nullptr, 10)});
  } else if (line.starts_with('/')) {
    printedPaths_.push_back(line);
  } else {
    try {
      if (auto status = ion::IonStatus::parseLine(line)) status_ = std::move(status);
      if (auto status = storage::StorageStatus::parseLine(line)) storageStatus_ = std::move(status);
      if (auto status = correlator::RankStatus::parseLine(line))
        rankStatuses_[status->rank] = std::move(*status);
    } catch (const std::exception&) {
      // a status line cut short by a part that was killed while writing it
    }
  }
}

std::optional<int> PartOutput::exitCode() const {
  if (int(exitCodes_.size()) < processes_) return std::nullopt;
  const auto failed =
      std::find_if(exitCodes_.begin(), exitCodes_.end(), [](int code) { return code != 0; });
  return failed == exitCodes_.end() ? 0 : *failed;
}

std::string lastProblem(const std::string& logPath) {
  std::ifstream log(logPath);
  std::string lastError, lastLine;
  for (std::string line; std::getline(log, line);) {
    if (const size_t at = line.find(" ERROR "); at != std::string::npos) {
      lastError = line.substr(line.find_first_not_of(' ', at + 7));
    } else if (!line.empty() && !line.starts_with("[mpiexec@") && !line.starts_with("[proxy:") &&
               line.find_first_not_of("= ") != std::string::npos && !line.starts_with("=")) {
      lastLine = line;
    }
  }
  return lastError.empty() ? lastLine : lastError;
}

}  // namespace rtcp::observe
