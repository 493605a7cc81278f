#include "rtcp/StorageStatus.h"

#include "rtcp/StatusText.h"

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
  StatusWriter out;
  forEachField(*this, [&](const char* key, const auto& value) { out.add(key, value); });
  if (!beamFormedFileNames.empty()) {
    out.addList("beamformed.fileNames", beamFormedFileNames);
    out.addList("beamformed.fileBlocks", beamFormedFileBlocks);
    out.addList("beamformed.fileSubbandBlocksLost", beamFormedFileSubbandBlocksLost);
  }
  return out.text();
}

StorageStatus StorageStatus::parse(const std::string& text) {
  const StatusReader in(text);
  StorageStatus status;
  forEachField(status, [&](const char* key, auto& value) { in.take(key, value); });
  in.takeList("beamformed.fileNames", status.beamFormedFileNames);
  in.takeList("beamformed.fileBlocks", status.beamFormedFileBlocks);
  in.takeList("beamformed.fileSubbandBlocksLost", status.beamFormedFileSubbandBlocksLost);
  const size_t files = status.beamFormedFileNames.size();
  if (status.beamFormedFileBlocks.size() != files ||
      status.beamFormedFileSubbandBlocksLost.size() != files)
    throw std::runtime_error(
        "status keys beamformed.fileNames, .fileBlocks and "
        ".fileSubbandBlocksLost: lists of different lengths");
  return status;
}

StorageStatus StorageStatus::read(const std::string& path) { return readStatusFile(path, &parse); }

std::string StorageStatus::formatLine() const { return statusLine(kLinePrefix, format()); }

std::optional<StorageStatus> StorageStatus::parseLine(const std::string& line) {
  return parseStatusLine(kLinePrefix, line, &parse);
}

}  // namespace rtcp::storage
