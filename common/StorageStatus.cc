#include "rtcp/StorageStatus.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <iomanip>
#include <sstream>
#include <type_traits>

#include "rtcp/StatusFile.h"
#include "rtcp/StatusWord.h"

namespace rtcp::storage {
namespace {

/// Every field with its key, for writing and reading alike.
template <typename StatusT, typename Visit>
void forEachField(StatusT& s, Visit visit) {
  visit("time", s.wallTime);
  visit("listening", s.listening);
  visit("finished", s.finished);
  visit("measurementSets", s.measurementSets);
  visit("measurementSetsCreated", s.measurementSetsCreated);
  visit("measurementSetsReady", s.measurementSetsReady);
  visit("measurementSetsClosed", s.measurementSetsClosed);
  visit("integrations.expected", s.integrationsExpected);
  visit("blocks.received", s.blocksReceived);
  visit("blocks.rejected", s.blocksRejected);
  visit("integrations.written", s.integrationsWritten);
  visit("integrations.flagged", s.integrationsFlagged);
  visit("backlog", s.backlog);
  visit("backlogBytes", s.backlogBytes);
  visit("bytes.received", s.bytesReceived);
  visit("bytes.written", s.bytesWritten);
  visit("failed", s.failed);
  visit("integrations.lost", s.integrationsLost);
  visit("error", s.error);
  visit("connections.refused", s.connectionsRefused);
  visit("blocks.duplicated", s.blocksDuplicated);
  visit("beamformed.files", s.beamFormedFiles);
  visit("beamformed.blocksExpected", s.beamFormedBlocksExpected);
  visit("beamformed.blocksWritten", s.beamFormedBlocksWritten);
  visit("beamformed.subbandBlocksLost", s.beamFormedSubbandBlocksLost);
  visit("beamformed.bytesWritten", s.beamFormedBytesWritten);
  visit("beamformed.received", s.beamFormedReceived);
  visit("beamformed.rejected", s.beamFormedRejected);
}

}  // namespace

std::string StorageStatus::format() const {
  std::ostringstream out;
  out << std::setprecision(17);
  forEachField(*this, [&](const char* key, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      out << key << '=' << encodeStatusWord(value) << '\n';
    else
      out << key << '=' << value << '\n';
  });
  return out.str();
}

StorageStatus StorageStatus::parse(const std::string& text) {
  const std::map<std::string, std::string> values = ion::parseStatusLines(text);
  StorageStatus status;
  forEachField(status, [&](const char* key, auto& value) {
    const auto it = values.find(key);
    if (it == values.end()) return;
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, std::string>)
      value = decodeStatusWord(it->second);
    else
      ion::parseStatusValue(it->second, value, key);
  });
  return status;
}

StorageStatus StorageStatus::read(const std::string& path) {
  const std::string text = ion::readStatusText(path);
  try {
    return parse(text);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

std::string StorageStatus::formatLine() const {
  std::string line = format();  // numbers only: no spaces
  std::replace(line.begin(), line.end(), '\n', ' ');
  if (!line.empty()) line.pop_back();
  return std::string(kLinePrefix) + line;
}

std::optional<StorageStatus> StorageStatus::parseLine(const std::string& line) {
  if (!line.starts_with(kLinePrefix)) return std::nullopt;
  std::string text = line.substr(kLinePrefix.size());
  std::replace(text.begin(), text.end(), ' ', '\n');
  return parse(text);
}

}  // namespace rtcp::storage
