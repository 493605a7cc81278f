#include "StationDataListing.h"

#include <filesystem>
#include <optional>

#include "rtcp/Files.h"
#include "rtcp/SampleTime.h"
#include "rtcp/TriggerProtocol.h"

namespace fs = std::filesystem;

namespace rtcp::observe {

uint64_t recordingBytes(const std::string& directory) {
  uint64_t bytes = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error))
    if (entry.path().extension() == ".rsp") bytes += entry.file_size(error);
  return bytes;
}

StationDataSummary describeRecording(const std::string& directory, const ObservationSettings& s,
                                     const std::vector<StationSummary>& stations) {
  StationDataSummary d;
  d.directory = directory;
  d.parset = directory + "/replay.parset";
  d.from = formatUtc(s.startTime);
  d.to = formatUtc(s.stopTime);
  d.nrSubbands = s.nrSubbands();
  d.bytes = recordingBytes(directory);
  for (const StationSummary& st : stations) {
    d.stations.push_back(st.name);
    d.packets += st.packetsRecorded;
    d.packetsNotRecorded += st.packetsNotRecorded;
  }
  d.status = d.packetsNotRecorded ? "partial" : "complete";
  return d;
}

StationDataSummary describeDump(const std::string& directory) {
  StationDataSummary d;
  d.directory = directory;
  d.parset = directory + "/dump.parset";
  const ObservationSettings s = ObservationSettings::fromFile(d.parset);
  const SampleClock clock(s.clockMHz);  // its blocks: the first sample of each, and the end
  d.from = formatUtc(clock.unixTime(s.blockStartSample(0)));
  d.to = formatUtc(clock.unixTime(s.blockStartSample(s.nrBlocks())));
  d.nrSubbands = s.nrSubbands();
  d.bytes = recordingBytes(directory);
  const std::optional<std::string> text = tryReadFile(directory + "/" + kDumpAnswerFile);
  if (!text) {
    d.status = "unknown";
    d.missing.push_back(std::string("no ") + kDumpAnswerFile + ": rtcp-trigger did not finish");
    return d;
  }
  TriggerAnswer answer;
  try {
    answer = TriggerAnswer::parse(*text);
  } catch (const std::exception& e) {
    d.status = "unknown";
    d.missing.push_back(directory + "/" + kDumpAnswerFile + ": " + e.what());
    return d;
  }
  d.status = answer.status;
  for (const TriggerAnswer::Recording& r : answer.recordings) {
    if (d.stations.empty() || d.stations.back() != r.station) d.stations.push_back(r.station);
    d.packets += r.packets;
    d.packetsNotRecorded += r.notRecorded;
  }
  for (const TriggerAnswer::Gap& g : answer.gaps) d.missing.push_back(g.describe(clock));
  if (!answer.error.empty()) d.missing.push_back(answer.error);
  return d;
}

}  // namespace rtcp::observe
